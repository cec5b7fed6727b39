#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job: runs the bundled demo application under HPROF (CPU samples every millisecond,
# allocation sites, monitor contention) on the JVMPI runtime for a few seconds, and leaves the
# report in demo-output/java.hprof.txt and its CPU, allocation and monitor flame graphs, one
# self-contained page saying what ran where and how, in demo-output/profile.html.
# DEMO_BUILD_DIR and DEMO_OUTPUT_DIR (default build/ and demo-output/) let the test suite run it
# against its own build without writing into the source tree.
source "$(dirname "$0")/script_args.sh"
script_args "$@"
set -euo pipefail
cd "$(dirname "$0")/.."
java_home="${JAVA_HOME_17:-/usr/lib/jvm/java-17-openjdk-amd64}"
build_dir=$(cd "${DEMO_BUILD_DIR:-build}" && pwd)
output_dir="${DEMO_OUTPUT_DIR:-$PWD/demo-output}"
mkdir -p "$output_dir"
report="$(cd "$output_dir" && pwd)/java.hprof.txt"
rm -f "$report"
# interval=1: a sample every millisecond, several thousand over the run; monitor=y: the demo's
# threads contend on one lock; depth=10: deep enough for the demo's own frames, and the stacks
# cut there are marked as cut on the page; sample=512k: allocation sites sampled, as a service
# would run them (exact counts, sample=0, cost the demo several times its CPU time).
interval=1
depth=10
rounds=60
options="cpu=samples,interval=$interval,depth=$depth,heap=sites,sample=512k,monitor=y"
started=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
start_ns=$(date +%s%N)
LD_LIBRARY_PATH="$build_dir/lib" "$java_home/bin/java" \
  "-agentlib:hprof=$options,file=$report" \
  -cp "$build_dir/java/demo-classes" demo.DemoApp "$rounds"
elapsed_ms=$((($(date +%s%N) - start_ns) / 1000000))
# The first lines of a report section. One awk reading the whole file: a pipe into head would
# end the writer with SIGPIPE on a long section, which pipefail turns into a failed main job.
section_head() {
  awk -v from="^$1 BEGIN" -v to="^$1 END" \
    '$0 ~ from { on = 1 } on && n < 12 { print; n++ } $0 ~ to { on = 0 }' "$report"
}
echo
section_head "CPU SAMPLES"
echo
section_head "SITES"
echo
echo "Full report: $report"
html="$(dirname "$report")/profile.html"
# The JVM's own name for itself, e.g. "OpenJDK 64-Bit Server VM 17.0.15+6-Debian-1deb12u1".
jvm=$("$java_home/bin/java" -XshowSettings:properties -version 2>&1 |
  awk -F' = ' '/^ *java.vm.name = / { name = $2 } /^ *java.runtime.version = / { v = $2 }
               END { print name " " v }')
"$build_dir/src/jvmprof/jvmprof" convert --to html --measure cpu-samples --measure alloc-bytes \
  --measure alloc-objects --measure monitor-time --depth "$depth" \
  --context "program=demo.DemoApp $rounds (the bundled demo application)" \
  --context "date=$started" \
  --context "duration=$(printf '%d.%03d' $((elapsed_ms / 1000)) $((elapsed_ms % 1000))) s (wall clock, JVM start to exit)" \
  --context "JVM=$jvm" \
  --context "HPROF options=-agentlib:hprof=$options" \
  --context "interval=$interval ms between CPU samples" \
  --context "depth=$depth frames per stack at most" \
  "$report" "$html"
echo "Flame graphs (CPU, allocation, monitors): $html"
echo
echo "To watch the demo live instead: start the front end, then the demo sending to it:"
echo "  $build_dir/src/jvmprof/jvmprof serve      # prints the UI's URL with its token"
echo "  LD_LIBRARY_PATH=$build_dir/lib $java_home/bin/java \\"
echo "    -agentlib:hprof=$options,net=127.0.0.1:7370 \\"
echo "    -cp $build_dir/java/demo-classes demo.DemoApp $rounds"
