#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# RequestEvent(OBJECT_ALLOC / OBJECT_DUMP) per call on heaps of 100,000 and 1,000,000 live
# objects (bench/objects: request_agent.c on benchobjects.HeldObjects), on JDK 17 and 25, this
# build beside BEFORE_BUILD_DIR's libjvmpi.so when given (e.g. a build of an older commit),
# interleaved. Builds nothing: cmake --build build first.
#
# Usage: bench/run-object-request-bench.sh
# Environment: BUILD_DIR (default build), BEFORE_BUILD_DIR (optional), RUNS (default 3),
#              SIZES (comma-separated object counts, default 100000,1000000), CALLS (requests of
#              each kind per run, default 200), BEFORE_CALLS (the same for the older build, default
#              20: each of its calls walks the heap), AA=1 (this build twice: the A/A row).
source "$(dirname "$0")/../scripts/script_args.sh"
script_args "$@"
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 bench/objects/bench.py --build "${BUILD_DIR:-build}" \
  ${BEFORE_BUILD_DIR:+--before-build "$BEFORE_BUILD_DIR"} \
  --jdks "/usr/lib/jvm/java-17-openjdk-amd64,/usr/lib/jvm/temurin-25-jdk-amd64" \
  --runs "${RUNS:-3}" --sizes "${SIZES:-100000,1000000}" --calls "${CALLS:-200}" \
  --before-calls "${BEFORE_CALLS:-20}" ${AA:+--aa}
