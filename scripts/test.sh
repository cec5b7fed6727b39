#!/usr/bin/env bash
# Runs the whole test suite: installs what is missing, builds, then runs every test with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
cd build
ctest --output-on-failure --timeout 900 -j2
