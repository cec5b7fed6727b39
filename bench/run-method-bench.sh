#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# METHOD_ENTRY/METHOD_EXIT cost: no agent, JVMPI through bytecode insertion (libjvmpi + a counting
# agent), JVMTI's own MethodEntry/MethodExit (a counting JVMTI agent) and HPROF cpu=times (read
# against the JVMPI counting agent), on two workloads:
# benchmethods.CallHeavy (call-heavy program written for this) and javac (JDK 17's jdk.compiler)
# compiling a generated source tree (bench/hprof/gen_sources.py). Runs are interleaved (round 1 of
# every workload and configuration, then round 2, ...); prints per workload a Markdown table of
# median wall and CPU seconds, ratios to no agent, and the entry/exit counts the agents report.
# Needs an existing build/ (runs bench/methods/bench.py).
#
#   bash bench/run-method-bench.sh [rounds]    (rounds: CallHeavy's argument, default 20)
#
# Environment: JAVA_HOME_17 (default /usr/lib/jvm/java-17-openjdk-amd64), BUILD_DIR (default
# build), RUNS (runs per configuration, default 3), METHOD_BENCH_PACKAGES x METHOD_BENCH_CLASSES
# (size of javac's generated tree, default 3 x 20), METHOD_BENCH_WORKLOADS (comma-separated subset
# of callheavy,javac; default both), METHOD_BENCH_TIMEOUT (seconds per run before it is killed,
# default 900; a configuration whose run was killed is skipped in the later rounds),
# METHOD_BENCH_ONLY (comma-separated substrings: only the configurations whose name contains one;
# no agent always runs; names: "no agent, repeated", "JVMPI METHOD_ENTRY/EXIT (libjvmpi, bytecode
# insertion)", "JVMTI MethodEntry/MethodExit", "HPROF cpu=times"), METHOD_BENCH_COMPARE_BUILD (a
# second build dir: HPROF's rows run again with its libhprof.so, interleaved, as before/after).
source "$(dirname "$0")/../scripts/script_args.sh"
script_args_help "$@"
if (($# > 1)) || [[ $# -eq 1 && ! "$1" =~ ^[1-9][0-9]*$ ]]; then
  echo "run-method-bench.sh: rounds must be one positive number, got '$*' (see --help)" >&2
  exit 2
fi
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 bench/methods/bench.py --build "${BUILD_DIR:-build}" \
  --jdk "${JAVA_HOME_17:-/usr/lib/jvm/java-17-openjdk-amd64}" --runs "${RUNS:-3}" \
  --rounds "${1:-20}" --packages "${METHOD_BENCH_PACKAGES:-3}" \
  --classes "${METHOD_BENCH_CLASSES:-20}" --workloads "${METHOD_BENCH_WORKLOADS:-callheavy,javac}" \
  --timeout "${METHOD_BENCH_TIMEOUT:-900}" ${METHOD_BENCH_ONLY:+--only "$METHOD_BENCH_ONLY"} \
  ${METHOD_BENCH_COMPARE_BUILD:+--compare-build "$METHOD_BENCH_COMPARE_BUILD"}
