#!/usr/bin/env bash
# Heap benchmarks of libjvmpi.so, run side by side in one go against an existing build (this
# script builds nothing: cmake --build build first).
#
#  a. Allocation tracking: an allocation-heavy program (bench/heap/java/jvmpibench/AllocBench)
#     without an agent, under libjvmpi.so with a counting agent that enables nothing, with
#     OBJECT_ALLOC, and with OBJECT_ALLOC + OBJECT_FREE. Median workload time of REPS runs each.
#  b. Heap dump: a heap of ~1 GiB live data (-Xmx3g; 12.5M small objects in chains, 10000 long[8192]).
#     `jcmd <pid> GC.heap_dump` (wall time of jcmd, the JVM's own reported time, and the peak RSS
#     increase of the target while it runs) against a level-2 JVMPI HEAP_DUMP requested by an agent
#     (time to the buffer, time to write it to a file, and the process's peak RSS increase).
#
# Usage: bench/run-heap-bench.sh [a|b|all]    (default all)
# Environment: BUILD_DIR (default <repo>/build), JAVA_HOME (default JDK 17), REPS (default 3),
#              BENCH_TMP (where the dump files go; default $BUILD_DIR/bench/heap/run; deleted).
source "$(dirname "$0")/../scripts/script_args.sh"
script_args "$@"
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$repo/build}"
java_home="${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}"
java="$java_home/bin/java"
jcmd="$java_home/bin/jcmd"
reps="${REPS:-3}"
what="${1:-all}"
lib="$build/src/jvmpi/libjvmpi.so"
bench="$build/bench/heap"
classes="$bench/classes"
tmp="${BENCH_TMP:-$bench/run}"

for f in "$lib" "$bench/libjvmpibench_count.so" "$bench/libjvmpibench_dump.so" \
         "$classes/jvmpibench/AllocBench.class" "$java"; do
  [[ -e "$f" ]] || { echo "missing $f (build first: cmake --build $build)" >&2; exit 1; }
done
mkdir -p "$tmp"

echo "# JVMPI heap benchmarks — $(date -u '+%Y-%m-%d %H:%M UTC'), $("$java" -version 2>&1 | head -1)"
echo "# $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo) RAM"
echo

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# ---- a. allocation tracking ----
if [[ "$what" == a || "$what" == all ]]; then
  iterations=300000
  rounds=4
  declare -A opts=(
    [none]=""
    [idle]="-agentpath:$lib=$bench/libjvmpibench_count.so:events=none"
    [alloc]="-agentpath:$lib=$bench/libjvmpibench_count.so:events=alloc"
    [allocfree]="-agentpath:$lib=$bench/libjvmpibench_count.so:events=alloc+free"
  )
  declare -A label=(
    [none]="no agent"
    [idle]="libjvmpi, agent enables nothing"
    [alloc]="libjvmpi, OBJECT_ALLOC"
    [allocfree]="libjvmpi, OBJECT_ALLOC + OBJECT_FREE"
  )
  declare -A work wall
  allocations=0
  for mode in none idle alloc allocfree; do
    ws=()
    ts=()
    for ((r = 0; r < reps; r++)); do
      start=$(date +%s.%N)
      # shellcheck disable=SC2086
      out=$("$java" -Xmx512m ${opts[$mode]} -cp "$classes" jvmpibench.AllocBench \
              "$iterations" "$rounds" 2>"$tmp/alloc.err")
      end=$(date +%s.%N)
      ws+=("$(awk '/^WORKLOAD_MS/ {print $2}' <<<"$out")")
      ts+=("$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.2f", b - a}')")
      allocations=$(awk '/^ALLOCATIONS/ {print $2}' <<<"$out")
      if [[ "$mode" == alloc* ]]; then counted=$(grep -o 'allocs=[0-9]*' "$tmp/alloc.err" || true); fi
    done
    work[$mode]=$(printf '%s\n' "${ws[@]}" | median)
    wall[$mode]=$(printf '%s\n' "${ts[@]}" | median)
    [[ "$mode" == alloc* ]] && echo "  ($mode: agent counted ${counted:-?} OBJECT_ALLOC events in the whole run)"
  done
  echo
  echo "## a. Allocation tracking ($allocations allocations in the measured rounds; median of $reps runs)"
  echo
  echo "| configuration | workload ms | vs no agent | vs libjvmpi idle | process wall s |"
  echo "|---|---:|---:|---:|---:|"
  for mode in none idle alloc allocfree; do
    awk -v l="${label[$mode]}" -v w="${work[$mode]}" -v n="${work[none]}" -v i="${work[idle]}" \
        -v t="${wall[$mode]}" 'BEGIN {printf "| %s | %d | %.2fx | %.2fx | %.2f |\n", l, w, w/n, w/i, t}'
  done
  awk -v w="${work[alloc]}" -v i="${work[idle]}" -v n="$allocations" \
      'BEGIN {printf "\nOBJECT_ALLOC cost: %.2f us per allocation\n", (w - i) * 1000 / n}'
  echo
fi

# ---- b. heap dump of ~1 GiB ----
if [[ "$what" == b || "$what" == all ]]; then
  kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
  fifo="$tmp/in"
  out="$tmp/heapbench.out"
  rm -f "$fifo" "$out" "$tmp/jvm.hprof" "$tmp/jvmpi.dump"
  mkfifo "$fifo"
  "$java" -Xmx3g -Xms3g -agentpath:"$lib=$bench/libjvmpibench_dump.so" \
      -Djvmpibench.agent="$bench/libjvmpibench_dump.so" -cp "$classes" jvmpibench.HeapDumpBench \
      <"$fifo" >"$out" 2>"$tmp/heapbench.err" &
  jpid=$!
  exec 3>"$fifo"
  until grep -q '^READY' "$out" 2>/dev/null; do
    kill -0 "$jpid" 2>/dev/null || { cat "$tmp/heapbench.err" >&2; exit 1; }
    sleep 0.2
  done
  ready=$(grep '^READY' "$out")
  live=$(sed 's/.*live_bytes=\([0-9]*\).*/\1/' <<<"$ready")
  objects=$(sed 's/.*objects=\([0-9]*\).*/\1/' <<<"$ready")

  # jcmd GC.heap_dump (live objects: a full GC first, then the dump), measured on the target.
  echo 5 >"/proc/$jpid/clear_refs"
  j_rss=$(kb "$jpid" VmRSS)
  start=$(date +%s.%N)
  jout=$("$jcmd" "$jpid" GC.heap_dump "$tmp/jvm.hprof" 2>&1)
  end=$(date +%s.%N)
  j_hwm=$(kb "$jpid" VmHWM)
  j_wall=$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.2f", b - a}')
  j_self=$(grep -o 'in [0-9.]* secs' <<<"$jout" | awk '{print $2}')
  j_size=$(stat -c %s "$tmp/jvm.hprof")
  rm -f "$tmp/jvm.hprof"

  # JVMPI level-2 heap dump, written to a file by the agent.
  echo "jvmpi $tmp/jvmpi.dump" >&3
  until grep -q '^JVMPI_DUMP' "$out"; do
    kill -0 "$jpid" 2>/dev/null || { cat "$tmp/heapbench.err" >&2; exit 1; }
    sleep 0.2
  done
  line=$(grep '^JVMPI_DUMP' "$out")
  get() { sed "s/.* $1=\([0-9-]*\).*/\1/" <<<"$line"; }
  p_buf=$(get buffer_ms); p_write=$(get write_ms); p_total=$(get total_ms); p_size=$(get bytes)
  p_rss=$(get rss_before_kb); p_hwm=$(get hwm_kb)
  rm -f "$tmp/jvmpi.dump"
  echo quit >&3
  exec 3>&-
  wait "$jpid"
  rm -f "$fifo"

  echo "## b. Heap dump: $(awk -v b="$live" 'BEGIN {printf "%.2f GiB", b/1073741824}') live after GC, $objects objects of the program (-Xmx3g)"
  echo
  echo "| | JVMPI HEAP_DUMP level 2 | jcmd GC.heap_dump | ratio |"
  echo "|---|---:|---:|---:|"
  awk -v pb="$p_buf" -v pt="$p_total" -v jw="$j_wall" -v js="$j_self" -v ps="$p_size" \
      -v jsz="$j_size" -v pr="$p_rss" -v ph="$p_hwm" -v jr="$j_rss" -v jh="$j_hwm" 'BEGIN {
    printf "| time to the dump in memory (JVMPI) / as reported by the JVM (jcmd), s | %.2f | %s | %.2fx |\n", pb/1000, js, pb/1000/js
    printf "| wall time incl. writing the file (JVMPI) / of the jcmd command, s | %.2f | %.2f | %.2fx |\n", pt/1000, jw, pt/1000/jw
    printf "| dump size, MiB | %.0f | %.0f | %.2fx |\n", ps/1048576, jsz/1048576, ps/jsz
    printf "| RSS before, MiB | %.0f | %.0f | |\n", pr/1024, jr/1024
    printf "| peak RSS increase during the dump, MiB | %.0f | %.0f | %.2fx |\n", (ph-pr)/1024, (jh-jr)/1024, ((jh-jr) > 0 ? (ph-pr)/(jh-jr) : 0)
  }'
  echo
fi
