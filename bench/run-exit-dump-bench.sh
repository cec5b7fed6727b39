#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The exit heap dump of an agent of the HPROF lineage (tests/jvmpi/agents/lineage_agent.c,
# mode=dump, with and without RequestEvent(OBJECT_ALLOC) per object of the dump) beside
# `jcmd <pid> GC.heap_dump` on the same program (bench/objects: benchobjects.HeldObjects), on JDK 17
# and 25, interleaved (bench/objects/exit_dump_bench.py), with the floor under it (a JVMTI agent
# that only tags every object: bench/objects/tag_floor_agent.c). Builds nothing: cmake --build build
# first.
#
# Usage: bench/run-exit-dump-bench.sh
# Environment: BUILD_DIR (default build), RUNS (default 3), SIZES (comma-separated object counts,
#              default 1000000), BEFORE_BUILD_DIR (an older build: its runtime's dump as a row too).
source "$(dirname "$0")/../scripts/script_args.sh"
script_args "$@"
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 bench/objects/exit_dump_bench.py --build "${BUILD_DIR:-build}" \
  --jdks "/usr/lib/jvm/java-17-openjdk-amd64,/usr/lib/jvm/temurin-25-jdk-amd64" \
  --runs "${RUNS:-3}" --sizes "${SIZES:-1000000}" \
  ${BEFORE_BUILD_DIR:+--before "$BEFORE_BUILD_DIR"}
