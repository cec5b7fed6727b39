// SPDX-License-Identifier: Apache-2.0
// Looking objects up by id (the index's id table): every object of a synthetic dump is found as
// itself, with its class and size, on a fresh index and on a reopened saved one, for both
// identifier sizes; ids that are not in the dump are not found.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include "analysis.h"
#include "synthetic_dump.h"
#include "test_files.h"

using analysis::HeapDump;
using analysis_test::SyntheticDump;
using hprof::BasicType;
using hprof::Value;

namespace {

struct Expected {
  uint64_t id;
  std::string class_name;
  uint64_t shallow;
};

// Chained instances, int arrays of varying length and object arrays: ~20k objects.
struct ManyObjects {
  SyntheticDump dump;
  std::vector<Expected> objects;
  uint64_t largest_id = 0;

  explicit ManyObjects(uint32_t id_size) : dump(id_size, hprof::Version::k1_0_2, 1 << 20) {
    const uint64_t object = dump.add_class("java/lang/Object", 0, {});
    const uint64_t node =
        dump.add_class("Node", object, {{"next", BasicType::kObject}, {"n", BasicType::kInt}});
    const uint64_t node_array = dump.add_class("[LNode;", object, {});
    const uint64_t class_class = dump.add_class("java/lang/Class", object, {});
    (void)class_class;
    uint64_t previous = 0;
    for (uint32_t i = 0; i < 12000; ++i) {
      previous = dump.add_instance(node, {Value::of_object(previous), Value::of_int(int32_t(i))});
      objects.push_back({previous, "Node", 24});  // align8(12 + 4 + 4)
      if (i % 3 == 0) {
        const uint32_t length = i % 17;
        const uint64_t ints = dump.add_int_array(length);
        objects.push_back({ints, "int[]", (16 + 4 * uint64_t{length} + 7) / 8 * 8});
      }
      if (i % 5 == 0) {
        const uint64_t array = dump.add_object_array(node_array, {previous, 0, previous});
        objects.push_back({array, "Node[]", 32});  // align8(16 + 3 * 4)
        dump.add_root(hprof::SubTag::kRootJniGlobal, array);
      }
    }
    for (const Expected& e : objects) largest_id = std::max(largest_id, e.id);
  }
};

std::string temp_dir() {
  const std::string marker = analysis_test::temp_path("ids", "");
  return marker.substr(0, marker.size() - 1);  // the directory, without the trailing '/'
}

void expect_every_object_found(const HeapDump& d, const ManyObjects& heap) {
  for (const Expected& e : heap.objects) {
    const auto o = d.object(e.id);
    ASSERT_TRUE(o.has_value()) << "id " << e.id;
    EXPECT_EQ(o->id, e.id);
    EXPECT_EQ(o->class_name, e.class_name) << "id " << e.id;
    EXPECT_EQ(o->shallow_bytes, e.shallow) << "id " << e.id;
  }
  // The object view and the referrers find them through the same table.
  for (size_t i = 0; i < heap.objects.size(); i += 97) {
    const auto detail = d.object_detail(heap.objects[i].id, 0, 5);
    ASSERT_TRUE(detail.has_value());
    EXPECT_EQ(detail->object.id, heap.objects[i].id);
    EXPECT_NO_THROW(d.referrers(heap.objects[i].id, 0, 5));
  }
}

void expect_absent_ids_not_found(const HeapDump& d, const ManyObjects& heap) {
  // Ids are multiples of 8: anything between two of them is absent, as are ids past the last.
  for (size_t i = 0; i < heap.objects.size(); i += 7) {
    for (uint64_t delta : {1, 3, 7}) {
      EXPECT_FALSE(d.object(heap.objects[i].id + delta).has_value());
      EXPECT_FALSE(d.object_detail(heap.objects[i].id + delta).has_value());
    }
  }
  for (uint64_t k = 1; k <= 2000; ++k) EXPECT_FALSE(d.object(heap.largest_id + 8 * k).has_value());
  EXPECT_FALSE(d.object(0).has_value());
  EXPECT_FALSE(d.object(~uint64_t{0}).has_value());
  EXPECT_THROW(d.referrers(heap.largest_id + 8, 0, 5), analysis::Error);
  std::mt19937_64 random(42);
  for (int i = 0; i < 20000; ++i) {
    const uint64_t id = random() | 1;  // odd: never an id of this dump
    EXPECT_FALSE(d.object(id).has_value());
  }
}

class IdLookup : public testing::TestWithParam<uint32_t> {};

TEST_P(IdLookup, EveryObjectFoundAndAbsentIdsNot) {
  ManyObjects heap(GetParam());
  const std::string path = temp_dir() + "/ids-" + std::to_string(GetParam()) + ".hprof";
  heap.dump.write(path);
  {
    auto d = HeapDump::open(path, {.use_index_file = false});
    EXPECT_EQ(d->summary().objects, heap.objects.size() + 4);  // + the class objects
    expect_every_object_found(*d, heap);
    expect_absent_ids_not_found(*d, heap);
  }
  // The table is saved with the index and used as mapped from the file.
  { auto saving = HeapDump::open(path); }
  auto reopened = HeapDump::open(path);
  ASSERT_TRUE(reopened->summary().index_reused);
  expect_every_object_found(*reopened, heap);
  expect_absent_ids_not_found(*reopened, heap);
  std::filesystem::remove(path);
  std::filesystem::remove(path + ".jvmprof-index");
}

INSTANTIATE_TEST_SUITE_P(IdSize, IdLookup, testing::Values(4u, 8u));

}  // namespace
