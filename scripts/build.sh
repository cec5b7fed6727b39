#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures (once) and builds the release tree in build/. Idempotent.
#
#   build.sh              everything, tests included (what scripts/test.sh needs)
#   build.sh --main-job   what the main job runs and what `cmake --install build` and
#                         `cpack -G DEB` install: HPROF, the JVMPI runtime, the sample agent, the
#                         demo and jvmprof (no tests)
# Installs what is missing first (scripts/deps.sh, with --main-job for --main-job).
source "$(dirname "$0")/script_args.sh"
script_args_help "$@"
targets=()
deps=--tests
case "${1:-}" in
  "") ;;
  --main-job)
    targets=(hprof hprof_runtime jvmpi_sample java_demo jvmprof)
    deps=--main-job
    ;;
  *)
    echo "build.sh: unexpected argument '$1' (see build.sh --help)" >&2
    exit 2
    ;;
esac
if (($# > 1)); then
  echo "build.sh: unexpected argument '$2' (see build.sh --help)" >&2
  exit 2
fi
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh "$deps"
if [ ! -f build/build.ninja ]; then
  # ccache, when the machine has it, makes rebuilds of other checkouts (CI's clean clone) cheap.
  launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJVMPROF_WERROR=ON "${launcher[@]}"
fi
cmake --build build ${targets[@]+--target "${targets[@]}"}
