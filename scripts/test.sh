#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the whole test suite: installs what is missing (scripts/deps.sh --tests), builds, then runs
# every test with CTest, then the reader fuzzers for a bounded time (scripts/fuzz.sh, a clang
# build in build-fuzz/). The closing summary lists each skipped test with its reason.
source "$(dirname "$0")/script_args.sh"
script_args "$@"
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
junit="$PWD/build/ctest-results.xml"
rc=0
(cd build && ctest --output-on-failure --timeout 900 -j2 --output-junit "$junit") || rc=$?
if ((rc == 0)); then
  bash scripts/fuzz.sh --seconds 30 || rc=$?
fi
echo
python3 scripts/skipped_tests.py "$junit" || true
exit "$rc"
