#!/usr/bin/env bash
# One command for a newcomer: installs what is missing, builds everything, and runs the main job
# (the bundled demo application under a profiler), leaving its report in demo-output/.
source "$(dirname "$0")/script_args.sh"
script_args "$@"
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh --main-job
bash scripts/run-demo.sh
