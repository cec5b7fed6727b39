#!/usr/bin/env bash
# Configures (once) and builds the release tree in build/. Idempotent.
source "$(dirname "$0")/script_args.sh"
script_args "$@"
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJVMPROF_WERROR=ON
fi
cmake --build build
