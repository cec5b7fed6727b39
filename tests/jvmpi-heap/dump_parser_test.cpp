// SPDX-License-Identifier: Apache-2.0
// The dump parsers on hand-built buffers (no JVM): what they accept, what they decode, and that
// they reject malformed input instead of misreading it.
#include "dump_parser.h"

#include <gtest/gtest.h>
#include <jvmpi.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "hprof_reader.h"

namespace jvmpiheap {
namespace {

// Builds a buffer the way the runtime writes one: integers big-endian, IDs native.
class Buf {
 public:
  Buf& u1(uint8_t v) { return raw(&v, 1); }
  Buf& u2(uint16_t v) { return be(v, 2); }
  Buf& u4(uint32_t v) { return be(v, 4); }
  Buf& u8(uint64_t v) { return be(v, 8); }
  Buf& id(uint64_t v) { return raw(&v, sizeof(void*)); }
  Buf& be(uint64_t v, int n) {
    for (int i = n - 1; i >= 0; --i) s_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    return *this;
  }
  Buf& raw(const void* p, size_t n) {
    s_.append(static_cast<const char*>(p), n);
    return *this;
  }
  const std::string& str() const { return s_; }

 private:
  std::string s_;
};

AgentTables sample_tables() {
  AgentTables t;
  ClassInfo base{0x100, "Base", 0, {}, {{"b", "I"}}};
  ClassInfo derived{0x200,
                    "Derived",
                    1,
                    {{"S", "J"}, {"R", "Ljava/lang/Object;"}},
                    {{"x", "D"}, {"next", "LDerived;"}, {"c", "C"}}};
  t.classes[base.id] = base;
  t.classes[derived.id] = derived;
  t.class_by_name["Base"] = 0x100;
  t.class_by_name["Derived"] = 0x200;
  return t;
}

void class_dump(Buf& b, uint64_t id, uint64_t super, int level, int interfaces) {
  b.u1(JVMPI_GC_CLASS_DUMP).id(id).id(super).id(0).id(0).id(0).id(0).id(0).u4(32);
  for (int i = 0; i < interfaces; ++i) b.id(0x900 + i);
  b.u2(1).u2(7).u1(JVMPI_CLASS).id(0x700);  // one resolved constant-pool reference
  if (id == 0x200) {
    if (level == 2) b.u8(0x1122334455667788ULL);
    b.id(0x300);
  }
}

TEST(JvmpiDumpParser, Level2RecordsAndValues) {
  const AgentTables t = sample_tables();
  Buf b;
  b.u1(JVMPI_GC_ROOT_JNI_GLOBAL).id(0x300).id(0xabc);
  b.u1(JVMPI_GC_ROOT_JAVA_FRAME).id(0x300).id(0xe1).u4(2);
  b.u1(JVMPI_GC_ROOT_STICKY_CLASS).id(0x100);
  b.u1(JVMPI_GC_ROOT_THREAD_BLOCK).id(0x400).id(0xe1);
  b.u1(JVMPI_GC_ROOT_UNKNOWN).id(0x500);
  class_dump(b, 0x100, 0, 2, 0);
  class_dump(b, 0x200, 0x100, 2, 1);
  double x = -0.75;
  uint64_t xbits;
  std::memcpy(&xbits, &x, 8);
  b.u1(JVMPI_GC_INSTANCE_DUMP).id(0x300).id(0x200).u4(8 + 8 + 2 + 4);
  b.u8(xbits).id(0x300).u2(0x20AC).u4(static_cast<uint32_t>(-5));
  b.u1(JVMPI_GC_OBJ_ARRAY_DUMP).id(0x600).u4(2).id(0x200).id(0x300).id(0);
  b.u1(JVMPI_GC_PRIM_ARRAY_DUMP).id(0x610).u4(2).u1(JVMPI_SHORT).u2(1).u2(0xFFFF);
  HeapDump h;
  std::string error;
  ASSERT_TRUE(parse_heap_dump(b.str(), 2, t, &h, &error)) << error;
  EXPECT_EQ(h.records, 10u);
  ASSERT_EQ(h.roots.size(), 5u);
  EXPECT_EQ(h.roots[0].aux, 0xabcu);
  EXPECT_EQ(h.roots[1].frame, 2u);
  EXPECT_EQ(h.roots[3].aux, 0xe1u);
  ASSERT_EQ(h.classes.size(), 2u);
  EXPECT_EQ(h.classes.at(0x200).interfaces, std::vector<Id>{0x900});
  EXPECT_EQ(h.classes.at(0x200).constant_pool.at(0).index, 7);
  EXPECT_EQ(static_value(h, t, h.classes.at(0x200), "S")->as_long(), 0x1122334455667788LL);
  EXPECT_EQ(static_value(h, t, h.classes.at(0x200), "R")->as_id(), 0x300u);
  const InstanceDump& inst = h.instances.at(0x300);
  EXPECT_EQ(*instance_bytes(h, t, 0x200), inst.data.size());
  EXPECT_EQ(field_value(h, t, inst, "x")->as_double(), -0.75);
  EXPECT_EQ(field_value(h, t, inst, "next")->as_id(), 0x300u);
  EXPECT_EQ(field_value(h, t, inst, "c")->bits, 0x20ACu);
  EXPECT_EQ(field_value(h, t, inst, "b")->as_int(), -5);  // the superclass's field comes last
  EXPECT_FALSE(field_value(h, t, inst, "nope").has_value());
  EXPECT_EQ(h.obj_arrays.at(0x600).elements, (std::vector<Id>{0x300, 0}));
  EXPECT_EQ(h.prim_arrays.at(0x610).element(1).bits, 0xFFFFu);
}

TEST(JvmpiDumpParser, Level1LeavesOutPrimitives) {
  const AgentTables t = sample_tables();
  Buf b;
  class_dump(b, 0x100, 0, 1, 0);
  class_dump(b, 0x200, 0x100, 1, 1);
  b.u1(JVMPI_GC_INSTANCE_DUMP).id(0x300).id(0x200).u4(8).id(0x300);
  b.u1(JVMPI_GC_PRIM_ARRAY_DUMP).id(0x610).u4(2).u1(JVMPI_SHORT);
  HeapDump h;
  std::string error;
  ASSERT_TRUE(parse_heap_dump(b.str(), 1, t, &h, &error)) << error;
  const InstanceDump& inst = h.instances.at(0x300);
  EXPECT_EQ(*instance_bytes(h, t, 0x200), 8u);
  EXPECT_EQ(field_value(h, t, inst, "next")->as_id(), 0x300u);
  EXPECT_FALSE(field_value(h, t, inst, "x").has_value());
  EXPECT_EQ(h.prim_arrays.at(0x610).count, 2u);
  EXPECT_TRUE(h.prim_arrays.at(0x610).data.empty());
  EXPECT_EQ(h.classes.at(0x200).statics.size(), 1u);
  // The same buffer read as level 2 misreads and must fail, not succeed silently.
  EXPECT_FALSE(parse_heap_dump(b.str(), 2, t, &h, &error));
}

TEST(JvmpiDumpParser, Level0) {
  Buf b;
  b.u1(JVMPI_NORMAL_OBJECT).id(0x10).u1(JVMPI_CLASS).id(0x20).u1(JVMPI_INT).id(0x30);
  HeapDump h;
  std::string error;
  ASSERT_TRUE(parse_heap_dump(b.str(), 0, AgentTables{}, &h, &error)) << error;
  ASSERT_EQ(h.level0.size(), 3u);
  EXPECT_EQ(h.level0[2], (std::pair<int, Id>{JVMPI_INT, 0x30}));
  Buf bad;
  bad.u1(0x21).id(0x10);
  EXPECT_FALSE(parse_heap_dump(bad.str(), 0, AgentTables{}, &h, &error));
}

TEST(JvmpiDumpParser, RejectsTruncatedAndUnknownRecords) {
  const AgentTables t = sample_tables();
  Buf b;
  b.u1(JVMPI_GC_OBJ_ARRAY_DUMP).id(0x600).u4(3).id(0x200).id(0x300);
  HeapDump h;
  std::string error;
  EXPECT_FALSE(parse_heap_dump(b.str(), 2, t, &h, &error));
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
  Buf unknown;
  unknown.u1(0x42).id(1);
  EXPECT_FALSE(parse_heap_dump(unknown.str(), 2, t, &h, &error));
  EXPECT_NE(error.find("unknown record type"), std::string::npos) << error;
}

TEST(JvmpiDumpParser, ObjectDumpIsExactlyOneObjectRecord) {
  const AgentTables t = sample_tables();
  Buf one;
  one.u1(JVMPI_GC_PRIM_ARRAY_DUMP).id(0x610).u4(1).u1(JVMPI_LONG).u8(42);
  HeapDump h;
  std::string error;
  ASSERT_TRUE(parse_object_dump(one.str(), t, &h, &error)) << error;
  EXPECT_EQ(h.prim_arrays.at(0x610).element(0).as_long(), 42);
  Buf two = one;
  two.u1(JVMPI_NORMAL_OBJECT);
  EXPECT_FALSE(parse_object_dump(two.str(), t, &h, &error));
  Buf root;
  root.u1(JVMPI_GC_ROOT_UNKNOWN).id(0x10);
  EXPECT_FALSE(parse_object_dump(root.str(), t, &h, &error));
}

TEST(JvmpiDumpParser, MonitorDump) {
  Buf b;
  b.u1(JVMPI_MONITOR_JAVA).id(0x10).id(0xe1).u4(1).u4(1).id(0xe2).u4(0);
  b.u1(JVMPI_MONITOR_RAW).id(0x5000).id(0x6000).id(0).u4(0).u4(0).u4(2).id(0xe3).id(0xe4);
  std::vector<MonitorRecord> m;
  std::string error;
  ASSERT_TRUE(parse_monitor_dump(b.str(), &m, &error)) << error;
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].owner, 0xe1u);
  EXPECT_EQ(m[0].waiting_to_enter, std::vector<Id>{0xe2});
  EXPECT_EQ(m[1].raw_id, 0x6000u);
  EXPECT_EQ(m[1].waiting_to_be_notified, (std::vector<Id>{0xe3, 0xe4}));
  Buf bad = b;
  bad.u1(JVMPI_MONITOR_JAVA).id(0x10);
  EXPECT_FALSE(parse_monitor_dump(bad.str(), &m, &error));
}

TEST(JvmpiHprofReader, CountsInstancesByClassName) {
  Buf b;
  b.raw("JAVA PROFILE 1.0.2", 19).u4(8).u8(0);
  const char name[] = "pkg/Thing";
  b.u1(0x01).u4(0).u4(8 + sizeof name - 1).be(0x77, 8).raw(name, sizeof name - 1);
  b.u1(0x02).u4(0).u4(4 + 8 + 4 + 8).u4(1).be(0x1000, 8).u4(0).be(0x77, 8);
  Buf seg;
  seg.u1(0x05).be(0x1000, 8);
  seg.u1(0x21).be(0x2000, 8).u4(0).be(0x1000, 8).u4(4).u4(9);
  seg.u1(0x21).be(0x2008, 8).u4(0).be(0x1000, 8).u4(4).u4(9);
  seg.u1(0x23).be(0x3000, 8).u4(0).u4(2).u1(10).u4(1).u4(2);
  seg.u1(0x22).be(0x3008, 8).u4(0).u4(1).be(0x1000, 8).be(0x2000, 8);
  b.u1(0x1c)
      .u4(0)
      .u4(static_cast<uint32_t>(seg.str().size()))
      .raw(seg.str().data(), seg.str().size());
  b.u1(0x2c).u4(0).u4(0);
  const std::string path = testing::TempDir() + "/parser_test.hprof";
  std::ofstream(path, std::ios::binary) << b.str();
  HprofCounts c;
  std::string error;
  ASSERT_TRUE(read_hprof_counts(path, &c, &error)) << error;
  EXPECT_EQ(c.instances["pkg.Thing"], 2);
  EXPECT_EQ(c.prim_arrays[10], 1);
  EXPECT_EQ(c.obj_arrays["pkg.Thing"], 1);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace jvmpiheap
