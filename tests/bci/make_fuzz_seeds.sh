#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Builds a seed corpus for bci_class_file_fuzzer from class files the build already has:
#   tests/bci/make_fuzz_seeds.sh <build dir> <corpus dir>
# The test programs (javac output, the version 49 jsr/ret rewrite made by the behaviour tests)
# and a spread of JDK 17 classes when the jimage fixture has extracted them. Small files only:
# libFuzzer mutates small inputs faster.
set -e
build=$1
corpus=$2
mkdir -p "$corpus"
find "$build/java/bci-test-classes" "$build/tests/bci/behaviour/old-in" -name '*.class' \
  -size -24k -exec cp {} "$corpus" \; 2>/dev/null || true
image="$build/tests/bci/jdk17-image"
if [ -d "$image" ]; then
  n=0
  for f in $(find "$image/java.base/java/lang" "$image/java.base/java/util/concurrent" \
             "$image/jdk.compiler" -name '*.class' -size -6k | sort | awk 'NR % 40 == 1'); do
    n=$((n + 1))
    cp "$f" "$corpus/jdk-$n.class"
  done
fi
ls "$corpus" | wc -l
