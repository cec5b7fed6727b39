// SPDX-License-Identifier: Apache-2.0
#include "summary_check.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <tuple>

#include "analysis.h"
#include "heap_index.h"

namespace analysis_test {

void expect_saved_summary_equals_walked(const std::string& dump) {
  struct stat st;
  ASSERT_EQ(::stat(dump.c_str(), &st), 0) << dump;
  const analysis::detail::DumpIdentity identity{
      static_cast<uint64_t>(st.st_size),
      int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec};
  auto index = analysis::detail::load_index(dump + ".jvmprof-index", identity);
  ASSERT_NE(index, nullptr) << "no saved index beside " << dump;
  const analysis::detail::IndexSummary walked = analysis::detail::summarize_index(*index);
  ASSERT_EQ(walked.per_class.size(), index->classes.size());
  EXPECT_TRUE(index->summary == walked) << dump;

  auto d = analysis::HeapDump::open(dump);
  const analysis::DumpSummary s = d->summary();
  EXPECT_TRUE(s.index_reused);
  EXPECT_EQ(s.objects, index->node_count);
  EXPECT_EQ(s.instances, walked.instances);
  EXPECT_EQ(s.object_arrays, walked.object_arrays);
  EXPECT_EQ(s.primitive_arrays, walked.primitive_arrays);
  EXPECT_EQ(s.classes, walked.classes);
  EXPECT_EQ(s.gc_roots, walked.gc_roots);
  EXPECT_EQ(s.shallow_bytes, walked.shallow_bytes);
  EXPECT_EQ(s.reachable_objects, walked.reachable_objects);
  EXPECT_EQ(s.reachable_bytes, walked.reachable_bytes);
  EXPECT_EQ(s.unreachable_objects, walked.unreachable_objects);
  EXPECT_EQ(s.unreachable_bytes, walked.unreachable_bytes);
  EXPECT_EQ(s.weakly_reachable_objects, index->counts.weakly_reachable);
  EXPECT_EQ(s.objects, s.instances + s.object_arrays + s.primitive_arrays + s.classes);

  // The whole histogram: every class with an instance, in the histogram's order.
  using Row = std::tuple<std::string, uint64_t, uint64_t, uint64_t>;
  std::vector<Row> expected, got;
  for (size_t k = 0; k < walked.per_class.size(); ++k) {
    const auto& t = walked.per_class[k];
    if (t.instances > 0)
      expected.emplace_back(index->classes[k].name, t.instances, t.shallow_bytes, t.retained_bytes);
  }
  std::sort(expected.begin(), expected.end(), [](const Row& a, const Row& b) {
    return std::get<2>(a) != std::get<2>(b) ? std::get<2>(a) > std::get<2>(b)
                                            : std::get<0>(a) < std::get<0>(b);
  });
  for (const analysis::ClassStats& c : d->class_histogram())
    got.emplace_back(c.name, c.instances, c.shallow_bytes, c.retained_bytes);
  ASSERT_FALSE(expected.empty());
  // Equal names and shallow sizes may come in either order: compare as sorted sets too.
  EXPECT_EQ(got.size(), expected.size()) << dump;
  std::vector<Row> got_sorted = got, expected_sorted = expected;
  std::sort(got_sorted.begin(), got_sorted.end());
  std::sort(expected_sorted.begin(), expected_sorted.end());
  EXPECT_EQ(got_sorted, expected_sorted) << dump;
  for (size_t i = 0; i < std::min(got.size(), expected.size()); ++i) {
    EXPECT_EQ(std::get<0>(got[i]), std::get<0>(expected[i])) << dump << " row " << i;
    EXPECT_EQ(std::get<2>(got[i]), std::get<2>(expected[i])) << dump << " row " << i;
  }
}

}  // namespace analysis_test
