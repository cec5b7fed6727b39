// SPDX-License-Identifier: Apache-2.0
// Malformed and truncated inputs: a FormatError naming the problem and the offset, never a crash.
#include <gtest/gtest.h>

#include "hprof_format.h"
#include "test_util.h"

using namespace hprof;
using formats_test::Bytes;
using formats_test::options;

namespace {

constexpr uint64_t kHeaderSize = 19 + 4 + 8;  // "JAVA PROFILE 1.0.2\0", id size, timestamp

// Parses and returns the error; fails the test if there is none.
FormatError error_of(const std::vector<uint8_t>& data) {
  try {
    read_memory(data, "bad.hprof");
  } catch (const FormatError& e) {
    return e;
  }
  ADD_FAILURE() << "no FormatError";
  return FormatError("", 0);
}

void expect_error(const std::vector<uint8_t>& data, const std::string& fragment, uint64_t offset) {
  FormatError e = error_of(data);
  std::string message = e.what();
  EXPECT_NE(message.find(fragment), std::string::npos) << message;
  EXPECT_NE(message.find("bad.hprof: offset " + std::to_string(offset)), std::string::npos)
      << message;
  EXPECT_EQ(e.offset(), offset) << message;
}

std::vector<uint8_t> valid_file(uint32_t id_size) {
  MemorySink sink;
  BinaryWriter w(sink, options(id_size));
  w.control_settings(1, 4);
  w.utf8(1, "C");
  w.utf8(2, "f");
  w.load_class({1, 0x10, 0, 1, 0});
  w.stack_frame({0x20, 1, 2, 0, 1, 12, 0});
  w.stack_trace({1, 0, {0x20}, 0});
  w.start_thread({1, 0x30, 1, 2, 2, 0, 0});
  w.alloc_sites({0, 0, 1, 1, 2, 2, {{0, 1, 1, 1, 1, 1, 1}}, 0});
  w.cpu_samples({1, {{1, 1}}, 0});
  HeapDumpWriter d = w.begin_heap_dump();
  d.root_thread_object(0x30, 1, 1);
  d.root_jni_global(0x31, 7);
  ClassDump c;
  c.class_id = 0x10;
  c.constant_pool = {{1, Value::of_int(3)}};
  c.statics = {{2, Value::of_object(0x40)}};
  c.fields = {{2, BasicType::kInt}};
  d.class_dump(c);
  std::vector<uint8_t> v;
  append_value(v, Value::of_int(5), id_size);
  d.instance_dump(0x40, 0, 0x10, v);
  std::vector<Id> e = {0x40, 0};
  d.obj_array_dump(0x41, 0, 0x11, e);
  int16_t s[2] = {1, 2};
  d.prim_array_dump(0x42, 0, BasicType::kShort, s, 2);
  d.finish();
  w.end_thread(1);
  return sink.data();
}

}  // namespace

TEST(Malformed, EmptyInput) {
  expect_error({}, "empty input", 0);
}

TEST(Malformed, TruncatedHeader) {
  expect_error(Bytes().str("JAVA PROF").b, "truncated header", 0);
  // Version complete, identifier size cut short.
  expect_error(Bytes().str("JAVA PROFILE 1.0.2", true).u2(0).b, "identifier size", 19);
  // Timestamp cut short.
  expect_error(Bytes().str("JAVA PROFILE 1.0.2", true).u4(8).u4(0).b, "timestamp", 23);
}

TEST(Malformed, NotHprof) {
  expect_error(Bytes().str("JAVA PROFILE 9.9", true).u4(8).u8(0).b, "unknown version", 0);
  std::vector<uint8_t> junk(200, 'x');
  expect_error(junk, "not an HPROF file", 0);
}

TEST(Malformed, BadIdSize) {
  for (uint32_t bad : {0u, 1u, 2u, 5u, 16u, 0xffffffffu}) {
    expect_error(Bytes().header(bad).b, "identifier size " + std::to_string(bad), 19);
  }
}

TEST(Malformed, BadTag) {
  expect_error(Bytes().header().record(0x42, {}).b, "unknown record tag 0x42", kHeaderSize);
  // After a good record.
  Bytes b;
  b.header().record(0x0B, {0, 0, 0, 1});
  b.record(0x99, {});
  expect_error(b.b, "unknown record tag 0x99", kHeaderSize + 13);
}

TEST(Malformed, LengthOverrunsTheFile) {
  Bytes b;
  b.header().u1(0x01).u4(0).u4(1000).u8(1).str("abc");
  expect_error(b.b, "UTF8 record at offset 31: length 1000 overruns the end", kHeaderSize);
}

TEST(Malformed, TruncatedRecordHeader) {
  Bytes b;
  b.header().u1(0x01).u4(0);
  expect_error(b.b, "truncated record header", kHeaderSize + 5);
}

TEST(Malformed, RecordShorterOrLongerThanItsFields) {
  // LOAD CLASS with 3 bytes of body.
  expect_error(Bytes().header().record(0x02, {0, 0, 1}).b, "truncated LOAD CLASS record",
               kHeaderSize + 9);
  // END THREAD with 2 extra bytes.
  expect_error(Bytes().header().record(0x0B, {0, 0, 0, 1, 9, 9}).b, "2 unexpected bytes",
               kHeaderSize + 13);
  // STACK TRACE claiming 2^32-1 frames.
  expect_error(Bytes().header().record(0x05, {0, 0, 0, 1, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}).b,
               "frame ids: 4294967295 elements of 8 bytes overrun", kHeaderSize + 21);
}

TEST(Malformed, BadSubRecords) {
  // Unknown sub-record tag.
  expect_error(Bytes().header().record(0x1C, {0x77}).b, "unknown heap dump sub-record tag 0x77",
               kHeaderSize + 9);
  // A sub-record running past its segment (the next record's bytes must not be used).
  Bytes root;
  root.u1(0x05).u4(0x1234);  // 5 of 9 bytes
  Bytes b;
  b.header().record(0x1C, root.b).record(0x2C, {});
  expect_error(b.b, "truncated ROOT STICKY CLASS sub-record", kHeaderSize + 10);
  // Invalid type code in a CLASS DUMP's instance fields.
  Bytes cd;
  cd.u1(0x20).u8(1).u4(0);
  for (int i = 0; i < 6; ++i) cd.u8(0);
  cd.u4(0).u2(0).u2(0).u2(1).u8(5).u1(3);
  expect_error(Bytes().header().record(0x1C, cd.b).b, "invalid field type code 3",
               kHeaderSize + 9 + cd.size() - 1);
  // Invalid type code of a static.
  Bytes st;
  st.u1(0x20).u8(1).u4(0);
  for (int i = 0; i < 6; ++i) st.u8(0);
  st.u4(0).u2(0).u2(1).u8(5).u1(1).u2(0);
  expect_error(Bytes().header().record(0x1C, st.b).b, "invalid type code 1",
               kHeaderSize + 9 + st.size() - 3);
  // PRIM ARRAY of objects.
  Bytes pa;
  pa.u1(0x23).u8(1).u4(0).u4(1).u1(2).u8(0);
  expect_error(Bytes().header().record(0x1C, pa.b).b, "invalid primitive array element type 2",
               kHeaderSize + 9 + 17);
  // OBJ ARRAY with a huge count: rejected before allocating.
  Bytes oa;
  oa.u1(0x22).u8(1).u4(0).u4(0x7fffffff).u8(2);
  expect_error(Bytes().header().record(0x1C, oa.b).b, "elements: 2147483647 elements of 8",
               kHeaderSize + 9 + oa.size());
  // INSTANCE DUMP whose byte count overruns the segment.
  Bytes in;
  in.u1(0x21).u8(1).u4(0).u8(2).u4(100).u4(0);
  expect_error(Bytes().header().record(0x1C, in.b).b, "field values needs 100 bytes, 4 left",
               kHeaderSize + 9 + 25);
}

// Every prefix and many single-byte corruptions of a valid file parse or fail cleanly.
TEST(Malformed, EveryTruncationAndCorruption) {
  for (uint32_t id_size : {4u, 8u}) {
    std::vector<uint8_t> good = valid_file(id_size);
    EXPECT_NO_THROW(read_memory(good));
    for (size_t n = 0; n < good.size(); ++n) {
      std::vector<uint8_t> prefix(good.begin(), good.begin() + n);
      try {
        read_memory(prefix);
        // Only prefixes ending on a record boundary may parse.
      } catch (const FormatError& e) {
        EXPECT_LE(e.offset(), n);
      }
    }
    for (size_t i = 0; i < good.size(); ++i) {
      for (uint8_t x : {0x00, 0xff, 0x80, 0x01}) {
        std::vector<uint8_t> bad = good;
        bad[i] ^= x;
        try {
          Profile p = read_memory(bad);
          for (const HeapDump& d : p.heap_dumps) {
            for (const InstanceDump& inst : d.instances) {
              try {
                decode_fields(p, d, inst);
                decode_string(p, d, inst.object_id);
              } catch (const FormatError&) {
              }
            }
          }
        } catch (const FormatError& e) {
          EXPECT_LE(e.offset(), bad.size());
        }
      }
    }
  }
}

TEST(Malformed, MissingFileIsASystemError) {
  EXPECT_THROW(read_file("/nonexistent/dir/x.hprof"), std::system_error);
}

TEST(Malformed, ClassChainLoop) {
  MemorySink sink;
  {
    BinaryWriter w(sink, options(8));
    HeapDumpWriter d = w.begin_heap_dump();
    ClassDump a;
    a.class_id = 1;
    a.super_id = 2;
    ClassDump b;
    b.class_id = 2;
    b.super_id = 1;
    d.class_dump(a);
    d.class_dump(b);
    d.instance_dump(10, 0, 1, {});
    d.instance_dump(11, 0, 3, {});
    d.finish();
  }
  Profile p = read_memory(sink.data());
  const HeapDump& d = p.heap_dumps.at(0);
  EXPECT_THROW(decode_fields(p, d, d.instances[0]), FormatError);
  try {
    decode_fields(p, d, d.instances[1]);
    ADD_FAILURE();
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("no CLASS DUMP for class 0x3"), std::string::npos);
  }
}
