// SPDX-License-Identifier: Apache-2.0
// Writer -> reader round trips of every record and sub-record, with identifier sizes 4 and 8.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "hprof_format.h"
#include "test_util.h"

using namespace hprof;
using formats_test::options;

namespace {

struct Param {
  uint32_t id_size;
  Version version;
  bool seekable;
};

std::string param_name(const testing::TestParamInfo<Param>& info) {
  return "Id" + std::to_string(info.param.id_size) +
         (info.param.version == Version::k1_0_1 ? "_v101" : "_v102") +
         (info.param.seekable ? "_Seekable" : "_Streamed");
}

class RoundTrip : public testing::TestWithParam<Param> {
 protected:
  uint32_t id_size() const { return GetParam().id_size; }
  // Identifiers that use all bytes available: real 64-bit addresses with id size 8.
  Id id(Id small) const {
    return id_size() == 8 ? 0x00007f3a00000000ull | small : 0x80000000u | small;
  }
};

// Everything the writer can produce, kept to compare with what the reader returns.
struct Everything {
  std::vector<std::pair<Id, std::string>> strings;
  LoadClass load{1, 0, 300001, 0, 777};
  StackFrame frame;
  StackTrace trace;
  AllocSites sites;
  HeapSummary summary{1000, 10, 1ull << 40, 5ull << 33, 777};
  StartThread thread;
  CpuSamples samples;
  std::vector<Root> roots;
  ClassDump class_dump;
  std::vector<uint8_t> instance_fields;
  std::vector<Id> elements;
  int32_t ints[5] = {1, -2, 0x12345678, INT32_MIN, INT32_MAX};
  double doubles[3] = {0.5, -1e300, 3.25};
  uint8_t bools[3] = {1, 0, 1};
  char16_t chars[4] = {u'h', u'\u00e9', u'\u2713', 0xD83D};
  int64_t longs[2] = {INT64_MIN, 0x0102030405060708};
  float floats[2] = {1.5f, -0.0f};
  int16_t shorts[2] = {-1, 0x7fff};
  int8_t bytes[3] = {-128, 0, 127};
};

}  // namespace

TEST_P(RoundTrip, EveryRecordAndSubRecord) {
  const Param p = GetParam();
  Everything e;
  e.strings = {{id(1), "java.lang.String"},
               {id(2), "main"},
               {id(3), "run"},
               {id(4), "()V"},
               {id(5), "Main.java"},
               {id(6), "value"},
               {id(7), "count"},
               {id(8), "system"},
               {id(9), ""},
               {id(10), "h\xc3\xa9llo \xe2\x9c\x93"}};
  e.load = {7, id(0x100), 300001, id(1), 777};
  e.frame = {id(0x200), id(3), id(4), id(5), 7, -3, 777};
  e.trace = {300002, 1, {id(0x200), id(0x201), id(0x202)}, 777};
  e.sites.flags = 0x3;
  e.sites.cutoff = 0xeb1c432d;
  e.sites.total_live_bytes = 4096;
  e.sites.total_live_instances = 12;
  e.sites.total_allocated_bytes = 1ull << 35;
  e.sites.total_allocated_instances = 99999999999ull;
  e.sites.sites = {
      {0, 7, 300002, 100, 2, 200, 4}, {2, 8, 300003, 48, 1, 48, 1}, {10, 9, 300004, 64, 1, 128, 2}};
  e.sites.time = 777;
  e.thread = {1, id(0x300), 300001, id(2), id(8), id(9), 777};
  e.samples = {100, {{60, 300002}, {40, 300003}}, 777};
  e.roots = {
      {SubTag::kRootUnknown, id(0x400), 0, 0, 0, 0},
      {SubTag::kRootJniGlobal, id(0x401), id(0x9001), 0, 0, 0},
      {SubTag::kRootJniLocal, id(0x402), 0, 1, 3, 0},
      {SubTag::kRootJavaFrame, id(0x403), 0, 1, 0, 0},
      {SubTag::kRootNativeStack, id(0x404), 0, 2, 0, 0},
      {SubTag::kRootStickyClass, id(0x100), 0, 0, 0, 0},
      {SubTag::kRootThreadBlock, id(0x405), 0, 1, 0, 0},
      {SubTag::kRootMonitorUsed, id(0x406), 0, 0, 0, 0},
      {SubTag::kRootThreadObject, id(0x300), 0, 1, 0, 300001},
  };
  ClassDump& cd = e.class_dump;
  cd.class_id = id(0x100);
  cd.trace_serial = 300001;
  cd.super_id = id(0x101);
  cd.loader_id = 0;
  cd.signers_id = id(0x102);
  cd.protection_domain_id = id(0x103);
  cd.instance_size = id_size() + 4;
  cd.constant_pool = {{3, Value::of_object(id(0x500))}, {9, Value::of_long(-5)}};
  cd.statics = {{id(7), Value::of_int(-42)},       {id(6), Value::of_object(id(0x501))},
                {id(8), Value::of_boolean(true)},  {id(9), Value::of_char(u'\u2713')},
                {id(10), Value::of_double(2.5)},   {id(1), Value::of_float(-1.25f)},
                {id(2), Value::of_byte(-7)},       {id(3), Value::of_short(-300)},
                {id(4), Value::of_long(INT64_MIN)}};
  cd.fields = {{id(6), BasicType::kObject}, {id(7), BasicType::kInt}};
  append_value(e.instance_fields, Value::of_object(id(0x600)), id_size());
  append_value(e.instance_fields, Value::of_int(31337), id_size());
  e.elements = {id(0x700), 0, id(0x701)};

  MemorySink sink(p.seekable);
  {
    BinaryWriter w(sink, options(id_size(), p.version));
    w.control_settings(kAllocTraces | kCpuSampling, 10);
    for (auto& [sid, text] : e.strings) w.utf8(sid, text);
    w.load_class(e.load);
    w.stack_frame(e.frame);
    w.stack_trace(e.trace);
    w.start_thread(e.thread);
    w.alloc_sites(e.sites);
    w.heap_summary(e.summary);
    w.cpu_samples(e.samples);
    HeapDumpWriter d = w.begin_heap_dump();
    for (const Root& r : e.roots) d.root(r);
    d.root_unknown(id(0x410));
    d.root_jni_global(id(0x411), id(0x9002));
    d.root_jni_local(id(0x412), 2, 5);
    d.root_java_frame(id(0x413), 2, 6);
    d.root_native_stack(id(0x414), 3);
    d.root_sticky_class(id(0x415));
    d.root_thread_block(id(0x416), 4);
    d.root_monitor_used(id(0x417));
    d.root_thread_object(id(0x418), 5, 300009);
    d.class_dump(cd);
    d.instance_dump(id(0x601), 300002, id(0x100), e.instance_fields);
    d.obj_array_dump(id(0x602), 0, id(0x110), e.elements);
    d.prim_array_dump(id(0x610), 0, BasicType::kInt, e.ints, 5);
    d.prim_array_dump(id(0x611), 0, BasicType::kDouble, e.doubles, 3);
    d.prim_array_dump(id(0x612), 0, BasicType::kBoolean, e.bools, 3);
    d.prim_array_dump(id(0x613), 0, BasicType::kChar, e.chars, 4);
    d.prim_array_dump(id(0x614), 0, BasicType::kLong, e.longs, 2);
    d.prim_array_dump(id(0x615), 0, BasicType::kFloat, e.floats, 2);
    d.prim_array_dump(id(0x616), 0, BasicType::kShort, e.shorts, 2);
    d.prim_array_dump(id(0x617), 0, BasicType::kByte, e.bytes, 3);
    d.prim_array_dump(id(0x618), 0, BasicType::kInt, nullptr, 0);
    d.finish();
    w.unload_class(7);
    w.end_thread(1);
  }

  Profile r = read_memory(sink.data(), "roundtrip");
  EXPECT_EQ(r.header.version, p.version);
  EXPECT_EQ(r.header.id_size, id_size());
  EXPECT_EQ(r.header.timestamp_ms, 1700000000123ull);
  ASSERT_EQ(r.control_settings.size(), 1u);
  EXPECT_EQ(r.control_settings[0], (ControlSettings{3, 10, 777}));
  EXPECT_EQ(r.strings.size(), e.strings.size());
  for (auto& [sid, text] : e.strings) EXPECT_EQ(r.string(sid), text);
  ASSERT_EQ(r.classes.size(), 1u);
  EXPECT_EQ(r.classes[0], e.load);
  EXPECT_EQ(r.class_name(id(0x100)), "java.lang.String");
  ASSERT_NE(r.find_class_by_serial(7), nullptr);
  EXPECT_EQ(r.find_class_by_serial(7)->class_id, id(0x100));
  ASSERT_EQ(r.frames.size(), 1u);
  EXPECT_EQ(r.frames[0], e.frame);
  ASSERT_EQ(r.traces.size(), 1u);
  EXPECT_EQ(r.traces[0], e.trace);
  ASSERT_EQ(r.threads.size(), 1u);
  EXPECT_EQ(r.threads[0], e.thread);
  ASSERT_EQ(r.alloc_sites.size(), 1u);
  EXPECT_EQ(r.alloc_sites[0], e.sites);
  ASSERT_EQ(r.heap_summaries.size(), 1u);
  EXPECT_EQ(r.heap_summaries[0], e.summary);
  ASSERT_EQ(r.cpu_samples.size(), 1u);
  EXPECT_EQ(r.cpu_samples[0], e.samples);
  ASSERT_EQ(r.unloaded_classes.size(), 1u);
  EXPECT_EQ(r.unloaded_classes[0], (UnloadClass{7, 777}));
  ASSERT_EQ(r.ended_threads.size(), 1u);
  EXPECT_EQ(r.ended_threads[0], (EndThread{1, 777}));

  ASSERT_EQ(r.heap_dumps.size(), 1u);
  const HeapDump& d = r.heap_dumps[0];
  EXPECT_TRUE(d.complete);
  EXPECT_EQ(d.segments, 1u);
  std::vector<Root> roots = e.roots;
  roots.push_back({SubTag::kRootUnknown, id(0x410), 0, 0, 0, 0});
  roots.push_back({SubTag::kRootJniGlobal, id(0x411), id(0x9002), 0, 0, 0});
  roots.push_back({SubTag::kRootJniLocal, id(0x412), 0, 2, 5, 0});
  roots.push_back({SubTag::kRootJavaFrame, id(0x413), 0, 2, 6, 0});
  roots.push_back({SubTag::kRootNativeStack, id(0x414), 0, 3, 0, 0});
  roots.push_back({SubTag::kRootStickyClass, id(0x415), 0, 0, 0, 0});
  roots.push_back({SubTag::kRootThreadBlock, id(0x416), 0, 4, 0, 0});
  roots.push_back({SubTag::kRootMonitorUsed, id(0x417), 0, 0, 0, 0});
  roots.push_back({SubTag::kRootThreadObject, id(0x418), 0, 5, 0, 300009});
  EXPECT_EQ(d.roots, roots);
  ASSERT_EQ(d.classes.size(), 1u);
  EXPECT_EQ(d.classes[0], cd);
  ASSERT_EQ(d.instances.size(), 1u);
  const InstanceDump& inst = d.instances[0];
  EXPECT_EQ(inst.object_id, id(0x601));
  EXPECT_EQ(inst.trace_serial, 300002u);
  EXPECT_EQ(inst.class_id, id(0x100));
  EXPECT_EQ(std::vector<uint8_t>(inst.fields.begin(), inst.fields.end()), e.instance_fields);
  ASSERT_EQ(d.object_arrays.size(), 1u);
  EXPECT_EQ(d.object_arrays[0], (ObjArrayDump{id(0x602), 0, id(0x110), e.elements}));
  ASSERT_EQ(d.primitive_arrays.size(), 9u);
  auto arr = [&](Id aid) {
    const PrimArrayDump* a = d.find_primitive_array(aid);
    EXPECT_NE(a, nullptr);
    return a;
  };
  const PrimArrayDump* a = arr(id(0x610));
  ASSERT_EQ(a->length, 5u);
  EXPECT_EQ(a->type, BasicType::kInt);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(a->element(i).as_int(), e.ints[i]);
  a = arr(id(0x611));
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(a->element(i).as_double(), e.doubles[i]);
  a = arr(id(0x612));
  EXPECT_EQ(a->type, BasicType::kBoolean);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(a->element(i).as_boolean(), e.bools[i] != 0);
  a = arr(id(0x613));
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(a->element(i).as_char(), e.chars[i]);
  a = arr(id(0x614));
  for (size_t i = 0; i < 2; ++i) EXPECT_EQ(a->element(i).as_long(), e.longs[i]);
  a = arr(id(0x615));
  EXPECT_EQ(a->element(0).as_float(), 1.5f);
  EXPECT_TRUE(std::signbit(a->element(1).as_float()));
  a = arr(id(0x616));
  for (size_t i = 0; i < 2; ++i) EXPECT_EQ(a->element(i).as_short(), e.shorts[i]);
  a = arr(id(0x617));
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(a->element(i).as_byte(), e.bytes[i]);
  a = arr(id(0x618));
  EXPECT_EQ(a->length, 0u);
  EXPECT_TRUE(a->data.empty());

  // Lookups and decoding along the class chain (the superclass has no dump here: an error).
  EXPECT_EQ(d.find_instance(id(0x601)), &d.instances[0]);
  EXPECT_EQ(d.find_object_array(id(0x602)), &d.object_arrays[0]);
  EXPECT_EQ(d.find_instance(id(0x602)), nullptr);
  EXPECT_EQ(d.find_class(id(0x100)), &d.classes[0]);
  EXPECT_THROW(decode_fields(r, d, inst), FormatError);
  auto counts = instance_counts(r, d);
  EXPECT_EQ(counts, (std::map<std::string, uint64_t>{{"java.lang.String", 1}}));
}

INSTANTIATE_TEST_SUITE_P(
    Formats, RoundTrip,
    testing::Values(Param{4, Version::k1_0_2, true}, Param{8, Version::k1_0_2, true},
                    Param{4, Version::k1_0_2, false}, Param{8, Version::k1_0_2, false},
                    Param{4, Version::k1_0_1, true}, Param{8, Version::k1_0_1, false}),
    param_name);

// The exact bytes of a small file, checked against the format facts by hand.
TEST(RoundTripBytes, HeaderAndRecordLayout) {
  MemorySink sink;
  {
    BinaryWriter w(sink, options(4));
    w.control_settings(kCpuSampling, 4);
    w.utf8(0x11223344, "ab");
  }
  std::vector<uint8_t> expected = {
      'J',  'A',  'V',  'A',  ' ',  'P',  'R',  'O',  'F', 'I',  'L',  'E', ' ', '1', '.',
      '0',  '.',  '2',  0,    0,    0,    0,    4,        // id size
      0,    0,    0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x7b,     // ms
      0x0e, 0,    0,    0x03, 0x09, 0,    0,    0,    6,  // CONTROL SETTINGS
      0,    0,    0,    2,    0,    4,    0x01, 0,    0,   0x03, 0x09, 0,   0,   0,   6,  // UTF8
      0x11, 0x22, 0x33, 0x44, 'a',  'b'};
  EXPECT_EQ(sink.data(), expected);
}

// A class chain decodes, own fields first; statics and field_value work.
TEST(RoundTripBytes, DecodeFieldsAlongTheClassChain) {
  for (uint32_t id_size : {4u, 8u}) {
    MemorySink sink;
    {
      BinaryWriter w(sink, options(id_size));
      w.utf8(1, "Sub");
      w.utf8(2, "Base");
      w.utf8(3, "a");
      w.utf8(4, "b");
      w.utf8(5, "c");
      w.load_class({1, 0x100, 0, 1, 0});
      w.load_class({2, 0x200, 0, 2, 0});
      HeapDumpWriter d = w.begin_heap_dump();
      ClassDump sub;
      sub.class_id = 0x100;
      sub.super_id = 0x200;
      sub.fields = {{3, BasicType::kLong}, {4, BasicType::kObject}};
      ClassDump base;
      base.class_id = 0x200;
      base.fields = {{5, BasicType::kShort}, {3, BasicType::kByte}};
      std::vector<uint8_t> values;
      append_value(values, Value::of_long(-9), id_size);
      append_value(values, Value::of_object(0x999), id_size);
      append_value(values, Value::of_short(-2), id_size);
      append_value(values, Value::of_byte(5), id_size);
      d.instance_dump(0x1000, 0, 0x100, values);
      d.instance_dump(0x1001, 0, 0x100, std::span(values).first(values.size() - 1));
      d.class_dump(sub);
      d.class_dump(base);
      d.finish();
    }
    Profile p = read_memory(sink.data());
    const HeapDump& d = p.heap_dumps.at(0);
    auto f = decode_fields(p, d, *d.find_instance(0x1000));
    ASSERT_EQ(f.size(), 4u);
    EXPECT_EQ(f[0].name, "a");
    EXPECT_EQ(f[0].declaring_class, 0x100u);
    EXPECT_EQ(f[0].value.as_long(), -9);
    EXPECT_EQ(f[1].value, Value::of_object(0x999));
    EXPECT_EQ(f[2].name, "c");
    EXPECT_EQ(f[2].declaring_class, 0x200u);
    EXPECT_EQ(f[2].value.as_short(), -2);
    EXPECT_EQ(f[3].value.as_byte(), 5);
    EXPECT_EQ(field_value(p, d, *d.find_instance(0x1000), "a")->as_long(), -9);  // own class wins
    EXPECT_FALSE(field_value(p, d, *d.find_instance(0x1000), "zz").has_value());
    try {
      decode_fields(p, d, *d.find_instance(0x1001));
      ADD_FAILURE() << "short instance decoded";
    } catch (const FormatError& e) {
      EXPECT_NE(std::string(e.what()).find("ends before field"), std::string::npos) << e.what();
      EXPECT_GT(e.offset(), 31u);
    }
    auto counts = instance_counts(p, d);
    EXPECT_EQ(counts["Sub"], 2u);
  }
}

// Strings in a dump we write ourselves, in both JDK 8 (char[]) and JDK 9+ (byte[] + coder) forms.
TEST(RoundTripBytes, DecodeStrings) {
  MemorySink sink;
  {
    BinaryWriter w(sink, options(8));
    w.utf8(1, "java/lang/String");
    w.utf8(2, "value");
    w.utf8(3, "coder");
    w.utf8(4, "hash");
    w.load_class({1, 0x100, 0, 1, 0});
    HeapDumpWriter d = w.begin_heap_dump();
    ClassDump s;
    s.class_id = 0x100;
    s.fields = {{2, BasicType::kObject}, {4, BasicType::kInt}, {3, BasicType::kByte}};
    d.class_dump(s);
    auto instance = [&](Id obj, Id array, int8_t coder) {
      std::vector<uint8_t> v;
      append_value(v, Value::of_object(array), 8);
      append_value(v, Value::of_int(0), 8);
      append_value(v, Value::of_byte(coder), 8);
      d.instance_dump(obj, 0, 0x100, v);
    };
    const char latin1[] = "gr\xfc\xdf";
    d.prim_array_dump(0x201, 0, BasicType::kByte, latin1, 4);
    instance(0x101, 0x201, 0);
    // UTF16 coder: native (little-endian) byte pairs: "\u00e9\u2713" + U+1F600.
    const uint8_t utf16[] = {0xe9, 0x00, 0x13, 0x27, 0x3d, 0xd8, 0x00, 0xde};
    d.prim_array_dump(0x202, 0, BasicType::kByte, utf16, sizeof utf16);
    instance(0x102, 0x202, 1);
    instance(0x103, 0, 0);  // null value
    d.finish();
  }
  Profile p = read_memory(sink.data());
  const HeapDump& d = p.heap_dumps.at(0);
  EXPECT_EQ(decode_string(p, d, 0x101), "gr\xc3\xbc\xc3\x9f");
  EXPECT_EQ(decode_string(p, d, 0x102), "\xc3\xa9\xe2\x9c\x93\xf0\x9f\x98\x80");
  EXPECT_EQ(decode_string(p, d, 0x103), std::nullopt);
  EXPECT_EQ(decode_string(p, d, 0x999), std::nullopt);
}

TEST(RoundTripBytes, WriterRejectsBadArguments) {
  MemorySink sink;
  WriterOptions o = options(4);
  o.id_size = 5;
  EXPECT_THROW(BinaryWriter(sink, o), std::invalid_argument);
  BinaryWriter w(sink, options(4));
  EXPECT_THROW(w.utf8(0x100000000ull, "x"), std::invalid_argument);
  HeapDumpWriter d = w.begin_heap_dump();
  EXPECT_THROW(w.begin_heap_dump(), std::logic_error);
  std::vector<Id> big = {1, 0x1ffffffffull};
  EXPECT_THROW(d.obj_array_dump(1, 0, 2, big), std::invalid_argument);
  int x = 0;
  EXPECT_THROW(d.prim_array_dump(1, 0, BasicType::kObject, &x, 1), std::invalid_argument);
  EXPECT_THROW(d.root({.kind = SubTag::kClassDump}), std::invalid_argument);
  d.finish();
  EXPECT_THROW(d.root_unknown(1), std::logic_error);
}
