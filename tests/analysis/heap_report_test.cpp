// SPDX-License-Identifier: Apache-2.0
// What the analyzer tells its user beyond the numbers, on synthetic dumps: class objects named
// for their class, damage counted with the first offending record's offset, chains of
// single-child dominators as one entry, suspects merged by memory and led by their holder, G1
// filler arrays apart from int[], a cut-off file named as such, and where the index goes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "analysis.h"
#include "heap_index.h"
#include "synthetic_dump.h"
#include "test_files.h"

using analysis::DumpSummary;
using analysis::HeapDump;
using analysis_test::SyntheticDump;
using hprof::BasicType;
using hprof::Value;

namespace {

std::string temp_path(const std::string& name) {
  return analysis_test::temp_path("report", name);
}

std::unique_ptr<HeapDump> open_scratch(const SyntheticDump& dump, const std::string& name) {
  const std::string path = temp_path(name);
  dump.write(path);
  return HeapDump::open(path, {.use_index_file = false});
}

// Holder.chain -> Chain0 -> Chain1 -> Chain2 -> Node[3] {3 Nodes}: Chain0 to the array are each
// the only object their predecessor dominates.
struct ChainHeap {
  SyntheticDump dump{8, hprof::Version::k1_0_2};
  uint64_t links[3] = {}, array = 0, holder = 0;
  ChainHeap() {
    uint64_t object = dump.add_class("java/lang/Object", 0, {});
    uint64_t link = dump.add_class("Link", object, {{"next", BasicType::kObject}});
    uint64_t node = dump.add_class("Node", object, {{"value", BasicType::kLong}});
    uint64_t node_array = dump.add_class("[LNode;", object, {});
    std::vector<uint64_t> nodes;
    for (int i = 0; i < 3; ++i) nodes.push_back(dump.add_instance(node, {Value::of_long(i)}));
    array = dump.add_object_array(node_array, nodes);
    uint64_t next = array;
    for (int i = 2; i >= 0; --i)
      next = links[i] = dump.add_instance(link, {Value::of_object(next)});
    holder = dump.add_class("Holder", object, {}, {{"chain", links[0]}});
  }
};

TEST(HeapReport, ClassObjectsAreNamedForTheirClass) {
  ChainHeap heap;
  auto d = open_scratch(heap.dump, "class-names.hprof");
  ASSERT_EQ(d->object(heap.holder)->class_name, "class Holder");
  auto paths = d->paths_to(heap.array, 1);
  ASSERT_EQ(paths.size(), 1u);
  EXPECT_EQ(paths[0][0].object.class_name, "class Holder");
  EXPECT_EQ(paths[0][1].via, "static chain");
  // The histogram still counts class objects under java.lang.Class.
  bool class_class = false;
  for (const auto& c : d->class_histogram()) class_class |= c.name == "java.lang.Class";
  EXPECT_TRUE(class_class);
  auto detail = d->object_detail(heap.holder);
  ASSERT_TRUE(detail.has_value());
  EXPECT_EQ(detail->object.class_name, "class Holder");
  EXPECT_EQ(detail->class_name, "Holder");
}

TEST(HeapReport, ChainsOfSingleChildDominatorsAreOneEntry) {
  ChainHeap heap;
  auto d = open_scratch(heap.dump, "chains.hprof");
  auto flat = d->biggest_objects(20, 3);
  auto grouped = d->biggest_objects(20, 3, true);
  auto has = [](const std::vector<analysis::BigObject>& list, uint64_t id) {
    for (const auto& b : list)
      if (b.object.id == id) return true;
    return false;
  };
  for (uint64_t id : {heap.links[0], heap.links[1], heap.links[2], heap.array})
    EXPECT_TRUE(has(flat, id)) << id;
  // Holder's class object dominates more than the chain (its own statics' names are not
  // objects, but the class is a root with other children): the chain starts below it or at it.
  const analysis::BigObject* head = nullptr;
  for (const auto& b : grouped)
    if (b.object.id == heap.links[0] || b.object.id == heap.holder) head = &b;
  ASSERT_NE(head, nullptr);
  std::vector<uint64_t> chain;
  for (const auto& c : head->chain) chain.push_back(c.id);
  const std::vector<uint64_t> below_link0 = {heap.links[1], heap.links[2], heap.array};
  if (head->object.id == heap.links[0]) {
    EXPECT_EQ(chain, below_link0);
  } else {
    ASSERT_FALSE(chain.empty());
    EXPECT_EQ(chain[0], heap.links[0]);
  }
  EXPECT_EQ(head->chain_length, head->chain.size());
  for (uint64_t id : {heap.links[1], heap.links[2], heap.array})
    EXPECT_FALSE(has(grouped, id)) << "part of a chain, not an entry: " << id;
  EXPECT_LT(grouped.size(), flat.size());
  // Each link retains the same bytes less the shallow sizes above it.
  for (size_t i = 1; i < head->chain.size(); ++i)
    EXPECT_EQ(head->chain[i - 1].retained_bytes,
              head->chain[i - 1].shallow_bytes + head->chain[i].retained_bytes);
}

// A planted leak: Cache.MAP -> Map -> Entry[] -> 200 Entries each with a byte[100]; beside it,
// Other.LIST -> Object[] of 300 byte[40]. At 20 %, the Entry and byte[] classes retain the
// threshold too, but the entries are the map's memory: merged into the map's suspect.
TEST(HeapReport, SuspectsRankDistinctMemoryAndNameTheHolderFirst) {
  SyntheticDump dump(8, hprof::Version::k1_0_2);
  uint64_t object = dump.add_class("java/lang/Object", 0, {});
  uint64_t entry = dump.add_class("Entry", object, {{"payload", BasicType::kObject}});
  uint64_t entry_array = dump.add_class("[LEntry;", object, {});
  uint64_t map = dump.add_class("Map", object, {{"table", BasicType::kObject}});
  uint64_t objects = dump.add_class("[Ljava/lang/Object;", object, {});
  std::vector<uint64_t> entries, bytes;
  for (int i = 0; i < 200; ++i)
    entries.push_back(dump.add_instance(
        entry, {Value::of_object(dump.add_byte_array(std::vector<uint8_t>(100, 1)))}));
  const uint64_t table = dump.add_object_array(entry_array, entries);
  const uint64_t the_map = dump.add_instance(map, {Value::of_object(table)});
  const uint64_t cache = dump.add_class("Cache", object, {}, {{"MAP", the_map}});
  for (int i = 0; i < 300; ++i) bytes.push_back(dump.add_byte_array(std::vector<uint8_t>(40, 2)));
  dump.add_class("Other", object, {}, {{"LIST", dump.add_object_array(objects, bytes)}});
  auto d = open_scratch(dump, "suspects.hprof");
  auto suspects = d->suspects(0.20);
  ASSERT_FALSE(suspects.empty());
  const auto& leak = suspects[0];
  EXPECT_EQ(leak.kind, analysis::Suspect::Kind::kObject);
  EXPECT_EQ(leak.held_by, "static MAP of class Cache");
  ASSERT_TRUE(leak.holder.has_value());
  EXPECT_EQ(leak.holder->id, cache);
  EXPECT_EQ(leak.holder_via, "static MAP");
  EXPECT_EQ(leak.object.id, the_map) << "the top of the chain above the table";
  EXPECT_EQ(leak.accumulation_point.id, table);
  EXPECT_EQ(leak.distinct_bytes, leak.accumulation_point.retained_bytes);
  bool entries_merged = false;
  for (const auto& c : leak.merged_classes) entries_merged |= c.name == "Entry";
  EXPECT_TRUE(entries_merged);
  for (const auto& s : suspects) {
    EXPECT_FALSE(s.kind == analysis::Suspect::Kind::kClass && s.object.class_name == "Entry")
        << "Entry's instances are the map's memory, not a suspect of their own";
    EXPECT_LE(s.distinct_bytes, leak.distinct_bytes) << "ranked by distinct bytes";
  }
  for (size_t i = 1; i < suspects.size(); ++i)
    EXPECT_GE(suspects[i - 1].distinct_bytes, suspects[i].distinct_bytes);
}

TEST(HeapReport, DanglingReferencesAndUnknownClassesAreCountedWithTheFirstOffset) {
  auto make = [](int dangling, bool unknown_class) {
    SyntheticDump dump(8, hprof::Version::k1_0_2);
    uint64_t object = dump.add_class("java/lang/Object", 0, {});
    uint64_t node = dump.add_class("Node", object, {{"next", BasicType::kObject}});
    uint64_t next = 0;
    for (int i = 0; i < dangling; ++i)
      next = dump.add_instance(node, {Value::of_object(dump.id(1'000'000 + i))});
    if (unknown_class) next = dump.add_instance(dump.id(999'999), {});
    dump.add_instance(node, {Value::of_object(next)});
    return dump;
  };
  auto intact = open_scratch(make(0, false), "intact.hprof")->summary();
  EXPECT_EQ(intact.dangling_references, 0u);
  EXPECT_EQ(intact.unknown_class_objects, 0u);
  EXPECT_EQ(intact.first_dangling_offset, DumpSummary::kNoOffset);
  EXPECT_EQ(intact.damage_warning, "");

  // As many dangling references as intact jcmd dumps may have: counted, no warning.
  auto few = open_scratch(make(3, false), "few.hprof")->summary();
  EXPECT_EQ(few.dangling_references, 3u);
  EXPECT_NE(few.first_dangling_offset, DumpSummary::kNoOffset);
  EXPECT_EQ(few.damage_warning, "");

  const int many = static_cast<int>(DumpSummary::kDanglingReferencesTolerated) + 1;
  auto damaged = open_scratch(make(many, false), "many.hprof")->summary();
  EXPECT_EQ(damaged.dangling_references, static_cast<uint64_t>(many));
  EXPECT_NE(damaged.damage_warning.find("at byte " + std::to_string(damaged.first_dangling_offset)),
            std::string::npos)
      << damaged.damage_warning;
  // The first offending record is an INSTANCE DUMP (tag 0x21) in the file.
  const auto bytes = analysis_test::read_file(temp_path("many.hprof"));
  ASSERT_LT(damaged.first_dangling_offset, bytes.size());
  EXPECT_EQ(static_cast<uint8_t>(bytes[damaged.first_dangling_offset]), 0x21);

  auto unknown = open_scratch(make(0, true), "unknown.hprof")->summary();
  EXPECT_EQ(unknown.unknown_class_objects, 1u);
  EXPECT_EQ(unknown.unknown_classes, 1u);
  EXPECT_NE(
      unknown.damage_warning.find("at byte " + std::to_string(unknown.first_unknown_class_offset)),
      std::string::npos)
      << unknown.damage_warning;

  // Saved with the index: a reopened dump reports the same.
  const std::string saved = temp_path("saved.hprof");
  make(many, true).write(saved);
  const auto built = HeapDump::open(saved)->summary();
  const auto reopened = HeapDump::open(saved)->summary();
  ASSERT_TRUE(reopened.index_reused);
  EXPECT_EQ(reopened.dangling_references, built.dangling_references);
  EXPECT_EQ(reopened.first_dangling_offset, built.first_dangling_offset);
  EXPECT_EQ(reopened.first_unknown_class_offset, built.first_unknown_class_offset);
  EXPECT_EQ(reopened.damage_warning, built.damage_warning);
}

// JDK 19+ VMs fill dead space with filler arrays the heap dumper writes as int[]: unreachable,
// even length. Only in a dump of such a VM (jdk.internal.vm.FillerObject loaded).
TEST(HeapReport, G1FillerArraysAreCountedApartFromIntArrays) {
  auto make = [](bool vm_has_fillers) {
    SyntheticDump dump(8, hprof::Version::k1_0_2);
    uint64_t object = dump.add_class("java/lang/Object", 0, {});
    if (vm_has_fillers) dump.add_class("jdk/internal/vm/FillerObject", object, {});
    uint64_t ints = dump.add_int_array(10);  // reachable: a real int[]
    dump.add_class("Holder", object, {}, {{"ints", ints}});
    dump.add_int_array(100);  // unreachable, even: a filler
    dump.add_int_array(7);    // unreachable, odd: padded, so not a filler
    dump.add_int_array(2);    // unreachable, even: a filler
    return dump;
  };
  auto find = [](const std::vector<analysis::ClassStats>& h, const std::string& name) {
    for (const auto& c : h)
      if (c.name == name) return c;
    return analysis::ClassStats{};
  };
  auto d = open_scratch(make(true), "fillers.hprof");
  const auto s = d->summary();
  EXPECT_EQ(s.filler_objects, 2u);
  EXPECT_EQ(s.filler_bytes, (16u + 400) + (16u + 8));
  const auto h = d->class_histogram();
  EXPECT_EQ(find(h, "int[]").instances, 2u);
  EXPECT_EQ(find(h, "int[]").shallow_bytes, (16u + 40) + 48);  // int[10]; int[7] padded to 48
  EXPECT_EQ(find(h, "int[] (unreachable, G1 filler layout)").instances, 2u);
  EXPECT_EQ(find(h, "int[] (unreachable, G1 filler layout)").shallow_bytes, s.filler_bytes);

  auto older = open_scratch(make(false), "no-fillers.hprof");
  EXPECT_EQ(older->summary().filler_objects, 0u);
  EXPECT_EQ(find(older->class_histogram(), "int[]").instances, 4u);
}

TEST(HeapReport, ACutOffFileSaysWhereItEnds) {
  ChainHeap heap;
  const auto bytes = heap.dump.bytes();
  const std::string path = temp_path("cut.hprof");
  const size_t cut = bytes.size() - 5;
  analysis_test::write_file(
      path, std::vector<char>(bytes.begin(), bytes.begin() + static_cast<long>(cut)));
  try {
    HeapDump::open(path, {.use_index_file = false});
    FAIL() << "a cut-off dump opened";
  } catch (const analysis::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("the file ends at byte " + std::to_string(cut) + " (truncated?)"),
              std::string::npos)
        << what;
    EXPECT_EQ(what.find("left in the record"), std::string::npos) << what;
  }
}

TEST(HeapReport, IndexPlaceSaysWhereTheIndexGoesAndWhichFallbackIsUsed) {
  using analysis::detail::plan_index_place;
  const uint64_t need = 300'000'000;
  auto room = [](uint64_t beside, uint64_t tmp) {
    return [=](const std::string& dir) { return dir == "/dumps" ? beside : tmp; };
  };
  auto fits = plan_index_place("/dumps/a.hprof.jvmprof-index", true, need, room(need, 0));
  EXPECT_EQ(fits.place, 0);
  EXPECT_EQ(fits.notice,
            "writing the index /dumps/a.hprof.jvmprof-index (about 300 MB; --index-dir DIR puts "
            "it elsewhere, --no-index writes none)");
  auto tmp = plan_index_place("/dumps/a.hprof.jvmprof-index", true, need, room(need - 1, need));
  EXPECT_EQ(tmp.place, 2);
  EXPECT_NE(tmp.notice.find("only 300 MB free in /dumps, the index needs about 300 MB: building "
                            "it in an unlinked scratch file in "),
            std::string::npos)
      << tmp.notice;
  auto memory = plan_index_place("/dumps/a.hprof.jvmprof-index", false, need, room(0, 1));
  EXPECT_EQ(memory.place, 3);
  EXPECT_NE(memory.notice.find("building it in memory"), std::string::npos) << memory.notice;
  EXPECT_EQ(plan_index_place("/dumps/a.hprof.jvmprof-index", false, need, room(need, 0)).notice, "")
      << "a scratch index with room says nothing";
}

TEST(HeapReport, IndexDirPutsTheIndexThereAndTheNoticeSaysSo) {
  ChainHeap heap;
  const std::string path = temp_path("elsewhere.hprof");
  heap.dump.write(path);
  const std::string dir = temp_path("index-dir");
  std::filesystem::create_directories(dir);
  std::vector<std::string> notices;
  analysis::OpenOptions options;
  options.index_dir = dir;
  options.on_notice = [&](const std::string& line) { notices.push_back(line); };
  HeapDump::open(path, options);
  const std::string index = dir + "/elsewhere.hprof.jvmprof-index";
  EXPECT_TRUE(std::filesystem::exists(index));
  EXPECT_FALSE(std::filesystem::exists(path + ".jvmprof-index"));
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].rfind("writing the index " + index + " (about ", 0), 0u) << notices[0];
  // Estimated before building: at least the size the index came to.
  EXPECT_GE(analysis::detail::estimated_index_bytes(std::filesystem::file_size(path)),
            std::filesystem::file_size(index));
  notices.clear();
  EXPECT_TRUE(HeapDump::open(path, options)->summary().index_reused);
  EXPECT_TRUE(notices.empty()) << "a reused index is not announced";
  options.index_dir = dir + "/missing";
  EXPECT_THROW(HeapDump::open(path, options), analysis::Error);
}

}  // namespace
