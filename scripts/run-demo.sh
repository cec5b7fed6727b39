#!/usr/bin/env bash
# The main job: runs the bundled demo application under HPROF (CPU sampling and allocation sites)
# on the JVMPI runtime, and leaves the report in demo-output/java.hprof.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
java_home="${JAVA_HOME_17:-/usr/lib/jvm/java-17-openjdk-amd64}"
mkdir -p demo-output
report="$PWD/demo-output/java.hprof.txt"
LD_LIBRARY_PATH="$PWD/build/lib" "$java_home/bin/java" \
  "-agentlib:hprof=cpu=samples,heap=sites,depth=6,file=$report" \
  -cp build/java/demo-classes demo.DemoApp 12
echo
sed -n '/^CPU SAMPLES BEGIN/,/^CPU SAMPLES END/p' "$report" | head -12
echo
sed -n '/^SITES BEGIN/,/^SITES END/p' "$report" | head -12
echo
echo "Full report: $report"
