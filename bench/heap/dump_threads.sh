#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Where one HPROF heap dump's time goes, thread by thread: builds the bench heap under HPROF
# heap=dump,format=b, lets the page cache settle (as bench/run-heap-bench.sh does), sends SIGQUIT
# and prints the dump's wall time, the runtime's phase times (JVMPI_DUMP_TIMES=1: the walk and how
# long it waited in HPROF's chunk callback) and each thread's CPU seconds during the dump; with
# PERF=1, a `perf record -F 999 -g` of the dump is left in $BENCH_TMP/perf.data.
#
# Usage: bench/heap/dump_threads.sh BUILD_DIR [CHAINS [XMX]]
#   BUILD_DIR  a build tree with lib/libhprof.so and bench/heap/ (A/B: run it on two trees,
#              interleaved)
#   CHAINS     chains of 1000 small objects (default 12500: ~1 GiB live; 50000 with 8g: ~4 GiB);
#              CHAINS*4/5 long[8192] arrays are added, as the heap bench does
#   XMX        heap size (default 3g)
# Environment: JAVA_HOME (default JDK 17), BENCH_TMP (default /tmp/jvmprof-dump-threads; emptied),
#              PERF=1, SETTLE (seconds, where the kernel has no page_reporting counter; default 20),
#              LAYOUT=mixed (the arrays hang off the chains, as in bench/run-heap-bench.sh),
#              DIRECTIO=n (HPROF writes the dump through the page cache; default y).
source "$(dirname "$0")/../../scripts/script_args.sh"
script_args_help "$@"
if (($# < 1 || $# > 3)); then
  echo "$(basename "$0"): BUILD_DIR [CHAINS [XMX]] (see --help)" >&2
  exit 2
fi
set -euo pipefail
build=$(cd "$1" && pwd)
chains=${2:-12500}
xmx=${3:-3g}
[[ "$chains" =~ ^[1-9][0-9]*$ ]] || { echo "$(basename "$0"): CHAINS must be a positive number, not '$chains'" >&2; exit 2; }
[[ "$xmx" =~ ^[1-9][0-9]*[mg]$ ]] || { echo "$(basename "$0"): XMX must look like 3g or 2048m, not '$xmx'" >&2; exit 2; }
java="${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java"
case "${LAYOUT:-apart}" in
  apart) mixed=false ;;
  mixed) mixed=true ;;
  *) echo "$(basename "$0"): LAYOUT is apart or mixed, not '$LAYOUT'" >&2; exit 2 ;;
esac
case "${DIRECTIO:-y}" in
  y | n) ;;
  *) echo "$(basename "$0"): DIRECTIO is y or n, not '$DIRECTIO'" >&2; exit 2 ;;
esac
for f in "$build/lib/libhprof.so" "$build/bench/heap/libjvmpibench_dump.so" \
         "$build/bench/heap/classes/jvmpibench/HeapDumpBench.class" "$java"; do
  [[ -e "$f" ]] || { echo "$(basename "$0"): missing $f" >&2; exit 1; }
done
tmp="${BENCH_TMP:-/tmp/jvmprof-dump-threads}"
rm -rf "$tmp"
mkdir -p "$tmp"
mkfifo "$tmp/in"

LD_LIBRARY_PATH="$build/lib" JVMPI_DUMP_TIMES=1 "$java" -Xmx"$xmx" -Xms"$xmx" \
    -Xrunhprof:heap=dump,format=b,directio="${DIRECTIO:-y}",file="$tmp/h.hprof" \
    -Djvmpibench.agent="$build/bench/heap/libjvmpibench_dump.so" -Djvmpibench.mixed=$mixed \
    -cp "$build/bench/heap/classes" jvmpibench.HeapDumpBench "$chains" 1000 $((chains * 4 / 5)) \
    <"$tmp/in" >"$tmp/out" 2>"$tmp/err" &
pid=$!
exec 3>"$tmp/in"
cleanup() { kill -KILL "$pid" 2>/dev/null || true; { wait "$pid"; } 2>/dev/null || true; rm -f "$tmp/h.hprof"; }
trap cleanup EXIT
echo "[dump-threads] building the heap ($chains chains, -Xmx$xmx)" >&2
until grep -q '^READY' "$tmp/out"; do
  kill -0 "$pid" 2>/dev/null || { cat "$tmp/err" >&2; exit 1; }
  sleep 0.2
done

reported=/sys/module/page_reporting/parameters/reported_kib
echo "[dump-threads] settling the page cache" >&2
if [[ -r "$reported" ]]; then
  last=$(cat "$reported") same=0
  while ((same < 3)); do
    sleep 1
    now_kib=$(cat "$reported")
    if [[ "$now_kib" == "$last" ]]; then same=$((same + 1)); else same=0; last=$now_kib; fi
  done
else
  sleep "${SETTLE:-20}"
fi

# "<tid>:<name> <user+system ticks>" for every thread of the JVM.
# One cat and one awk per snapshot, so snapshots can be taken every 0.1 s during the dump.
snapshot() {
  cat /proc/"$pid"/task/*/stat 2>/dev/null | awk '{
    lp = index($0, "("); rp = 0
    for (i = length($0); i > lp; i--) if (substr($0, i, 1) == ")") { rp = i; break }
    name = substr($0, lp + 1, rp - lp - 1); gsub(/ /, "_", name)
    split(substr($0, rp + 2), f, " ")
    print $1 ":" name, f[12] + f[13] }' | sort
}
snapshot >"$tmp/before"
# The dump thread ends with the dump: its CPU is caught by sampling while the dump runs.
(while kill -0 "$pid" 2>/dev/null; do snapshot >"$tmp/during.$((i = ${i:-0} + 1))"; sleep 0.1; done) &
sampler=$!
if [[ "${PERF:-0}" == 1 ]]; then
  perf record -F 999 -g -p "$pid" -o "$tmp/perf.data" 2>"$tmp/perf.err" &
  perf_pid=$!
  sleep 1
fi
echo "[dump-threads] dumping" >&2
start=$(date +%s.%N)
head -1 /proc/stat >"$tmp/stat.before"
kill -QUIT "$pid"
until grep -q ' done\.' "$tmp/err"; do sleep 0.05; done
end=$(date +%s.%N)
head -1 /proc/stat >"$tmp/stat.after"
kill "$sampler" 2>/dev/null || true
if [[ "${PERF:-0}" == 1 ]]; then kill -INT "$perf_pid"; wait "$perf_pid" || true; fi
snapshot >"$tmp/after"

awk -v a="$start" -v b="$end" 'BEGIN {printf "wall %.2f s\n", b - a}'
grep -o 'streamed heap dump:.*' "$tmp/err" || true
# The whole machine's CPU during the dump (every CPU, every process): what the two threads below
# leave idle, and what else ran (the kernel's writeback, this script's own sampling).
cat "$tmp/stat.before" "$tmp/stat.after" | awk -v hz="$(getconf CLK_TCK)" '
  NR == 1 { for (i = 2; i <= NF; i++) a[i] = $i; next }
  { printf "machine: user %.2f  system %.2f  idle %.2f  iowait %.2f  irq+softirq %.2f  steal %.2f CPU-s\n",
      ($2 - a[2] + $3 - a[3]) / hz, ($4 - a[4]) / hz, ($5 - a[5]) / hz, ($6 - a[6]) / hz,
      ($7 - a[7] + $8 - a[8]) / hz, ($9 - a[9]) / hz }'
# Per thread: the last tick count seen (during or after) less the count before (0 if new).
ticks=$(getconf CLK_TCK)
cat "$tmp"/during.* "$tmp/after" | awk -v hz="$ticks" '
  FNR == NR { next }
  { if (!($1 in last) || $2 > last[$1]) last[$1] = $2 }
  END { for (t in last) print t, last[t] }' "$tmp/before" - |
  awk -v hz="$ticks" 'NR == FNR { before[$1] = $2; next }
    { d = $2 - ($1 in before ? before[$1] : 0); if (d > 0) printf "%-40s %7.2f CPU-s\n", $1, d / hz }' \
    "$tmp/before" - | sort -k2 -nr | head -8
[[ "${PERF:-0}" == 1 ]] && echo "perf data: $tmp/perf.data (perf report -i $tmp/perf.data --sort pid,dso,sym)"
exit 0
