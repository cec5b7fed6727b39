// SPDX-License-Identifier: Apache-2.0
// Allocation accounting: OBJECT_ALLOC and OBJECT_FREE counted per class against a Java program
// that allocates known numbers of known objects and arrays, drops a known third of them, collects
// until each dropped one is gone, and keeps the rest (java/heap-tests/jvmpiheap/AllocProgram.java).
#include <gtest/gtest.h>

#include <sstream>

#include "alloc_report.h"
#include "heap_test.h"

namespace jvmpiheap {
namespace {

struct Expectation {
  std::string label, name;
  long total = 0, live = 0;
  int length = -1;  // arrays: the length of every array of this kind; -1 for instances
  int payload = 0;  // instances: bytes of fields (references as 4); arrays: element size
};

std::vector<Expectation> read_expectations(const std::string& out) {
  std::vector<Expectation> list;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("EXPECT ", 0) != 0) continue;
    std::istringstream s(line.substr(7));
    Expectation e;
    s >> e.label >> e.name >> e.total >> e.live >> e.length >> e.payload;
    list.push_back(e);
  }
  return list;
}

int align8(long n) {
  return static_cast<int>((n + 7) / 8 * 8);
}

// The size OBJECT_ALLOC reports is the VM's: header plus data, 8-byte aligned. Accept any
// HotSpot layout (compressed or full class pointers and references), nothing else.
void expect_plausible_size(const Expectation& e, const AllocStat& s) {
  SCOPED_TRACE(e.label + " " + e.name);
  EXPECT_GT(s.min_size, 0);
  EXPECT_EQ(s.min_size, s.max_size) << "objects of one kind and length differ in size";
  EXPECT_EQ(s.min_size % 8, 0);
  if (e.length < 0) {
    // Header 12..16 bytes; reference fields 4 or 8 bytes.
    EXPECT_GE(s.min_size, std::max(16, align8(12 + e.payload)));
    EXPECT_LE(s.min_size, align8(16 + 2L * e.payload));
  } else {
    const bool refs = e.name.size() > 1 && (e.name[1] == 'L' || e.name[1] == '[');
    const long lo = 16 + static_cast<long>(e.length) * e.payload;
    const long hi = 24 + static_cast<long>(e.length) * (refs ? 8 : e.payload);
    EXPECT_GE(s.min_size, align8(lo));
    EXPECT_LE(s.min_size, align8(hi));
  }
}

class AllocationAccounting : public HeapTest {};

TEST_P(AllocationAccounting, ExactLiveAndTotalCountsPerClass) {
  const LaunchResult r = run_java("alloc", "", "jvmpiheap.AllocProgram");
  expect_clean_exit(r);
  const Facts facts(r.out);
  ASSERT_EQ(facts.get("all_cleared"), "true") << "the JVM did not collect the dropped objects";
  const long dropped = facts.num("dropped_objects");
  ASSERT_GT(dropped, 0);
  const bool frees_in_time = facts.num("freed_seen") == dropped;
  EXPECT_TRUE(frees_in_time) << "OBJECT_FREE arrived for " << facts.num("freed_seen") << " of the "
                             << dropped << " dropped objects after the collection that freed "
                             << "them (waited up to 5 s); checkpoint.txt has no live counts";

  const auto expectations = read_expectations(r.out);
  ASSERT_EQ(expectations.size(), 20u) << r.out;
  // checkpoint.txt: written by the program once every dropped object's OBJECT_FREE arrived, while
  // it still runs; final.txt: written by the agent at JVM_SHUT_DOWN.
  for (const std::string file : {"checkpoint.txt", "final.txt"}) {
    SCOPED_TRACE(file);
    if (file == "checkpoint.txt" && !frees_in_time) continue;
    const AllocReport report = read_alloc_report(out_dir() + "/" + file);
    ASSERT_TRUE(report.present);
    for (const auto& e : expectations) {
      auto it = report.stats.find({e.label, e.name});
      ASSERT_NE(it, report.stats.end()) << "no OBJECT_ALLOC for " << e.label << " " << e.name;
      const AllocStat& s = it->second;
      EXPECT_EQ(s.total, e.total) << "allocations of " << e.name << " in " << e.label;
      EXPECT_EQ(s.total - s.freed, e.live) << "live " << e.name << " in " << e.label;
      expect_plausible_size(e, s);
    }
    // The windows hold nothing the program did not allocate: every counted kind is expected.
    for (const auto& [key, s] : report.stats) {
      bool known = false;
      for (const auto& e : expectations) known |= e.label == key.first && e.name == key.second;
      EXPECT_TRUE(known) << "unexpected allocations in window " << key.first << ": " << s.total
                         << " x " << key.second;
    }
    EXPECT_EQ(report.counter("alloc_null_id"), 0);
    EXPECT_EQ(report.counter("free_outside_gc"), 0) << "OBJECT_FREE outside GC_START/GC_FINISH";
    EXPECT_EQ(report.counter("free_unknown"), 0) << "OBJECT_FREE of IDs no OBJECT_ALLOC defined";
  }
}

INSTANTIATE_TEST_SUITE_P(Jdks, AllocationAccounting, testing::ValuesIn(all_jdks()), jdk_param_name);

}  // namespace
}  // namespace jvmpiheap
