#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer targets (HPROF reader of src/formats, heap analyzer of src/analysis) with
# clang in build-fuzz/ and runs each for a bounded time from its seed corpus. Exit status 0 when
# no input crashed, hung or leaked; a crashing input is left in build-fuzz/ as crash-*. The
# fuzzers' random seed is fixed (-seed=1) so a run on a fresh clone is repeatable: CI fails only
# on a finding, never by the luck of the draw.
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
# Seeds: small well-formed dumps written here (identifier sizes 4 and 8: header, a string, a
# class, a heap dump segment with a root, a class dump and an instance, HEAP DUMP END), so the
# fuzzers start from valid structure on a fresh clone.
seeds=build-fuzz/seeds
mkdir -p "$seeds"
python3 - "$seeds" <<'PY'
import struct, sys
def dump(ids):
    i = (lambda v: struct.pack(">I", v)) if ids == 4 else (lambda v: struct.pack(">Q", v))
    rec = lambda tag, body: struct.pack(">BII", tag, 0, len(body)) + body
    out = b"JAVA PROFILE 1.0.2\0" + struct.pack(">IQ", ids, 0)
    out += rec(0x01, i(1) + b"Seed")
    out += rec(0x02, struct.pack(">I", 1) + i(0x100) + struct.pack(">I", 0) + i(1))
    cls = b"\x20" + i(0x100) + struct.pack(">I", 0) + i(0) * 6 + struct.pack(">I", 4)
    cls += struct.pack(">HHH", 0, 0, 1) + i(1) + b"\x0a"
    inst = b"\x21" + i(0x200) + struct.pack(">I", 0) + i(0x100) + struct.pack(">I", 4) + b"\0\0\0\x2a"
    out += rec(0x1C, b"\x05" + i(0x100) + cls + inst)
    out += rec(0x2C, b"")
    return out
for ids in (4, 8):
    open(f"{sys.argv[1]}/seed-id{ids}.hprof", "wb").write(dump(ids))
PY
run() {
  local target="$1" seeds="$2"
  local corpus="build-fuzz/corpus-$target"
  mkdir -p "$corpus"
  echo "fuzz: $target for ${seconds}s"
  (cd build-fuzz && "./$(find . -name "$target" -type f -perm -u+x | head -1)" \
    -seed=1 -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    "../$corpus" "../$seeds" 2>&1 | tail -n 12)
}
run hprof_reader_fuzzer "$seeds"
run analysis_reader_fuzzer "$seeds"
