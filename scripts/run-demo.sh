#!/usr/bin/env bash
# The main job: runs the bundled demo application under the JVMPI runtime with the sample agent,
# and writes what the agent observed to demo-output/jvmpi-sample-report.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
java_home="${JAVA_HOME_17:-/usr/lib/jvm/java-17-openjdk-amd64}"
mkdir -p demo-output
report="$PWD/demo-output/jvmpi-sample-report.txt"
"$java_home/bin/java" \
  "-agentpath:$PWD/build/src/jvmpi/libjvmpi.so=$PWD/build/src/sample-agent/libjvmpi_sample.so:file=$report" \
  -cp build/java/demo-classes demo.DemoApp 12
cat "$report"
echo
echo "Report written to $report"
