#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# HPROF's monitor=y under contention: benchmonitors.ContendedLocks (32 threads on 4 locks by
# default) without an agent (twice: the A/A row) and under HPROF's monitor=y alone and combined
# with cpu=samples and heap=sites (sampled and exact), interleaved; with BEFORE_BUILD_DIR, HPROF's
# rows again with that build's libhprof.so. Builds nothing: cmake --build build first.
#
# Usage: bench/run-monitor-bench.sh
# Environment: BUILD_DIR (default build), BEFORE_BUILD_DIR (optional), JAVA_HOME (default JDK 17),
#              RUNS (default 5), THREADS (32), LOCKS (4), ITERATIONS (per thread, 20000).
source "$(dirname "$0")/../scripts/script_args.sh"
script_args "$@"
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 bench/monitors/bench.py --build "${BUILD_DIR:-build}" \
  ${BEFORE_BUILD_DIR:+--before-build "$BEFORE_BUILD_DIR"} \
  --jdk "${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}" --runs "${RUNS:-5}" \
  --threads "${THREADS:-32}" --locks "${LOCKS:-4}" --iterations "${ITERATIONS:-20000}"
