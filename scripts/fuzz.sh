#!/usr/bin/env bash
# Builds the libFuzzer targets (HPROF reader of src/formats, heap analyzer of src/analysis) with
# clang in build-fuzz/ and runs each for a bounded time from its seed corpus. Exit status 0 when
# no input crashed, hung or leaked; a crashing input is left in build-fuzz/ as crash-*.
set -euo pipefail

seconds=60
usage() {
  cat <<'USAGE'
usage: scripts/fuzz.sh [--seconds N]

Builds build-fuzz/ with clang (-DFORMATS_FUZZ=ON) and runs every fuzz target for N seconds
(default 60) each. Needs clang and libFuzzer (Debian: clang, libclang-rt-dev).
USAGE
}
while (($#)); do
  case "$1" in
    --seconds)
      [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: --seconds needs a positive number" >&2; exit 2; }
      seconds="$2"
      shift 2
      ;;
    -h | --help) usage; exit 0 ;;
    *) echo "fuzz.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."
command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ not found (apt-get install clang)" >&2; exit 1; }
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ -DFORMATS_FUZZ=ON -DSANITIZE=ON "${launcher[@]}" >/dev/null
nice ninja -C build-fuzz hprof_reader_fuzzer analysis_reader_fuzzer
run() {
  local target="$1" seeds="$2"
  local corpus="build-fuzz/corpus-$target"
  mkdir -p "$corpus"
  echo "fuzz: $target for ${seconds}s"
  (cd build-fuzz && "./$(find . -name "$target" -type f -perm -u+x | head -1)" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    "../$corpus" "../$seeds" 2>&1 | tail -n 12)
}
run hprof_reader_fuzzer tests/analysis/fuzz-seeds
run analysis_reader_fuzzer tests/analysis/fuzz-seeds
