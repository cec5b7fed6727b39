#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Heap benchmarks of libjvmpi.so, run side by side in one go against an existing build (this
# script builds nothing: cmake --build build first).
#
#  a. Allocation tracking: an allocation-heavy program (bench/heap/java/jvmpibench/AllocBench)
#     without an agent, under libjvmpi.so with a counting agent that enables nothing, with
#     OBJECT_ALLOC, and with OBJECT_ALLOC + OBJECT_FREE. Median workload time of REPS runs each.
#  b. Heap dumps of ~1 GiB live data (-Xmx3g; 12.5M small objects in chains, 10000 long[8192])
#     and ~4 GiB (-Xmx8g; 50M objects, 40000 arrays): `jcmd <pid> GC.heap_dump` (wall time of
#     jcmd, the JVM's own reported time, and the peak RSS increase of the target while it runs,
#     twice: the A/A row) against a level-2 dump through the runtime's StreamHeapDump written to a
#     file, the one-buffer JVMPI HEAP_DUMP (to memory, then written), and HPROF
#     heap=dump,format=b on SIGQUIT (streamed; beside jcmd on the same JVM). In HPROF's JVM, before
#     its dump, the floor: bench/heap/agents/dump_floor_agent.c, a plain JVMTI agent doing the least
#     a JVMTI-based level-2 dump with object IDs must on an already-tagged heap (the walk with its
#     reference/primitive callbacks, reading tags, the dump's byte volume to /dev/null), then the
#     same walk writing those bytes to a real file (the page-cache copy every dump pays), triggered
#     by a file its agent thread polls for; the HPROF/floor ratios (wall, and CPU against the
#     file floor) are printed under the table, and HPROF's row gives its process CPU seconds and
#     objects per CPU-second. HPROF writes its dump around the page cache (directio=y, its
#     default); a second HPROF JVM gives the same dump with directio=n. Every timed dump starts
#     after the guest has handed its free memory back to the host (see settle below), and dd rows
#     give what writing the dump's bytes costs by itself, into fresh page cache and with
#     oflag=direct. Progress goes to stderr.
#
# Usage: bench/run-heap-bench.sh [a|b|all]    (default all)
# Environment: BUILD_DIR (default <repo>/build), JAVA_HOME (default JDK 17), REPS (default 3),
#              SIZES (part b: heap sizes in GiB, default "1 4"),
#              HPROF_ONLY=1 (part b: only HPROF's JVMs: the floor rows, HPROF, jcmd beside them),
#              BENCH_TMP (where the dump files go; default $BUILD_DIR/bench/heap/run; deleted),
#              SETTLE (seconds to wait before each dump where the kernel does not report freed
#              memory in /sys/module/page_reporting/parameters/reported_kib; default 20),
#              LAYOUT=mixed (part b: each array hangs off a chain instead of being held apart,
#              so a heap walk meets the arrays among the small objects; default: apart).
source "$(dirname "$0")/../scripts/script_args.sh"
script_args_help "$@"
case "${1:-all}" in
  a | b | all) (($# <= 1)) || { echo "$(basename "$0"): one argument at most (see --help)" >&2; exit 2; } ;;
  *) echo "$(basename "$0"): unexpected argument '$1' (see $(basename "$0") --help)" >&2; exit 2 ;;
esac
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${BUILD_DIR:-$repo/build}" && pwd)"  # absolute: the JVM loads agents by path
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
         "$bench/libjvmpibench_dump_floor.so" \
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

# ---- b. heap dumps of ~1 GiB and ~4 GiB ----
if [[ "$what" == b || "$what" == all ]]; then
  kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
  now() { date +%s.%N; }
  secs() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", b - a}'; }
  # Every timed dump starts from the same page-cache state. On a VM that hands freed memory back
  # to its host (free page reporting), a file written into just-freed pages costs a fraction of
  # one written into pages the host must supply again (2 GB: ~3 s against ~17 s here), so
  # whichever dump ran right after another's file was deleted looked several times faster.
  # settle waits until the guest has reported its free memory (the reported total stops growing
  # for 3 s), so every dump, jcmd's and ours, pays for fresh pages alike; without the counter it
  # sleeps SETTLE seconds (default 20).
  reported=/sys/module/page_reporting/parameters/reported_kib
  settle() {
    local last now_kib same=0 waited=0
    if [[ ! -r "$reported" ]]; then sleep "${SETTLE:-20}"; return; fi
    last=$(cat "$reported")
    while ((same < 3 && waited < 120)); do
      sleep 1
      waited=$((waited + 1))
      now_kib=$(cat "$reported")
      if [[ "$now_kib" == "$last" ]]; then same=$((same + 1)); else same=0; last=$now_kib; fi
    done
  }
  # The cost of writing N bytes to a file on this machine, whoever writes them: dd of N bytes
  # (4 MiB blocks) after settling, into fresh page cache, or around it with $2 = oflag=direct.
  # Prints "<wall s> <CPU s>".
  dd_floor() {
    settle
    local start end
    start=$(now)
    local t
    t=$( { TIMEFORMAT='%U %S'; time dd if=/dev/zero of="$tmp/pagecache.bin" bs=4M \
          count=$((($1 + 4194303) / 4194304)) ${2:+"$2"} status=none; } 2>&1)
    end=$(now)
    rm -f "$tmp/pagecache.bin"
    echo "$(secs "$start" "$end") $(awk '{printf "%.2f", $1 + $2}' <<<"$t")"
  }
  # jcmd GC.heap_dump of JVM $1 (live objects: a full GC first, then the dump), measured on the
  # target: "<wall s> <JVM's own s> <peak RSS increase KiB> <file bytes>".
  jcmd_dump() {
    settle
    echo 5 >"/proc/$1/clear_refs"
    local rss start end jout hwm size
    rss=$(kb "$1" VmRSS)
    start=$(now)
    jout=$("$jcmd" "$1" GC.heap_dump "$tmp/jvm.hprof" 2>&1)
    end=$(now)
    hwm=$(kb "$1" VmHWM)
    size=$(stat -c %s "$tmp/jvm.hprof")
    rm -f "$tmp/jvm.hprof"
    echo "$(secs "$start" "$end") $(grep -o 'in [0-9.]* secs' <<<"$jout" | awk '{print $2}') $((hwm - rss)) $size"
  }
  wait_line() {  # file, pattern, count, pid
    until [[ $(grep -c "$2" "$1" 2>/dev/null) -ge $3 ]]; do
      kill -0 "$4" 2>/dev/null || { cat "$tmp/heapbench.err" >&2; exit 1; }
      sleep 0.1
    done
  }
  progress() { echo "[heap-bench b $(date -u +%H:%M:%S)] $*" >&2; }
  declare -A h_cpu h_wall h_rss h_size  # HPROF's dump by directio=
  rows=()
  floors=()
  layout=()
  case "${LAYOUT:-apart}" in
    apart) ;;
    mixed) layout=(-Djvmpibench.mixed=true) ;;
    *) echo "LAYOUT: apart or mixed, not '${LAYOUT}'" >&2; exit 2 ;;
  esac
  for size in ${SIZES:-1 4}; do
    case "$size" in
      1) xmx=3g; chains=12500; arrays=10000 ;;
      4) xmx=8g; chains=50000; arrays=40000 ;;
      *) echo "SIZES: 1 and/or 4 (GiB)" >&2; exit 2 ;;
    esac
    # Run 1: the bench dump agent on JVMPI: jcmd, the streamed dump to a file, the one-buffer
    # HEAP_DUMP event (to memory, then written), jcmd again (the A/A row).
    fifo="$tmp/in"
    out="$tmp/heapbench.out"
    get() { sed "s/.* $1=\([0-9-]*\).*/\1/" <<<"$line"; }
    if [[ "${HPROF_ONLY:-0}" != 1 ]]; then
    rm -f "$fifo" "$out" "$tmp/jvmpi.dump"
    mkfifo "$fifo"
    progress "${size} GiB: building the heap (JVMPI bench dump agent)"
    "$java" -Xmx$xmx -Xms$xmx -agentpath:"$lib=$bench/libjvmpibench_dump.so" \
        -Djvmpibench.agent="$bench/libjvmpibench_dump.so" ${layout[@]+"${layout[@]}"} -cp "$classes" jvmpibench.HeapDumpBench \
        $chains 1000 $arrays <"$fifo" >"$out" 2>"$tmp/heapbench.err" &
    jpid=$!
    exec 3>"$fifo"
    wait_line "$out" '^READY' 1 "$jpid"
    ready=$(grep '^READY' "$out")
    live=$(sed 's/.*live_bytes=\([0-9]*\).*/\1/' <<<"$ready")
    objects=$(sed 's/.*objects=\([0-9]*\).*/\1/' <<<"$ready")
    heap="$(awk -v b="$live" 'BEGIN {printf "%.2f GiB", b/1073741824}') ($objects objects, -Xmx$xmx${layout[@]+, arrays among the chains})"
    progress "${size} GiB: $heap built; jcmd GC.heap_dump"
    read -r j_wall j_self j_rss j_size <<<"$(jcmd_dump "$jpid")"
    progress "${size} GiB: jcmd ${j_wall} s; JVMPI StreamHeapDump to a file"
    settle
    echo "stream $tmp/jvmpi.dump" >&3
    wait_line "$out" '^JVMPI_STREAM' 1 "$jpid"
    line=$(grep '^JVMPI_STREAM' "$out")
    get() { sed "s/.* $1=\([0-9-]*\).*/\1/" <<<"$line"; }
    s_total=$(get total_ms); s_size=$(get bytes); s_rss=$(( $(get hwm_kb) - $(get rss_before_kb) ))
    rm -f "$tmp/jvmpi.dump"
    progress "${size} GiB: streamed ${s_total} ms; JVMPI one-buffer HEAP_DUMP"
    settle
    echo "jvmpi $tmp/jvmpi.dump" >&3
    wait_line "$out" '^JVMPI_DUMP' 1 "$jpid"
    line=$(grep '^JVMPI_DUMP' "$out")
    p_buf=$(get buffer_ms); p_total=$(get total_ms); p_size=$(get bytes)
    p_rss=$(( $(get hwm_kb) - $(get rss_before_kb) ))
    rm -f "$tmp/jvmpi.dump"
    progress "${size} GiB: one buffer ${p_total} ms; jcmd again (A/A)"
    read -r a_wall a_self a_rss _ <<<"$(jcmd_dump "$jpid")"
    echo quit >&3
    exec 3>&-
    wait "$jpid"
    rm -f "$fifo"
    fi

    # Run 2: HPROF heap=dump,format=b (the streamed dump) on SIGQUIT, then jcmd on the same heap;
    # the floors in that JVM. Run 3: the same HPROF dump with directio=n (through the page cache).
    for dio in y n; do
    rm -f "$out" "$tmp/hprof.hprof" "$tmp/floor.trigger" "$tmp/floor.bin"
    mkfifo "$fifo"
    progress "${size} GiB: building the heap again (HPROF heap=dump,format=b,directio=$dio$([[ $dio == y ]] && echo " and the floor agent"))"
    floor_agent=()
    [[ $dio == y ]] && floor_agent=(-agentpath:"$bench/libjvmpibench_dump_floor.so=trigger=$tmp/floor.trigger,file=$tmp/floor.bin")
    LD_LIBRARY_PATH="$build/lib" "$java" -Xmx$xmx -Xms$xmx \
        -Xrunhprof:heap=dump,format=b,directio=$dio,file="$tmp/hprof.hprof" ${floor_agent[@]+"${floor_agent[@]}"} \
        -Djvmpibench.agent="$bench/libjvmpibench_dump.so" ${layout[@]+"${layout[@]}"} -cp "$classes" jvmpibench.HeapDumpBench \
        $chains 1000 $arrays <"$fifo" >"$out" 2>"$tmp/heapbench.err" &
    jpid=$!
    exec 3>"$fifo"
    wait_line "$out" '^READY' 1 "$jpid"
    ready=$(grep '^READY' "$out")
    live=$(sed 's/.*live_bytes=\([0-9]*\).*/\1/' <<<"$ready")
    objects=$(sed 's/.*objects=\([0-9]*\).*/\1/' <<<"$ready")
    heap="$(awk -v b="$live" 'BEGIN {printf "%.2f GiB", b/1073741824}') ($objects objects, -Xmx$xmx${layout[@]+, arrays among the chains})"
    if [[ $dio == y ]]; then
    progress "${size} GiB: the floor (tagging walk, then the timed walk of the tagged heap)"
    settle
    touch "$tmp/floor.trigger"
    wait_line "$tmp/heapbench.err" '^JVMTI_FLOOR' 1 "$jpid"
    line=$(grep '^JVMTI_FLOOR' "$tmp/heapbench.err")
    f_walk=$(get walk_ms); f_cpu=$(get cpu_ms); f_bytes=$(get bytes); f_tag=$(get tag_ms)
    ff_walk=$(get file_walk_ms); ff_cpu=$(get file_cpu_ms)
    progress "${size} GiB: floor ${f_walk} ms (CPU ${f_cpu} ms), to a file ${ff_walk} ms (CPU ${ff_cpu} ms; tagging walk ${f_tag} ms); HPROF dump on SIGQUIT"
    fi
    settle
    echo 5 >"/proc/$jpid/clear_refs"
    rss=$(kb "$jpid" VmRSS)
    c_start=$(awk '{print $14 + $15}' "/proc/$jpid/stat")
    start=$(now)
    kill -QUIT "$jpid"
    wait_line "$tmp/heapbench.err" 'Dumping Java heap \.\.\. done' 1 "$jpid"
    end=$(now)
    c_end=$(awk '{print $14 + $15}' "/proc/$jpid/stat")
    h_cpu[$dio]=$(awk -v a="$c_start" -v b="$c_end" -v t="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", (b - a) / t}')
    h_wall[$dio]=$(secs "$start" "$end"); h_rss[$dio]=$(( $(kb "$jpid" VmHWM) - rss ))
    h_size[$dio]=$(stat -c %s "$tmp/hprof.hprof")
    # HPROF keeps the file open: truncating frees its pages, as deleting jcmd's file frees jcmd's.
    truncate -s 0 "$tmp/hprof.hprof"
    progress "${size} GiB: HPROF directio=$dio ${h_wall[$dio]} s (process CPU ${h_cpu[$dio]} s)"
    if [[ $dio == y ]]; then
    progress "${size} GiB: jcmd on HPROF's JVM"
    read -r k_wall k_self k_rss k_size <<<"$(jcmd_dump "$jpid")"
    progress "${size} GiB: jcmd ${k_wall} s; dd of HPROF's ${h_size[y]} bytes into fresh page cache, then around it"
    read -r d_wall d_cpu <<<"$(dd_floor "${h_size[y]}")"
    read -r dd_wall dd_cpu <<<"$(dd_floor "${h_size[y]}" oflag=direct)"
    fi
    # Killed, not quit: heap=dump would write a last dump at exit, which nothing here measures.
    kill -KILL "$jpid"
    exec 3>&-
    { wait "$jpid"; } 2>/dev/null || true
    rm -f "$fifo" "$tmp/hprof.hprof"
    done

    target=$(awk -v b="$live" 'BEGIN {printf "%.0f", 64 + 0.05 * b / 1048576}')
    row() {  # label, seconds, jcmd seconds of the same JVM, RSS KiB, bytes
      awk -v l="$1" -v t="$2" -v j="$3" -v r="$4" -v b="$5" -v h="$heap" -v g="$target" 'BEGIN {
        printf "| %s | %s | %.2f | %.2fx | %.0f | %s | %.0f |\n", h, l, t, t / j, r / 1024, g, b / 1048576 }'
    }
    if [[ "${HPROF_ONLY:-0}" != 1 ]]; then
    rows+=("$(row "jcmd GC.heap_dump (JVM s: $j_self)" "$j_wall" "$j_wall" "$j_rss" "$j_size")")
    rows+=("$(row "jcmd GC.heap_dump again (A/A; JVM s: $a_self)" "$a_wall" "$j_wall" "$a_rss" "$j_size")")
    rows+=("$(row "JVMPI StreamHeapDump, level 2, to a file" "$(awk -v m="$s_total" 'BEGIN {printf "%.2f", m/1000}')" "$j_wall" "$s_rss" "$s_size")")
    rows+=("$(row "JVMPI HEAP_DUMP one buffer (in memory $(awk -v m="$p_buf" 'BEGIN {printf "%.2f", m/1000}') s), written" "$(awk -v m="$p_total" 'BEGIN {printf "%.2f", m/1000}')" "$j_wall" "$p_rss" "$p_size")")
    fi
    for dio in y n; do
    rows+=("$(row "HPROF heap=dump,format=b on SIGQUIT (streamed, directio=$dio; process CPU s: ${h_cpu[$dio]}, $(awk -v n="$objects" -v c="${h_cpu[$dio]}" 'BEGIN {printf "%.2f", (c > 0 ? n / c / 1e6 : 0)}') M objects per CPU-s)" "${h_wall[$dio]}" "$k_wall" "${h_rss[$dio]}" "${h_size[$dio]}")")
    done
    rows+=("$(row "jcmd GC.heap_dump, same JVM as HPROF (JVM s: $k_self)" "$k_wall" "$k_wall" "$k_rss" "$k_size")")
    rows+=("$(row "floor: plain JVMTI walk of the tagged heap, tags read, bytes to /dev/null, same JVM as HPROF (CPU s: $(awk -v m="$f_cpu" 'BEGIN {printf "%.2f", m/1000}'))" "$(awk -v m="$f_walk" 'BEGIN {printf "%.2f", m/1000}')" "$k_wall" 0 "$f_bytes")")
    rows+=("$(row "floor, the same walk with the bytes to a file (CPU s: $(awk -v m="$ff_cpu" 'BEGIN {printf "%.2f", m/1000}'))" "$(awk -v m="$ff_walk" 'BEGIN {printf "%.2f", m/1000}')" "$k_wall" 0 "$f_bytes")")
    rows+=("$(row "page-cache floor: dd of HPROF's bytes to a file, 4 MiB writes, after settling (CPU s: $d_cpu)" "$d_wall" "$k_wall" 0 "${h_size[y]}")")
    rows+=("$(row "direct-I/O floor: the same dd with oflag=direct (CPU s: $dd_cpu)" "$dd_wall" "$k_wall" 0 "${h_size[y]}")")
    floors+=("$(awk -v h="${h_wall[y]}" -v f="$f_walk" -v g="$ff_walk" -v hc="${h_cpu[y]}" -v fc="$ff_cpu" -v s="$heap" 'BEGIN {printf "%s: HPROF / floor = %.2fx; HPROF / floor to a file = %.2fx (CPU: %.2fx)", s, h * 1000 / f, h * 1000 / g, hc * 1000 / fc}')")
    progress "${size} GiB: done"
  done
  echo "## b. Heap dumps (time: wall seconds; ratio against jcmd on the same JVM; extra RSS: peak RSS increase of the JVM while it dumps)"
  echo
  echo "| heap | dump | s | vs jcmd | extra RSS MiB | target MiB | file MiB |"
  echo "|---|---|---:|---:|---:|---:|---:|"
  printf '%s\n' "${rows[@]}"
  echo
  printf '%s\n' "${floors[@]}"
  echo
fi
