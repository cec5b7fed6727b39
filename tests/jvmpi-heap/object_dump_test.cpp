// SPDX-License-Identifier: Apache-2.0
// OBJECT_DUMP: one record each for a known instance, an object array, a primitive array and a
// class object, with the right contents (ObjectDumpProgram.java).
#include <gtest/gtest.h>
#include <jvmpi.h>

#include "dump_parser.h"
#include "heap_test.h"

namespace jvmpiheap {
namespace {

const std::string P = "jvmpiheap.ObjectDumpProgram$";

class ObjectDumpTest : public HeapTest {
 protected:
  // Parses obj-<name>.bin (exactly one record) into `out`.
  void load(const std::string& name, HeapDump* out) {
    tables_ = read_agent_tables(out_dir() + "/obj-" + name + ".txt");
    std::string error;
    ASSERT_TRUE(
        parse_object_dump(read_file(out_dir() + "/obj-" + name + ".bin"), tables_, out, &error))
        << name << ": " << error;
    EXPECT_EQ(out->records, 1u) << name;
  }
  AgentTables tables_;
};

TEST_P(ObjectDumpTest, OneRecordWithTheObjectsContents) {
  const LaunchResult r = run_java("dump", "", "jvmpiheap.ObjectDumpProgram");
  expect_clean_exit(r);
  const Facts facts(r.out);
  auto id = [&](const std::string& k) { return static_cast<Id>(parse_number(facts.get(k))); };
  for (const char* rc : {"rc_instance", "rc_array", "rc_longs", "rc_class", "rc_base_class"}) {
    ASSERT_EQ(facts.num(rc), JVMPI_SUCCESS) << rc;
  }

  // The class object: a CLASS_DUMP with super, interfaces and static values.
  HeapDump klass;
  load("class", &klass);
  ASSERT_EQ(klass.classes.size(), 1u);
  const ClassDump& c = klass.classes.begin()->second;
  EXPECT_EQ(c.id, id("id_sample_class"));
  EXPECT_TRUE(c.known);
  EXPECT_EQ(c.super, id("id_base_class"));
  EXPECT_EQ(c.interfaces, (std::vector<Id>{tables_.class_id("java.io.Serializable"),
                                           tables_.class_id(P + "Tagged")}));
  auto sv = [&](const std::string& name) {
    auto v = static_value(klass, tables_, c, name);
    EXPECT_TRUE(v.has_value()) << name;
    return v.value_or(Value{});
  };
  EXPECT_EQ(sv("serialVersionUID").as_long(), 1);
  EXPECT_EQ(sv("count").as_int(), 3);
  EXPECT_EQ(sv("self").as_id(), id("id_a"));
  EXPECT_EQ(sv("ratio").as_double(), 0.125);
  // 12-byte header or more, 30 bytes of primitives, two references (4 bytes or more), an int.
  EXPECT_GE(c.instance_size, 12u + 30 + 8 + 4);
  EXPECT_LE(c.instance_size, 16u + 30 + 16 + 4 + 16);

  // The superclass, for the instance's layout.
  HeapDump base;
  load("base-class", &base);
  ASSERT_EQ(base.classes.count(id("id_base_class")), 1u);

  // The instance: own fields, then Base2's.
  HeapDump inst;
  load("instance", &inst);
  ASSERT_EQ(inst.instances.size(), 1u);
  const InstanceDump& a = inst.instances.begin()->second;
  EXPECT_EQ(a.id, id("id_a"));
  EXPECT_EQ(a.class_id, id("id_sample_class"));
  inst.classes.emplace(c.id, c);
  inst.classes.emplace(id("id_base_class"), base.classes.at(id("id_base_class")));
  const auto bytes = instance_bytes(inst, tables_, a.class_id);
  ASSERT_TRUE(bytes.has_value());
  EXPECT_EQ(a.data.size(), *bytes);
  EXPECT_EQ(a.data.size(), 30u + 8 + 4 + 8);
  auto f = [&](const std::string& name) {
    auto v = field_value(inst, tables_, a, name);
    EXPECT_TRUE(v.has_value()) << name;
    return v.value_or(Value{});
  };
  EXPECT_EQ(f("i").as_int(), -7);
  EXPECT_EQ(f("l").as_long(), INT64_MIN + 1);
  EXPECT_EQ(f("d").as_double(), 6.02214076e23);
  EXPECT_EQ(f("z").bits, 0u);
  EXPECT_EQ(f("c").bits, static_cast<uint64_t>('Q'));
  EXPECT_EQ(f("b").bits, 0x7Fu);
  EXPECT_EQ(f("s").bits, 0xFFFEu);
  EXPECT_EQ(f("f").bits, 0x80000000u) << "-0.0f";
  EXPECT_EQ(f("ref").as_id(), id("id_b"));
  EXPECT_EQ(f("baseInt").as_int(), -99);
  EXPECT_EQ(f("baseRef").as_id(), id("id_string"));

  // The object array: element class and elements, a null included.
  HeapDump arr;
  load("array", &arr);
  ASSERT_EQ(arr.obj_arrays.size(), 1u);
  const ObjArrayDump& oa = arr.obj_arrays.begin()->second;
  EXPECT_EQ(oa.id, id("id_array"));
  EXPECT_EQ(oa.element_class, id("id_sample_class"));
  EXPECT_EQ(oa.elements, (std::vector<Id>{id("id_a"), 0, id("id_b")}));

  // The primitive array: type, length, big-endian values.
  HeapDump longs;
  load("longs", &longs);
  ASSERT_EQ(longs.prim_arrays.size(), 1u);
  const PrimArrayDump& pa = longs.prim_arrays.begin()->second;
  EXPECT_EQ(pa.id, id("id_longs"));
  EXPECT_EQ(pa.type, JVMPI_LONG);
  ASSERT_EQ(pa.count, 3u);
  EXPECT_EQ(pa.element(0).as_long(), 1);
  EXPECT_EQ(pa.element(1).as_long(), -2);
  EXPECT_EQ(pa.element(2).as_long(), INT64_MAX);
}

// Instances and arrays are read through JNI, the heap dump walks the heap: an object's record
// must be the same both ways (the heap dump is taken after the object dumps, so every referenced
// object has its ID already).
TEST_P(ObjectDumpTest, FieldReadRecordsMatchTheHeapWalk) {
  const LaunchResult r = run_java("dump", "", "jvmpiheap.ObjectDumpProgram", {"match"});
  expect_clean_exit(r);
  const Facts facts(r.out);
  ASSERT_EQ(facts.num("match_heap_rc"), JVMPI_SUCCESS);
  const AgentTables heap_tables = read_agent_tables(out_dir() + "/match-heap.txt");
  HeapDump heap;
  std::string error;
  ASSERT_TRUE(
      parse_heap_dump(read_file(out_dir() + "/match-heap.bin"), 2, heap_tables, &heap, &error))
      << error;
  const int count = static_cast<int>(facts.num("match_count"));
  ASSERT_GE(count, 20);
  for (int i = 0; i < count; ++i) {
    const std::string n = std::to_string(i);
    ASSERT_EQ(facts.num("match_rc_" + n), JVMPI_SUCCESS) << i;
    const Id id = static_cast<Id>(parse_number(facts.get("match_" + n)));
    HeapDump one;
    load("match-" + n, &one);  // exactly one record
    if (!one.instances.empty()) {
      const InstanceDump& got = one.instances.begin()->second;
      ASSERT_EQ(got.id, id) << i;
      ASSERT_EQ(heap.instances.count(id), 1u) << i;
      const InstanceDump& want = heap.instances.at(id);
      EXPECT_EQ(got.class_id, want.class_id) << i;
      EXPECT_EQ(got.data, want.data) << i;
    } else if (!one.obj_arrays.empty()) {
      const ObjArrayDump& got = one.obj_arrays.begin()->second;
      ASSERT_EQ(got.id, id) << i;
      ASSERT_EQ(heap.obj_arrays.count(id), 1u) << i;
      const ObjArrayDump& want = heap.obj_arrays.at(id);
      EXPECT_EQ(got.element_class, want.element_class) << i;
      EXPECT_EQ(got.elements, want.elements) << i;
    } else {
      ASSERT_EQ(one.prim_arrays.size(), 1u) << i;
      const PrimArrayDump& got = one.prim_arrays.begin()->second;
      ASSERT_EQ(got.id, id) << i;
      ASSERT_EQ(heap.prim_arrays.count(id), 1u) << i;
      const PrimArrayDump& want = heap.prim_arrays.at(id);
      EXPECT_EQ(got.type, want.type) << i;
      EXPECT_EQ(got.count, want.count) << i;
      EXPECT_EQ(got.data, want.data) << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Jdks, ObjectDumpTest, testing::ValuesIn(all_jdks()), jdk_param_name);

}  // namespace
}  // namespace jvmpiheap
