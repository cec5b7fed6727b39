// The text heap dump (format=a) where scripts look, as JDK 8 wrote it: an ARR's sz is its
// elements' bytes without header, an object array names its own array class (name and ID of a
// CLS record), and every class record and system-class root has a name.
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

INSTANTIATE_FOR_JDKS(HeapTextTest);

}  // namespace
}  // namespace hproftest
