// SPDX-License-Identifier: Apache-2.0
// The saved index's per-section checks (index format v3, v4): reopen checks the header (with the
// section table) and the small class and summary sections only; every other section is checked
// on its first use, and one that fails is reported on stderr once and the index rebuilt from the
// dump (saved again, byte for byte the index first built). An index of format v2 is stale:
// rebuilt, never misread.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "analysis.h"
#include "heap_index.h"
#include "synthetic_dump.h"
#include "test_files.h"

using analysis::HeapDump;
using analysis_test::flip_byte;
using analysis_test::read_file;
using analysis_test::SyntheticDump;
using analysis_test::temp_path;
using analysis_test::write_file;
using hprof::BasicType;
using hprof::Value;

namespace {

constexpr const char* kCorrupt = "section is corrupt";

// A chain of 3000 instances held by one root, every third with an int[] beside it.
struct Chain {
  SyntheticDump dump{8, hprof::Version::k1_0_2, 1 << 16};
  std::vector<uint64_t> nodes;
  uint64_t head = 0;

  Chain() {
    const uint64_t object = dump.add_class("java/lang/Object", 0, {});
    const uint64_t node = dump.add_class(
        "Node", object,
        {{"next", BasicType::kObject}, {"data", BasicType::kObject}, {"n", BasicType::kInt}});
    dump.add_class("java/lang/Class", object, {});
    uint64_t next = 0;
    for (int i = 0; i < 3000; ++i) {
      const uint64_t data = i % 3 == 0 ? dump.add_int_array(4) : 0;
      next = dump.add_instance(node,
                               {Value::of_object(next), Value::of_object(data), Value::of_int(i)});
      nodes.push_back(next);
    }
    head = next;
    dump.add_root(hprof::SubTag::kRootJniGlobal, head);
  }
};

struct Saved {
  std::string dump, index;
  std::vector<char> original;  // the index as first built
};

Saved save(const Chain& chain, const std::string& name) {
  Saved s{temp_path("sections", name), "", {}};
  s.index = s.dump + ".jvmprof-index";
  std::filesystem::remove(s.index);
  chain.dump.write(s.dump);
  EXPECT_FALSE(HeapDump::open(s.dump)->summary().index_reused);
  s.original = read_file(s.index);
  return s;
}

// Node i retains the rest of the chain below it: 3000 - i nodes of 24 bytes and the int[4]s
// (32 bytes) of those with an index divisible by 3.
uint64_t retained_by(int i) {
  uint64_t bytes = 0;
  for (int j = 0; j <= i; ++j) bytes += 24 + (j % 3 == 0 ? 32 : 0);
  return bytes;
}

// Flips the byte 1/`part` of the way into SECTION of a v4 index longer than `more_than` bytes.
void flip_in_section(const std::string& index, size_t section, uint64_t part, uint64_t more_than) {
  const auto layout = analysis::detail::index_file_layout(index);
  ASSERT_EQ(layout.size(), 1u + analysis::detail::kSectionCount);
  const auto [at, bytes] = layout[1 + section];
  ASSERT_GT(bytes, more_than);
  flip_byte(index, at + bytes / part);
}

TEST(IndexSections, CorruptIdTableIsFoundAtItsFirstLookupAndTheIndexRebuilt) {
  Chain chain;
  Saved s = save(chain, "idtable.hprof");
  flip_in_section(s.index, analysis::detail::kIdTable, 2, 4000);

  auto d = HeapDump::open(s.dump);
  testing::internal::CaptureStderr();
  // The summary and the histogram do not use the id table: the index is reused, nothing said.
  const auto summary = d->summary();
  EXPECT_TRUE(summary.index_reused);
  EXPECT_EQ(summary.objects, 3000u + 1000u + 3u);
  EXPECT_EQ(summary.reachable_objects, 4000u + 3u);  // the class objects have sticky roots
  EXPECT_EQ(d->class_histogram().at(0).name, "Node");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  // The first lookup checks the table, finds it corrupt, says so once and rebuilds.
  testing::internal::CaptureStderr();
  for (int i = 0; i < 3000; i += 7) {
    const auto o = d->object(chain.nodes[i]);
    ASSERT_TRUE(o.has_value()) << i;
    EXPECT_EQ(o->retained_bytes, retained_by(i)) << i;
  }
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find("id table section is corrupt"), std::string::npos) << said;
  EXPECT_EQ(said.find(kCorrupt), said.rfind(kCorrupt)) << said;  // once
  EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 1) << said;
  EXPECT_FALSE(d->summary().index_reused);
  // The rebuilt index was saved over the bad one: the index first built, byte for byte.
  EXPECT_EQ(read_file(s.index), s.original);
  testing::internal::CaptureStderr();
  auto again = HeapDump::open(s.dump);
  EXPECT_EQ(again->object(chain.head)->retained_bytes, retained_by(2999));
  EXPECT_TRUE(again->summary().index_reused);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

// Request threads share one HeapDump: the first use of a corrupt section by several at once
// rebuilds once, and every thread gets right answers.
TEST(IndexSections, ThreadsMeetingACorruptSectionRebuildOnce) {
  Chain chain;
  Saved s = save(chain, "threads.hprof");
  flip_in_section(s.index, analysis::detail::kEdgeTarget, 3, 0);
  auto d = HeapDump::open(s.dump);
  testing::internal::CaptureStderr();
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = t; i < 3000; i += 97) {
        const auto paths = d->paths_to(chain.nodes[i], 1);
        // Root, then the chain from the head down to node i.
        if (paths.size() != 1 || paths[0].size() != static_cast<size_t>(3000 - i)) ++wrong;
      }
    });
  for (auto& t : threads) t.join();
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_NE(said.find("references section is corrupt"), std::string::npos) << said;
  EXPECT_EQ(said.find(kCorrupt), said.rfind(kCorrupt)) << said;
  EXPECT_EQ(read_file(s.index), s.original);
}

// Every byte of the header (the section table and its checksums in it) and of the class section
// is checked at reopen: a flipped one means the index is rebuilt at open, silently, as a stale
// one; no section is read unchecked.
TEST(IndexSections, CorruptHeaderOrSectionTableFailsAtReopen) {
  Chain chain;
  Saved s = save(chain, "header.hprof");
  const auto layout = analysis::detail::index_file_layout(s.index);
  ASSERT_EQ(layout.size(), 1u + analysis::detail::kSectionCount);
  const auto [header_at, header_bytes] = layout[0];
  const auto [meta_at, meta_bytes] = layout[1 + analysis::detail::kMeta];
  std::vector<uint64_t> bytes;
  for (uint64_t b = header_at; b < header_at + header_bytes; b += 3) bytes.push_back(b);
  for (uint64_t b = meta_at; b < meta_at + meta_bytes; b += 1 + meta_bytes / 20) bytes.push_back(b);
  for (uint64_t at : bytes) {
    write_file(s.index, s.original);
    flip_byte(s.index, at);
    testing::internal::CaptureStderr();
    auto d = HeapDump::open(s.dump);
    // Rebuilt at open: the summary, which reads only a few sections, already says so.
    EXPECT_FALSE(d->summary().index_reused) << "flipped byte " << at;
    EXPECT_EQ(d->object(chain.head)->retained_bytes, retained_by(2999)) << "flipped byte " << at;
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "") << "flipped byte " << at;
    EXPECT_EQ(read_file(s.index), s.original) << "flipped byte " << at;
  }
}

// ---- format v2 (before the per-section checksums), written here as that version wrote it ----

// v2's checksum: FNV-style mixing of 8-byte words, one lane, the tail of each piece mixed with
// its length; over every section in table order, then the header with its checksum field 0.
class ChecksumV2 {
 public:
  void add(const char* p, size_t size) {
    size_t i = 0;
    for (; i + 8 <= size; i += 8) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      mix(w);
    }
    if (i < size) {
      uint64_t tail = 0;
      std::memcpy(&tail, p + i, size - i);
      mix(tail ^ (uint64_t{size - i} << 56));
    }
  }
  uint64_t value() const { return h_; }

 private:
  void mix(uint64_t w) {
    h_ = (h_ ^ w) * 0x100000001b3ull;
    h_ ^= h_ >> 29;
  }
  uint64_t h_ = 0xcbf29ce484222325ull;
};

// The index's first eleven sections (v2 had no summary section) under a v2 header: the same
// fields up to the section table (112 bytes), then {offset, bytes} per section and the v2
// checksum. The bytes between the shorter v2 header and the first section are zero; v2 did not
// read them.
std::vector<char> as_version_2(const std::vector<char>& v3, const std::string& v3_path) {
  static_assert(analysis::detail::kSummary == 11, "v2's eleven sections come first");
  const auto layout = analysis::detail::index_file_layout(v3_path);
  EXPECT_EQ(layout.size(), 1u + analysis::detail::kSectionCount);
  std::vector<char> out = v3;
  constexpr size_t kTable = 112, kChecksumAt = 40;
  const size_t v2_header = kTable + 11 * 16;
  std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(layout[0].second), 0);
  std::memcpy(out.data(), v3.data(), kTable);
  const uint32_t version = 2;
  std::memcpy(out.data() + 8, &version, 4);
  std::memset(out.data() + kChecksumAt, 0, 8);
  ChecksumV2 sum;
  for (size_t i = 0; i < 11; ++i) {
    const auto [offset, bytes] = layout[1 + i];
    std::memcpy(out.data() + kTable + 16 * i, &offset, 8);
    std::memcpy(out.data() + kTable + 16 * i + 8, &bytes, 8);
    sum.add(v3.data() + offset, bytes);
  }
  sum.add(out.data(), v2_header);
  const uint64_t checksum = sum.value();
  std::memcpy(out.data() + kChecksumAt, &checksum, 8);
  return out;
}

TEST(IndexSections, VersionTwoIndexIsStaleAndRebuilt) {
  Chain chain;
  Saved s = save(chain, "v2.hprof");
  write_file(s.index, as_version_2(s.original, s.index));
  EXPECT_TRUE(analysis::detail::index_file_layout(s.index).empty());  // not a v4 index
  testing::internal::CaptureStderr();
  auto d = HeapDump::open(s.dump);
  EXPECT_FALSE(d->summary().index_reused);
  EXPECT_EQ(d->object(chain.nodes[5])->retained_bytes, retained_by(5));
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");  // stale, not corrupt: nothing said
  EXPECT_EQ(read_file(s.index), s.original);              // rebuilt as v4
  EXPECT_TRUE(HeapDump::open(s.dump)->summary().index_reused);
}

// ---- format v3 (before the summary section), written here as that version wrote it ----

// v3's (and v4's) checksum: FNV-style mixing of 8-byte words in four lanes, the tail zero-padded
// to a 32-byte block, the lanes folded with the length.
uint64_t checksum_v3(const char* p, size_t size) {
  auto mix = [](uint64_t h, uint64_t w) {
    h = (h ^ w) * 0x100000001b3ull;
    return h ^ (h >> 29);
  };
  uint64_t lanes[4] = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull, 0x9e3779b97f4a7c15ull,
                       0x7f4a7c159e3779b9ull};
  for (size_t at = 0; at < size; at += 32) {
    char block[32] = {};
    std::memcpy(block, p + at, std::min<size_t>(32, size - at));
    for (int i = 0; i < 4; ++i) {
      uint64_t w;
      std::memcpy(&w, block + 8 * i, 8);
      lanes[i] = mix(lanes[i], w);
    }
  }
  uint64_t h = size;
  for (uint64_t lane : lanes) h = mix(h, lane);
  return mix(h, size);
}

// The v4 index without its summary section, under a v3 header: the same fields up to the
// section table (112 bytes), the first eleven {offset, bytes, checksum} entries, the header
// checksum over those 376 bytes; the file ends where the summary section began.
std::vector<char> as_version_3(const std::vector<char>& v4, const std::string& v4_path) {
  static_assert(analysis::detail::kSummary == 11, "v3's eleven sections come first");
  const auto layout = analysis::detail::index_file_layout(v4_path);
  EXPECT_EQ(layout.size(), 1u + analysis::detail::kSectionCount);
  constexpr size_t kTable = 112, kIndexSizeAt = 32, kChecksumAt = 40, kHeader = kTable + 11 * 24;
  const uint64_t end = layout[1 + analysis::detail::kSummary].first;
  std::vector<char> out(v4.begin(), v4.begin() + static_cast<std::ptrdiff_t>(end));
  std::fill(out.begin() + kHeader, out.begin() + static_cast<std::ptrdiff_t>(layout[0].second), 0);
  const uint32_t version = 3;
  std::memcpy(out.data() + 8, &version, 4);
  std::memcpy(out.data() + kIndexSizeAt, &end, 8);
  std::memset(out.data() + kChecksumAt, 0, 8);
  const uint64_t checksum = checksum_v3(out.data(), kHeader);
  std::memcpy(out.data() + kChecksumAt, &checksum, 8);
  return out;
}

// The checksum above is the format's own: the v4 header, so summed, gives its stored checksum.
TEST(IndexSections, VersionThreeIndexIsStaleAndRebuilt) {
  Chain chain;
  Saved s = save(chain, "v3.hprof");
  const auto layout = analysis::detail::index_file_layout(s.index);
  ASSERT_EQ(layout.size(), 1u + analysis::detail::kSectionCount);
  std::vector<char> header(s.original.begin(),
                           s.original.begin() + static_cast<std::ptrdiff_t>(layout[0].second));
  uint64_t stored;
  std::memcpy(&stored, header.data() + 40, 8);
  std::memset(header.data() + 40, 0, 8);
  ASSERT_EQ(checksum_v3(header.data(), header.size()), stored) << "the test's checksum is v4's";

  write_file(s.index, as_version_3(s.original, s.index));
  EXPECT_TRUE(analysis::detail::index_file_layout(s.index).empty());  // not a v4 index
  testing::internal::CaptureStderr();
  auto d = HeapDump::open(s.dump);
  EXPECT_FALSE(d->summary().index_reused);
  EXPECT_EQ(d->object(chain.nodes[7])->retained_bytes, retained_by(7));
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");  // stale, not corrupt: nothing said
  EXPECT_EQ(read_file(s.index), s.original);              // rebuilt as v4
  EXPECT_TRUE(HeapDump::open(s.dump)->summary().index_reused);
}

}  // namespace
