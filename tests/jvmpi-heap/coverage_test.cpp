// SPDX-License-Identifier: Apache-2.0
// Allocation coverage: for every way a program gets a new object (bytecode in the interpreter and
// in JIT-compiled code, reflection, clone, JNI, method handles, deserialization, boxing, string
// concatenation, VM-thrown exceptions, lambdas, proxies, Unsafe, a new thread), the share of those
// very objects (by object ID) that OBJECT_ALLOC reported. docs/jvmpi-conformance.md (event 4)
// claims all of them, so each path must be at 100%. Prints the table docs/allocation-coverage.md
// quotes. Program: java/heap-tests/jvmpiheap/CoverageProgram.java.
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>

#include "heap_test.h"

namespace jvmpiheap {
namespace {

struct PathResult {
  std::string name;
  long expected = 0;
  long reported = 0;
};

std::vector<PathResult> read_cover_lines(const std::string& out) {
  std::vector<PathResult> list;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("COVER ", 0) != 0) continue;
    // The path name has spaces; the two numbers are the last words.
    const auto last = line.rfind(' ');
    const auto before = line.rfind(' ', last - 1);
    PathResult p;
    p.name = line.substr(6, before - 6);
    p.expected = std::stol(line.substr(before + 1, last - before - 1));
    p.reported = std::stol(line.substr(last + 1));
    list.push_back(p);
  }
  return list;
}

class AllocationCoverage : public HeapTest {};

TEST_P(AllocationCoverage, EveryAllocationPathIsReported) {
  // -Xbatch: the thread that triggers a compilation waits for it, so the hot path runs compiled.
  const LaunchResult r =
      run_java("alloc", "", "jvmpiheap.CoverageProgram", {}, {"-Xbatch", "-XX:+PrintCompilation"});
  expect_clean_exit(r);
  const auto paths = read_cover_lines(r.out);
  ASSERT_EQ(paths.size(), 27u) << r.out;

  // -XX:+PrintCompilation lines: "<time> <id> <flags> <tier> <Class::method> ..."; tier 4 is C2.
  bool hot_compiled = false;
  {
    std::istringstream lines(r.out);
    std::string line;
    while (std::getline(lines, line)) {
      std::istringstream words(line);
      std::string previous, word;
      while (words >> word) {
        if (word == "jvmpiheap.CoverageProgram::hotNew" && previous == "4") hot_compiled = true;
        previous = word;
      }
    }
  }
  std::printf("\nAllocation coverage on %s (hotNew JIT-compiled: %s)\n\n", jdk().name.c_str(),
              hot_compiled ? "yes" : "no");
  std::printf("| path | expected | reported | coverage |\n|---|---:|---:|---:|\n");
  for (const auto& p : paths) {
    std::printf("| %s | %ld | %ld | %.1f%% |\n", p.name.c_str(), p.expected, p.reported,
                p.expected == 0
                    ? 0.0
                    : 100.0 * static_cast<double>(p.reported) / static_cast<double>(p.expected));
  }
  std::printf("\n");
  for (const auto& p : paths) {
    EXPECT_EQ(p.expected, 200) << p.name << ": the program did not make 200 distinct objects";
    EXPECT_EQ(p.reported, p.expected) << p.name << ": objects missing from OBJECT_ALLOC";
  }
  EXPECT_TRUE(hot_compiled) << "hotNew was not C2-compiled; the compiled-code path is untested";
}

INSTANTIATE_TEST_SUITE_P(Jdks, AllocationCoverage, testing::ValuesIn(all_jdks()), jdk_param_name);

}  // namespace
}  // namespace jvmpiheap
