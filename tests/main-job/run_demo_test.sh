#!/usr/bin/env bash
# The README's main job (scripts/run-demo.sh) against this build: it must succeed, print both
# report sections and the report's path, and leave a report holding them.
set -uo pipefail
build_dir=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
log=$(DEMO_BUILD_DIR="$build_dir" DEMO_OUTPUT_DIR="$out" bash "$(dirname "$0")/../../scripts/run-demo.sh" 2>&1)
rc=$?
fail() { echo "main job: $1"; echo "--- its output:"; echo "$log"; exit 1; }
[ "$rc" -eq 0 ] || fail "exited with $rc"
for want in "CPU SAMPLES BEGIN" "SITES BEGIN" "demo.DemoApp" "Full report: $out/java.hprof.txt" \
  "Flame graphs (CPU, allocation, monitors): $out/profile.html" "jvmprof serve"; do
  grep -qF "$want" <<<"$log" || fail "printed no '$want'"
done
for want in "JAVA PROFILE 1.0.1" "CPU SAMPLES BEGIN" "CPU SAMPLES END" "SITES BEGIN" "SITES END"; do
  grep -qF "$want" "$out/java.hprof.txt" || fail "report holds no '$want'"
done
# The page is self-contained (nothing fetched from the network) and holds both flame graphs, with
# the demo's hot method in them (isPrime, over half of its CPU samples; main itself samples rarely).
page="$out/profile.html"
[ -s "$page" ] || fail "wrote no profile.html"
grep -qE '(src|href)="https?:' "$page" && fail "profile.html loads something from the network"
for want in '"measure":"cpu-samples"' '"measure":"alloc-bytes"' '"n":"demo.DemoApp.isPrime"'; do
  grep -qF "$want" "$page" || fail "profile.html holds no '$want'"
done
echo "main job: ok"
