#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One command for a newcomer: installs what the main job lacks (scripts/deps.sh --main-job; the
# tests' extra packages are left to scripts/test.sh), builds the agents, jvmprof, the sample agent
# and the demo (scripts/build.sh --main-job: everything `cmake --install build` and
# `cpack -G DEB` install, not the tests), and runs the main job (scripts/run-demo.sh: the demo
# application under HPROF), leaving its report and flame graphs in demo-output/.
# Idempotent; how long it takes: README.md, "Set-up cost".
source "$(dirname "$0")/script_args.sh"
script_args "$@"
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh --main-job
bash scripts/run-demo.sh
