#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# HPROF overhead benchmark: javac compiling a large source tree under each HPROF mode, 3 runs per
# configuration, interleaved (round 1 of every configuration, then round 2, ...); prints a
# Markdown table of median wall times (the headline) and CPU times (user + system of the java
# process) and their ratios to the no-agent run.
#
#   bench/run-hprof-bench.sh [build dir]      (default: build next to this script's parent)
#
# Environment: JDK17_HOME (default /usr/lib/jvm/java-17-openjdk-amd64), RUNS (3),
# HPROF_BENCH_TIMEOUT (seconds per run before it is killed, default 600; a configuration whose run
# was killed is skipped in the later rounds), BENCH_PACKAGES x BENCH_CLASSES (size of the
# generated tree when JDK 17's src.zip is absent, default 6 x 25), BENCH_TIMES_CLASSES (classes of
# the small tree cpu=times is measured on, default 8), BENCH_ONLY (comma-separated substrings:
# run only the configurations whose name contains one of them, e.g. BENCH_ONLY=samples,monitor;
# the no-agent baseline of each tree in use always runs; names: "no agent", "no agent, repeated",
# "cpu=samples, 10 ms", "cpu=samples, 1 ms", "cpu=samples sampler=suspend, 10 ms",
# "cpu=samples sampler=suspend, 1 ms", "cpu=samples part: runtime, events ignored",
# "cpu=samples part: HPROF, no sample taken", "heap=sites", "heap=sites sample=512k",
# "JVMTI floor of heap=sites",
# "JVMTI floor part: event only", "JVMTI floor part: event + tag",
# "JVMTI floor part: event + trace", "monitor=y", "heap=dump", "no agent (small tree)",
# "cpu=times (small tree)").
source "$(dirname "$0")/../scripts/script_args.sh"
script_args "$@"
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
jdk=${JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
set -- --build "$build" --jdk "$jdk" --runs "${RUNS:-3}" \
  --timeout "${HPROF_BENCH_TIMEOUT:-600}" --packages "${BENCH_PACKAGES:-6}" \
  --classes "${BENCH_CLASSES:-25}" --times-classes "${BENCH_TIMES_CLASSES:-8}"
if [ -n "${BENCH_ONLY:-}" ]; then
  set -- "$@" --only "$BENCH_ONLY"
fi
exec python3 "$here/hprof/bench.py" "$@"
