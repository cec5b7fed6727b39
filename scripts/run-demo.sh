#!/usr/bin/env bash
# The main job: runs the bundled demo application under HPROF (CPU sampling and allocation sites)
# on the JVMPI runtime, and leaves the report in demo-output/java.hprof.txt and its CPU and
# allocation flame graphs, one self-contained page, in demo-output/profile.html.
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
LD_LIBRARY_PATH="$build_dir/lib" "$java_home/bin/java" \
  "-agentlib:hprof=cpu=samples,heap=sites,depth=6,file=$report" \
  -cp "$build_dir/java/demo-classes" demo.DemoApp 12
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
"$build_dir/src/jvmprof/jvmprof" convert --to html --measure cpu-samples --measure alloc-bytes \
  --measure alloc-objects "$report" "$html"
echo "Flame graphs (CPU, allocation): $html"
echo
echo "To watch the demo live instead: start the front end, then the demo sending to it:"
echo "  $build_dir/src/jvmprof/jvmprof serve      # prints the UI's URL with its token"
echo "  LD_LIBRARY_PATH=$build_dir/lib $java_home/bin/java \\"
echo "    -agentlib:hprof=cpu=samples,heap=sites,depth=6,net=127.0.0.1:7370 \\"
echo "    -cp $build_dir/java/demo-classes demo.DemoApp 12"
