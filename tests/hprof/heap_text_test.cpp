// SPDX-License-Identifier: Apache-2.0
// The text heap dump (format=a) where scripts look, as JDK 8 wrote it: an ARR's sz is its
// elements' bytes without header, an object array names its own array class (name and ID of a
// CLS record), and every class record and system-class root has a name.
#include <map>
#include <regex>

#include "hprof_test.h"

namespace hproftest {
namespace {

class HeapTextTest : public HprofTest {};

TEST_P(HeapTextTest, ArraysAndClassesAsJdk8WroteThem) {
  const RunResult run = Run("heap=dump", "hproftest.PlantedHeap");
  ASSERT_TRUE(run.exited(0)) << run.describe();
  const std::string text = ReadFile(path("java.hprof.txt"));
  ASSERT_NE(text.find("HEAP DUMP END"), std::string::npos) << run.describe();
  // PlantedHeap.ARRAYS holds int[1] ... int[40]: sz = 4 * nelems for each.
  static const std::regex int_array(
      R"(ARR [0-9a-f]+ \(sz=(\d+), trace=\d+, nelems=(\d+), elem type=int\[\]\))");
  size_t int_arrays = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), int_array);
       it != std::sregex_iterator(); ++it) {
    EXPECT_EQ(std::stoul((*it)[1]), 4 * std::stoul((*it)[2])) << it->str();
    ++int_arrays;
  }
  EXPECT_GE(int_arrays, 40u);
  // new int[40][] (ARRAYS): an array of int[], naming the class int[][] by its CLS record's ID.
  static const std::regex nested(
      R"(ARR [0-9a-f]+ \(sz=160, trace=\d+, nelems=40, elem type=int\[\]\[\]@([0-9a-f]+)\))");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, nested)) << "no ARR for PlantedHeap.ARRAYS";
  EXPECT_NE(text.find("CLS " + m[1].str() + " (name=int[][],"), std::string::npos)
      << "the ARR's class ID is not int[][]'s CLS record";
  EXPECT_EQ(text.find("<Unknown Class>"), std::string::npos) << "a class without a name";
  // A class's CLS record names the trace it was loaded at: Leaf is loaded by PlantedHeap.main.
  static const std::regex leaf(
      R"(CLS [0-9a-f]+ \(name=hproftest\.PlantedHeap\$Leaf, trace=(\d+)\))");
  ASSERT_TRUE(std::regex_search(text, m, leaf)) << "no CLS record for PlantedHeap$Leaf";
  const std::string trace_head = "TRACE " + m[1].str() + ":";
  const size_t at = text.find(trace_head);
  ASSERT_NE(at, std::string::npos) << "no TRACE " << m[1] << " for Leaf's load";
  const size_t end = text.find("TRACE ", at + trace_head.size());
  EXPECT_NE(text.substr(at, end - at).find("hproftest.PlantedHeap.main"), std::string::npos)
      << text.substr(at, end - at);
}

// Every thread alive at the dump is a <thread> root naming its thread object and serial, as JDK 8
// wrote one per entry of its thread table (PlantedHeap with 5 parked threads).
TEST_P(HeapTextTest, OneThreadRootPerLiveThread) {
  const RunResult run = Run("heap=dump", "hproftest.PlantedHeap", {"5"});
  ASSERT_TRUE(run.exited(0)) << run.describe();
  const std::string text = ReadFile(path("java.hprof.txt"));
  ASSERT_NE(text.find("HEAP DUMP END"), std::string::npos) << run.describe();
  const size_t dump_at = text.find("HEAP DUMP BEGIN");
  std::map<std::string, std::string> live;  // serial -> thread object, before the dump
  static const std::regex start(
      R"re(THREAD START \(obj=([0-9a-f]+), id = (\d+), name="([^"]*)")re");
  static const std::regex end(R"(THREAD END \(id = (\d+)\))");
  const std::string before = text.substr(0, dump_at);
  size_t parked = 0;
  for (auto it = std::sregex_iterator(before.begin(), before.end(), start);
       it != std::sregex_iterator(); ++it) {
    live[(*it)[2]] = (*it)[1];
    parked += (*it)[3].str().rfind("parked-", 0) == 0;
  }
  for (auto it = std::sregex_iterator(before.begin(), before.end(), end);
       it != std::sregex_iterator(); ++it) {
    live.erase((*it)[1]);
  }
  EXPECT_EQ(parked, 5u) << "THREAD START of the five parked threads";
  ASSERT_GE(live.size(), 5u);
  static const std::regex root(R"(ROOT ([0-9a-f]+) \(kind=<thread>, id=(\d+), trace=\d+\))");
  std::map<std::string, std::string> roots;
  for (auto it = std::sregex_iterator(text.begin() + dump_at, text.end(), root);
       it != std::sregex_iterator(); ++it) {
    EXPECT_TRUE(roots.emplace((*it)[2], (*it)[1]).second) << "two roots for thread " << (*it)[2];
  }
  for (const auto& [serial, object] : live) {
    auto it = roots.find(serial);
    ASSERT_NE(it, roots.end()) << "no <thread> root for live thread " << serial;
    EXPECT_EQ(it->second, object) << "thread " << serial << "'s root names another object";
  }
  EXPECT_EQ(roots.count("200000"), 0u) << "a root for a thread serial never issued";
}

INSTANTIATE_FOR_JDKS(HeapTextTest);

}  // namespace
}  // namespace hproftest
