#!/usr/bin/env bash
# Runs the whole test suite: installs what is missing, builds, then runs every test with CTest,
# then the reader fuzzers for a bounded time (scripts/fuzz.sh, a clang build in build-fuzz/).
source "$(dirname "$0")/script_args.sh"
script_args "$@"
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
(cd build && ctest --output-on-failure --timeout 900 -j2)
bash scripts/fuzz.sh --seconds 30
