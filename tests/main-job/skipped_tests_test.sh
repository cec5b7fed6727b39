#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts/skipped_tests.py on the JUnit file of a real CTest run: a small project with a test
# that passes, one that skips by exit code (a script's "skipped: ..." line) and one that skips the
# way GoogleTest does (GTEST_SKIP's "Skipped" and message, matched by the skip expression that
# gtest_discover_tests sets); the summary names the two skipped tests with their reasons, and
# not the one that passed.
#
#   skipped_tests_test.sh SKIPPED_TESTS_PY
set -euo pipefail
summary_py=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir -p "$work/src"
cat > "$work/src/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(skips NONE)
enable_testing()
add_test(NAME passes COMMAND sh -c "echo fine")
add_test(NAME script_skip COMMAND sh -c "echo 'skipped: /opt/jdk-42 is not installed'; exit 77")
set_tests_properties(script_skip PROPERTIES SKIP_RETURN_CODE 77)
add_test(NAME gtest_skip COMMAND sh -c "printf '%s\\n' '[ RUN      ] Jdk.Runs' \
  'jdk_test.cpp:19: Skipped' 'the file system of /tmp refuses O_DIRECT' \
  '[  SKIPPED ] Jdk.Runs (0 ms)'")
set_tests_properties(gtest_skip PROPERTIES SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
CMAKE
cmake -S "$work/src" -B "$work/build" > /dev/null
(cd "$work/build" && ctest --output-junit "$work/junit.xml" > "$work/ctest.log") ||
  fail "ctest: $(cat "$work/ctest.log")"
out=$(python3 "$summary_py" "$work/junit.xml")
echo "$out"
grep -qx "skipped tests: 2" <<< "$out" || fail "two skipped tests not counted"
grep -qx "  script_skip: /opt/jdk-42 is not installed" <<< "$out" || fail "script skip's reason"
grep -qx "  gtest_skip: the file system of /tmp refuses O_DIRECT" <<< "$out" ||
  fail "GoogleTest skip's reason"
! grep -q "passes" <<< "$out" || fail "a passing test listed as skipped"
echo "ok"
