#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A Release build (-O3) with warnings as errors of the given targets, in a tree of its own beside
# the suite's build: GCC warns at -O3 where it does not at -O2 (a -Wrestrict false positive in
# src/jvmpi once), and a user's or a packager's Release build must not stop there. Configured
# once, rebuilt incrementally; ccache when the machine has it.
#
#   release_build_test.sh SOURCE_DIR BINARY_DIR TARGET...
set -euo pipefail
if (($# < 3)); then
  echo "release_build_test.sh: give the source directory, the build tree and targets" >&2
  exit 2
fi
source_dir=$1
tree=$2/release-werror
shift 2
launcher=()
if command -v ccache > /dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
if [[ ! -f "$tree/build.ninja" ]]; then
  cmake -S "$source_dir" -B "$tree" -G Ninja -DCMAKE_BUILD_TYPE=Release -DJVMPROF_WERROR=ON \
    "${launcher[@]}" > "$tree.configure.log" 2>&1 || { cat "$tree.configure.log"; exit 1; }
fi
# Two jobs: the test holds both of ctest -j2's slots (PROCESSORS 2), so nothing runs beside it.
cmake --build "$tree" -j2 --target "$@"
echo "ok: Release -Werror build of $*"
