// SPDX-License-Identifier: Apache-2.0
// The saved summary section (index format v4): the summary counts and the per-class totals are
// computed once when the index is built and saved with it; a reopened dump's summary() and class
// histogram read them instead of walking every object and the dominator tree. They must equal
// the walked answers, and the section is checked (checksum, padding, sums) at reopen.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "analysis.h"
#include "heap_index.h"
#include "summary_check.h"
#include "synthetic_dump.h"
#include "test_files.h"

using analysis::HeapDump;
using analysis_test::read_file;
using analysis_test::SyntheticDump;
using analysis_test::write_file;
using hprof::BasicType;
using hprof::Value;

namespace {

std::string temp_path(const std::string& name) {
  return analysis_test::temp_path("summary", name);
}

struct Format {
  uint32_t id_size;
  hprof::Version version;
  uint64_t segment_limit;
};

// Everything the summary counts: instances nested under instances of their own class (a chain),
// object and primitive arrays, a weak reference's referent, garbage, two roots naming one
// object, a class whose instances are all unreachable, statics.
SyntheticDump mixed_heap(const Format& f) {
  SyntheticDump dump(f.id_size, f.version, f.segment_limit);
  const uint64_t object = dump.add_class("java/lang/Object", 0, {});
  dump.add_class("java/lang/Class", object, {});
  const uint64_t reference =
      dump.add_class("java/lang/ref/Reference", object,
                     {{"referent", BasicType::kObject}, {"queue", BasicType::kObject}});
  const uint64_t weak = dump.add_class("java/lang/ref/WeakReference", reference, {});
  const uint64_t node = dump.add_class(
      "Node", object,
      {{"next", BasicType::kObject}, {"data", BasicType::kObject}, {"n", BasicType::kInt}});
  const uint64_t node_array = dump.add_class("[LNode;", object, {});
  const uint64_t garbage_class = dump.add_class("Garbage", object, {{"x", BasicType::kLong}});
  uint64_t next = 0;
  std::vector<uint64_t> chain;
  for (int i = 0; i < 500; ++i) {
    const uint64_t data = i % 4 == 0 ? dump.add_int_array(static_cast<uint32_t>(i % 9)) : 0;
    next =
        dump.add_instance(node, {Value::of_object(next), Value::of_object(data), Value::of_int(i)});
    chain.push_back(next);
  }
  const uint64_t array = dump.add_object_array(node_array, {chain[10], chain[200], 0, chain[499]});
  dump.add_class("Holder", object, {}, {{"items", array}});
  const uint64_t payload = dump.add_byte_array(std::vector<uint8_t>(300, 7));
  const uint64_t ref = dump.add_instance(weak, {Value::of_object(payload), Value::of_object(0)});
  dump.add_root(hprof::SubTag::kRootJniGlobal, ref);
  dump.add_root(hprof::SubTag::kRootJniGlobal, chain[499]);
  dump.add_root(hprof::SubTag::kRootStickyClass, chain[499]);  // the same object again
  for (int i = 0; i < 20; ++i) dump.add_instance(garbage_class, {Value::of_long(i)});
  dump.add_byte_array(std::vector<uint8_t>(33, 1));  // unreachable
  return dump;
}

class SavedSummary : public testing::TestWithParam<Format> {};

TEST_P(SavedSummary, EqualsTheWalkedSummaryAndHistogram) {
  const std::string path = temp_path("mixed-" + std::to_string(GetParam().id_size) + "-" +
                                     std::to_string(GetParam().segment_limit) + ".hprof");
  std::filesystem::remove(path + ".jvmprof-index");
  mixed_heap(GetParam()).write(path);
  auto built = HeapDump::open(path);
  ASSERT_FALSE(built->summary().index_reused);
  analysis_test::expect_saved_summary_equals_walked(path);
  // The first open (built, not read back) gives the same as the reopened one.
  auto reopened = HeapDump::open(path);
  const auto a = built->summary(), b = reopened->summary();
  EXPECT_EQ(a.objects, b.objects);
  EXPECT_EQ(a.unreachable_objects, b.unreachable_objects);
  EXPECT_EQ(a.unreachable_bytes, b.unreachable_bytes);
  EXPECT_EQ(a.gc_roots, b.gc_roots);
  // What the planted heap says: 21 unreachable objects (20 Garbage and a byte[33]), the roots
  // naming two distinct objects besides the class objects (sticky), Node retaining the chain.
  EXPECT_EQ(b.unreachable_objects, 21u);
  EXPECT_EQ(b.classes, 8u);
  EXPECT_EQ(b.gc_roots, 2u + b.classes);
  const auto histogram = reopened->class_histogram();
  const auto node = std::find_if(histogram.begin(), histogram.end(),
                                 [](const analysis::ClassStats& c) { return c.name == "Node"; });
  ASSERT_NE(node, histogram.end());
  EXPECT_EQ(node->instances, 500u);
  EXPECT_GT(node->retained_bytes, node->shallow_bytes) << "the int[]s below the chain";
}

INSTANTIATE_TEST_SUITE_P(Formats, SavedSummary,
                         testing::Values(Format{4, hprof::Version::k1_0_1, 2'000'000'000},
                                         Format{8, hprof::Version::k1_0_2, 4096},
                                         Format{8, hprof::Version::k1_0_2, 2'000'000'000}),
                         [](const auto& info) {
                           const Format& f = info.param;
                           const char* kind = f.version == hprof::Version::k1_0_1 ? "_v101"
                                              : f.segment_limit < 1'000'000       ? "_segments"
                                                                                  : "_v102";
                           return "ids" + std::to_string(f.id_size) + kind;
                         });

// A reopened dump's summary and histogram read only the summary section: the per-object sections
// they used to walk (sizes, classes, dominators, retained sizes, roots) may even be corrupt, and
// it is noticed only by the first query that reads them.
TEST(SavedSummaryTest, ReopenedSummaryReadsNoObjectSection) {
  const std::string path = temp_path("untouched.hprof");
  const std::string index = path + ".jvmprof-index";
  std::filesystem::remove(index);
  mixed_heap({8, hprof::Version::k1_0_2, 1 << 16}).write(path);
  auto first = HeapDump::open(path);
  const auto expected = first->summary();
  const auto expected_histogram = first->class_histogram();
  const std::vector<char> original = read_file(index);
  const auto layout = analysis::detail::index_file_layout(index);
  ASSERT_EQ(layout.size(), 1u + analysis::detail::kSectionCount);
  std::vector<char> bad = original;
  for (int s : {analysis::detail::kNodeClass, analysis::detail::kNodeSize8, analysis::detail::kIdom,
                analysis::detail::kRetained, analysis::detail::kRoots}) {
    const auto [at, bytes] = layout[1 + s];
    ASSERT_GT(bytes, 0u);
    bad[at + bytes / 2] = static_cast<char>(bad[at + bytes / 2] ^ 0x5A);
  }
  write_file(index, bad);
  testing::internal::CaptureStderr();
  auto d = HeapDump::open(path);
  const auto s = d->summary();
  const auto histogram = d->class_histogram();
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_TRUE(s.index_reused);
  EXPECT_EQ(s.objects, expected.objects);
  EXPECT_EQ(s.reachable_bytes, expected.reachable_bytes);
  EXPECT_EQ(s.gc_roots, expected.gc_roots);
  ASSERT_EQ(histogram.size(), expected_histogram.size());
  for (size_t i = 0; i < histogram.size(); ++i) {
    EXPECT_EQ(histogram[i].name, expected_histogram[i].name);
    EXPECT_EQ(histogram[i].retained_bytes, expected_histogram[i].retained_bytes);
  }
  // A query over the objects finds the corruption, says so and rebuilds.
  testing::internal::CaptureStderr();
  EXPECT_EQ(d->biggest_objects(1, 1).size(), 1u);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("section is corrupt"), std::string::npos);
  EXPECT_EQ(read_file(index), original);
}

// Every byte of the summary section is checked at reopen: a flipped one has the index rebuilt at
// open, silently, as a stale one, with the same answers; no number is shown from a bad section.
TEST(SavedSummaryTest, CorruptSummarySectionIsRebuiltAtReopen) {
  const std::string path = temp_path("corrupt.hprof");
  const std::string index = path + ".jvmprof-index";
  std::filesystem::remove(index);
  mixed_heap({4, hprof::Version::k1_0_2, 1 << 16}).write(path);
  const auto expected = HeapDump::open(path)->class_histogram();
  const std::vector<char> original = read_file(index);
  const auto layout = analysis::detail::index_file_layout(index);
  ASSERT_EQ(layout.size(), 1u + analysis::detail::kSectionCount);
  const auto [at, bytes] = layout[1 + analysis::detail::kSummary];
  ASSERT_GE(bytes, 8u * (10 + 3 * 8));  // the counts and at least 8 classes
  // Every byte of the counts, then a sample of the per-class rows, and the alignment padding.
  std::vector<uint64_t> flips;
  for (uint64_t b = at; b < at + 80; ++b) flips.push_back(b);
  for (uint64_t b = at + 80; b < at + bytes; b += 5) flips.push_back(b);
  if ((at + bytes) % 8 != 0) flips.push_back(at + bytes);
  for (uint64_t b : flips) {
    std::vector<char> bad = original;
    bad[b] = static_cast<char>(bad[b] ^ 0x01);
    write_file(index, bad);
    testing::internal::CaptureStderr();
    auto d = HeapDump::open(path);
    EXPECT_FALSE(d->summary().index_reused) << "flipped byte " << b - at << " of the section";
    const auto histogram = d->class_histogram();
    ASSERT_EQ(histogram.size(), expected.size());
    for (size_t i = 0; i < histogram.size(); ++i) {
      EXPECT_EQ(histogram[i].instances, expected[i].instances) << b;
      EXPECT_EQ(histogram[i].retained_bytes, expected[i].retained_bytes) << b;
    }
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "") << b;
    EXPECT_EQ(read_file(index), original) << "flipped byte " << b - at << " of the section";
  }
  analysis_test::expect_saved_summary_equals_walked(path);
}

}  // namespace
