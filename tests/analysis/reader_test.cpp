// SPDX-License-Identifier: Apache-2.0
// The analyzer on synthetic dumps whose sizes, dominators and paths are known: both identifier
// sizes, 1.0.1 and segmented 1.0.2, weak references, strings, the saved index, gzip input.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "analysis.h"
#include "synthetic_dump.h"
#include "test_files.h"

using analysis::HeapDump;
using analysis_test::FieldSpec;
using analysis_test::SyntheticDump;
using hprof::BasicType;
using hprof::Value;

namespace {

std::string temp_path(const std::string& name) {
  return analysis_test::temp_path("reader", name);
}

const analysis::ClassStats* find_class(const std::vector<analysis::ClassStats>& h,
                                       const std::string& name) {
  for (const auto& c : h)
    if (c.name == name) return &c;
  return nullptr;
}

struct Format {
  uint32_t id_size;
  hprof::Version version;
  uint64_t segment_limit;
};

// Holder.items -> Node[3] {n0, n1, n2}; n0.next -> n1; n2.data -> int[10]; n2.next -> n3.
struct NodeHeap {
  SyntheticDump dump;
  uint64_t n0, n1, n2, n3, ints, array, holder;

  explicit NodeHeap(const Format& f) : dump(f.id_size, f.version, f.segment_limit) {
    uint64_t object = dump.add_class("java/lang/Object", 0, {});
    uint64_t node = dump.add_class(
        "Node", object,
        {{"next", BasicType::kObject}, {"data", BasicType::kObject}, {"value", BasicType::kInt}});
    uint64_t node_array = dump.add_class("[LNode;", object, {});
    ints = dump.add_int_array(10);
    n1 = dump.add_instance(node, {Value::of_object(0), Value::of_object(0), Value::of_int(1)});
    n0 = dump.add_instance(node, {Value::of_object(n1), Value::of_object(0), Value::of_int(0)});
    n3 = dump.add_instance(node, {Value::of_object(0), Value::of_object(0), Value::of_int(3)});
    n2 = dump.add_instance(node, {Value::of_object(n3), Value::of_object(ints), Value::of_int(2)});
    array = dump.add_object_array(node_array, {n0, n1, n2});
    holder = dump.add_class("Holder", object, {}, {{"items", array}});
  }
};

class Reader : public testing::TestWithParam<Format> {};

TEST_P(Reader, SizesHistogramAndRetainedSizes) {
  NodeHeap heap(GetParam());
  const std::string path = temp_path("nodes.hprof");
  heap.dump.write(path);
  auto d = HeapDump::open(path, {.use_index_file = false});
  auto s = d->summary();
  EXPECT_EQ(s.id_size, GetParam().id_size);
  EXPECT_EQ(s.instances, 4u);
  EXPECT_EQ(s.object_arrays, 1u);
  EXPECT_EQ(s.primitive_arrays, 1u);
  EXPECT_EQ(s.classes, 4u);
  EXPECT_EQ(s.unreachable_objects, 0u);
  auto h = d->class_histogram();
  const auto* node = find_class(h, "Node");
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->instances, 4u);
  EXPECT_EQ(node->shallow_bytes, 4u * 24);  // 12-byte header + 3 x 4 bytes, aligned to 8
  // n3 lies below n2 in the dominator tree, so the class counts n0, n1 and n2 (24 + 56 + 24).
  EXPECT_EQ(node->retained_bytes, 24u + 24u + 104u);
  const auto* ints = find_class(h, "int[]");
  ASSERT_NE(ints, nullptr);
  EXPECT_EQ(ints->shallow_bytes, 56u);  // 16 + 10 x 4
  const auto* arrays = find_class(h, "Node[]");
  ASSERT_NE(arrays, nullptr);
  EXPECT_EQ(arrays->shallow_bytes, 32u);  // 16 + 3 x 4, aligned
  EXPECT_EQ(arrays->retained_bytes, 32u + 4 * 24 + 56);
  auto array = d->object(heap.array);
  ASSERT_TRUE(array.has_value());
  EXPECT_EQ(array->retained_bytes, 184u);
  EXPECT_EQ(d->object(heap.n0)->retained_bytes, 24u);
  EXPECT_EQ(d->object(heap.n1)->retained_bytes, 24u) << "two referrers: the array dominates it";
  EXPECT_EQ(d->object(heap.n2)->retained_bytes, 104u);
  auto big = d->biggest_objects(2, 3);
  ASSERT_EQ(big.size(), 2u);
  EXPECT_EQ(big[0].object.class_name, "class Holder");  // a class object is named for its class
  EXPECT_EQ(big[0].object.id, heap.holder);
  EXPECT_EQ(big[1].object.id, heap.array);
  EXPECT_EQ(big[1].retained_objects, 6u);
}

TEST_P(Reader, PathNamesFieldsElementsAndStatics) {
  NodeHeap heap(GetParam());
  const std::string path = temp_path("nodes-path.hprof");
  heap.dump.write(path);
  auto d = HeapDump::open(path, {.use_index_file = false});
  auto paths = d->paths_to(heap.n1, 5);
  ASSERT_EQ(paths.size(), 2u) << "one path through n0.next, one through the array";
  const auto& p = paths[0];
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].via, "root: system class");
  EXPECT_EQ(p[0].object.id, heap.holder);
  EXPECT_EQ(p[1].via, "static items");
  EXPECT_EQ(p[2].via, "[1]");
  EXPECT_EQ(paths[1].size(), 4u);
  EXPECT_EQ(paths[1][3].via, "next");
  EXPECT_EQ(paths[1][2].via, "[0]");
  EXPECT_THROW(d->paths_to(12345678, 1), analysis::Error);
}

INSTANTIATE_TEST_SUITE_P(
    Formats, Reader,
    testing::Values(Format{4, hprof::Version::k1_0_1, 2'000'000'000},
                    Format{8, hprof::Version::k1_0_1, 2'000'000'000},
                    Format{4, hprof::Version::k1_0_2, 64}, Format{8, hprof::Version::k1_0_2, 100}),
    [](const testing::TestParamInfo<Format>& info) {
      return std::string(info.param.version == hprof::Version::k1_0_1 ? "v101" : "v102_segmented") +
             "_ids" + std::to_string(info.param.id_size);
    });

// java.lang.ref.Reference with a referent: what only a referent holds is not retained.
TEST(ReaderSemantics, WeakReferentsAndTheFinalizerQueueDoNotRetain) {
  SyntheticDump dump(8, hprof::Version::k1_0_2);
  uint64_t object = dump.add_class("java/lang/Object", 0, {});
  uint64_t reference =
      dump.add_class("java/lang/ref/Reference", object,
                     {{"referent", BasicType::kObject}, {"queue", BasicType::kObject}});
  uint64_t weak = dump.add_class("java/lang/ref/WeakReference", reference, {});
  uint64_t payload_class = dump.add_class("Payload", object, {{"data", BasicType::kObject}});
  uint64_t bytes = dump.add_byte_array(std::vector<uint8_t>(1000, 1));
  uint64_t payload = dump.add_instance(payload_class, {Value::of_object(bytes)});
  uint64_t ref = dump.add_instance(weak, {Value::of_object(payload), Value::of_object(0)});
  dump.add_root(hprof::SubTag::kRootJniGlobal, ref);
  // Finalizer.unfinalized -> a pending Finalizer object.
  uint64_t finalizer = dump.add_class("java/lang/ref/FinalReference", reference, {});
  uint64_t pending_class = dump.add_class("Pending", object, {{"data", BasicType::kObject}});
  uint64_t pending_bytes = dump.add_byte_array(std::vector<uint8_t>(500, 2));
  uint64_t pending = dump.add_instance(pending_class, {Value::of_object(pending_bytes)});
  uint64_t entry = dump.add_instance(finalizer, {Value::of_object(pending), Value::of_object(0)});
  dump.add_class("java/lang/ref/Finalizer", finalizer, {}, {{"unfinalized", entry}});
  const std::string path = temp_path("weak.hprof");
  dump.write(path);
  auto d = HeapDump::open(path, {.use_index_file = false});
  EXPECT_EQ(d->object(ref)->retained_bytes, 24u) << "the WeakReference keeps only itself";
  EXPECT_EQ(d->object(payload)->retained_bytes, 16u + 1016u);
  auto s = d->summary();
  EXPECT_EQ(s.weakly_reachable_objects, 2u) << "the payload and its bytes";
  // Finalizer.unfinalized is no reference: its entry, and what only the entry's referent holds,
  // are garbage awaiting finalization.
  EXPECT_EQ(s.unreachable_objects, 3u);
  EXPECT_TRUE(d->paths_to(payload, 3).empty()) << "no strong path";
}

TEST(ReaderSemantics, DuplicateStrings) {
  SyntheticDump dump(4, hprof::Version::k1_0_2);
  uint64_t object = dump.add_class("java/lang/Object", 0, {});
  uint64_t string = dump.add_class(
      "java/lang/String", object,
      {{"value", BasicType::kObject}, {"hash", BasicType::kInt}, {"coder", BasicType::kByte}});
  uint64_t holder_class = dump.add_class("[Ljava/lang/String;", object, {});
  std::vector<uint64_t> strings;
  auto add = [&](std::vector<uint8_t> bytes, uint8_t coder) {
    uint64_t value = dump.add_byte_array(std::move(bytes));
    strings.push_back(dump.add_instance(
        string, {Value::of_object(value), Value::of_int(0), Value::of_byte(coder)}));
  };
  for (int i = 0; i < 3; ++i) add({'a', 'b', 'c'}, 0);
  add({'x', 'y', 'z'}, 0);
  add({0xAC, 0x20}, 1);  // "€" in UTF-16, little-endian as HotSpot stores it
  add({0xAC, 0x20}, 1);
  uint64_t list = dump.add_object_array(holder_class, strings);
  dump.add_root(hprof::SubTag::kRootJniGlobal, list);
  add({'a', 'b', 'c'}, 0);  // garbage: counted, and said to be unreachable
  const std::string path = temp_path("strings.hprof");
  dump.write(path);
  auto d = HeapDump::open(path, {.use_index_file = false});
  auto r = d->duplicate_strings(10, 3);
  EXPECT_EQ(r.strings, 7u);
  EXPECT_EQ(r.unreachable_strings, 1u);
  EXPECT_EQ(r.distinct_values, 3u);
  EXPECT_EQ(r.duplicated_strings, 6u);
  ASSERT_EQ(r.top.size(), 2u);
  EXPECT_EQ(r.top[0].value, "abc");
  EXPECT_EQ(r.top[0].count, 4u);
  EXPECT_EQ(r.top[0].wasted_bytes, 3u * 24 + 3u * 24);  // String 12+4+4+1; byte[3] 16+3
  ASSERT_EQ(r.top[0].holders.size(), 1u);
  EXPECT_EQ(r.top[0].holders[0].first, "java.lang.String[]");
  EXPECT_EQ(r.top[0].holders[0].second, 3u);
  EXPECT_EQ(r.top[1].value, "\xE2\x82\xAC");
}

// ---- the saved index and gzip ----

void set_mtime(const std::string& path, int64_t seconds) {
  struct timespec times[2] = {{seconds, 0}, {seconds, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

TEST(SavedIndex, ReusedWhileTheDumpIsUnchangedRebuiltWhenStaleOrCorrupt) {
  NodeHeap heap({8, hprof::Version::k1_0_2, 2'000'000'000});
  const std::string path = temp_path("indexed.hprof");
  const std::string index = path + ".jvmprof-index";
  std::filesystem::remove(index);
  heap.dump.write(path);
  set_mtime(path, 1'000'000);
  auto first = HeapDump::open(path);
  EXPECT_FALSE(first->summary().index_reused);
  ASSERT_TRUE(std::filesystem::exists(index));
  auto expected = first->class_histogram();
  auto again = HeapDump::open(path);
  EXPECT_TRUE(again->summary().index_reused);
  auto reused = again->class_histogram();
  ASSERT_EQ(reused.size(), expected.size());
  for (size_t i = 0; i < reused.size(); ++i) {
    EXPECT_EQ(reused[i].name, expected[i].name);
    EXPECT_EQ(reused[i].retained_bytes, expected[i].retained_bytes);
  }
  EXPECT_EQ(again->paths_to(heap.n1, 1).at(0).at(1).via, "static items");
  // A newer dump of the same size: stale.
  set_mtime(path, 2'000'000);
  EXPECT_FALSE(HeapDump::open(path)->summary().index_reused);
  EXPECT_TRUE(HeapDump::open(path)->summary().index_reused);
  // Every flipped byte of the index is noticed (checksum or validation) and the index rebuilt:
  // at reopen for the header and the class section, else on the first use of its section (the
  // queries below use every section), before any answer comes from it.
  const auto size = std::filesystem::file_size(index);
  for (uint64_t at = 0; at < size; at += 1 + size / 97) {
    std::fstream f(index, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(at));
    char c = 0;
    f.get(c);
    f.seekp(static_cast<std::streamoff>(at));
    f.put(static_cast<char>(c ^ 0x5A));
    f.close();
    auto reopened = HeapDump::open(path);
    testing::internal::CaptureStderr();
    EXPECT_EQ(reopened->object(heap.array)->retained_bytes, 184u);
    EXPECT_EQ(reopened->paths_to(heap.n1, 1).at(0).at(1).via, "static items");
    EXPECT_EQ(reopened->referrers(heap.n1, 0, 10).total, 2u);
    EXPECT_EQ(reopened->class_histogram().size(), expected.size());
    const std::string said = testing::internal::GetCapturedStderr();
    EXPECT_FALSE(reopened->summary().index_reused) << "flipped byte " << at << "; " << said;
  }
  // A truncated index too.
  std::filesystem::resize_file(index, size / 2);
  EXPECT_FALSE(HeapDump::open(path)->summary().index_reused);
}

// The index is built inside its own file (a temporary renamed into place) or, without saving, a
// scratch file unlinked at once: either way nothing but the dump and its index is left beside it.
TEST(SavedIndex, BuiltInPlaceLeavingNothingElseBehind) {
  NodeHeap heap({8, hprof::Version::k1_0_2, 2'000'000'000});
  const std::string dir = temp_path("in-place");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/nodes.hprof";
  heap.dump.write(path);
  auto entries = [&] {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  };
  auto scratch = HeapDump::open(path, {.use_index_file = false});
  EXPECT_EQ(scratch->object(heap.array)->retained_bytes, 184u);
  EXPECT_EQ(scratch->paths_to(heap.n1, 1).at(0).at(1).via, "static items");
  EXPECT_EQ(entries(), (std::vector<std::string>{"nodes.hprof"}));
  auto saved = HeapDump::open(path);
  EXPECT_FALSE(saved->summary().index_reused);
  EXPECT_EQ(saved->object(heap.array)->retained_bytes, 184u);
  EXPECT_EQ(entries(), (std::vector<std::string>{"nodes.hprof", "nodes.hprof.jvmprof-index"}));
  auto reused = HeapDump::open(path);
  EXPECT_TRUE(reused->summary().index_reused);
  EXPECT_EQ(reused->class_histogram().size(), saved->class_histogram().size());
  EXPECT_EQ(reused->summary().reachable_objects, scratch->summary().reachable_objects);
  EXPECT_EQ(reused->paths_to(heap.n1, 1).at(0).at(1).via, "static items");
}

// When no place can hold the index (every file write fails: here RLIMIT_FSIZE, in a child
// process), opening fails with one error naming the index, and nothing is left beside the dump.
// A limit past the object offsets but short of the whole index fails at reserving the space,
// after the offsets were moved from place to place; a smaller one fails at the first write.
TEST(SavedIndex, NoRoomForTheIndexIsOneErrorLeavingNothingBehind) {
  SyntheticDump dump(8, hprof::Version::k1_0_2);
  uint64_t object = dump.add_class("java/lang/Object", 0, {});
  uint64_t node = dump.add_class("Node", object, {{"next", BasicType::kObject}});
  uint64_t next = 0;
  for (int i = 0; i < 300; ++i) next = dump.add_instance(node, {Value::of_object(next)});
  dump.add_root(hprof::SubTag::kRootJniGlobal, next);
  const std::string dir = temp_path("no-room");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/chain.hprof";
  dump.write(path);
  const uint64_t objects = HeapDump::open(path, {.use_index_file = false})->summary().objects;
  ASSERT_EQ(objects, 302u);
  // Exit status of a child opening the dump under the limit: 0 for the expected error.
  auto open_limited = [&](rlim_t limit, const char* expected) {
    pid_t child = ::fork();
    if (child == 0) {
      ::signal(SIGXFSZ, SIG_IGN);
      struct rlimit r {
        limit, limit
      };
      ::setrlimit(RLIMIT_FSIZE, &r);
      for (bool save : {true, false}) {
        try {
          HeapDump::open(path, {.use_index_file = save});
          ::_exit(1);
        } catch (const analysis::Error& e) {
          const std::string what = e.what();
          if (what.find(expected) == std::string::npos || what.find('\n') != std::string::npos)
            ::_exit(2);
        }
      }
      ::_exit(0);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + status;
  };
  EXPECT_EQ(open_limited(100, "cannot write the index"), 0);
  EXPECT_EQ(open_limited(8 * objects + 1024, "cannot reserve"), 0);
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    left.push_back(e.path().filename().string());
  EXPECT_EQ(left, (std::vector<std::string>{"chain.hprof"}));
}

TEST(Gzip, CompressedDumpGivesTheSameAnswers) {
  NodeHeap heap({4, hprof::Version::k1_0_2, 2'000'000'000});
  std::vector<uint8_t> bytes = heap.dump.bytes();
  const std::string path = temp_path("nodes.hprof.gz");
  std::filesystem::remove(path + ".jvmprof-index");
  gzFile out = gzopen(path.c_str(), "wb");
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(gzwrite(out, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(out), Z_OK);
  auto d = HeapDump::open(path);
  EXPECT_TRUE(d->summary().gzip);
  EXPECT_EQ(d->object(heap.array)->retained_bytes, 184u);
  EXPECT_EQ(d->paths_to(heap.n1, 1).at(0).at(2).via, "[1]");
  auto again = HeapDump::open(path);
  EXPECT_TRUE(again->summary().index_reused);
  EXPECT_EQ(again->paths_to(heap.n1, 1).at(0).at(2).via, "[1]");
  // A truncated gzip stream is an error, not a short dump.
  const std::string cut = temp_path("cut.hprof.gz");
  std::filesystem::copy_file(path, cut, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::resize_file(cut, std::filesystem::file_size(path) - 10);
  EXPECT_THROW(HeapDump::open(cut, {.use_index_file = false}), analysis::Error);
}

}  // namespace
