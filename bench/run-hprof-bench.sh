#!/bin/sh
# HPROF overhead benchmark: javac compiling a large source tree under each HPROF mode, 3 runs per
# configuration; prints a Markdown table of median wall times and ratios to the no-agent run.
#
#   bench/run-hprof-bench.sh [build dir]      (default: build next to this script's parent)
#
# Environment: JDK17_HOME (default /usr/lib/jvm/java-17-openjdk-amd64), RUNS (3),
# HPROF_BENCH_TIMEOUT (seconds per run before it is killed, default 600; after a killed run the
# configuration's remaining runs are skipped), BENCH_PACKAGES x BENCH_CLASSES (size of the
# generated tree when JDK 17's src.zip is absent, default 6 x 25), BENCH_TIMES_CLASSES (classes of
# the small tree cpu=times is measured on, default 8).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
jdk=${JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
exec python3 "$here/hprof/bench.py" --build "$build" --jdk "$jdk" --runs "${RUNS:-3}" \
  --timeout "${HPROF_BENCH_TIMEOUT:-600}" --packages "${BENCH_PACKAGES:-6}" \
  --classes "${BENCH_CLASSES:-25}" --times-classes "${BENCH_TIMES_CLASSES:-8}"
