// SPDX-License-Identifier: Apache-2.0
// Truncated, corrupt and hostile dumps: one clear error (byte offset and record), never a crash,
// a hang or an allocation sized by an unchecked length. Run under ASan/UBSan in the SANITIZE build.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "analysis.h"
#include "synthetic_dump.h"
#include "test_files.h"

using analysis::HeapDump;
using analysis_test::SyntheticDump;
using hprof::BasicType;
using hprof::Value;

namespace {

std::string temp_path(const std::string& name) {
  return analysis_test::temp_path("hostile", name);
}

void write(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

// Opens and runs every query; returns the error text, or "" when the dump was accepted.
std::string analyse(const std::vector<uint8_t>& bytes) {
  const std::string path = temp_path("input.hprof");
  write(path, bytes);
  try {
    auto d = HeapDump::open(path, {.use_index_file = false});
    (void)d->summary();
    (void)d->class_histogram();
    for (const auto& b : d->biggest_objects(3, 3)) (void)d->paths_to(b.object.id, 2);
    (void)d->duplicate_strings(3, 3);
    (void)d->suspects(0.1);
    return "";
  } catch (const analysis::Error& e) {
    return e.what();
  }
}

std::vector<uint8_t> sample_dump() {
  SyntheticDump dump(8, hprof::Version::k1_0_2, 80);
  uint64_t object = dump.add_class("java/lang/Object", 0, {});
  uint64_t string = dump.add_class("java/lang/String", object,
                                   {{"value", BasicType::kObject}, {"coder", BasicType::kByte}});
  uint64_t node = dump.add_class("Node", object, {{"next", BasicType::kObject}});
  uint64_t array_class = dump.add_class("[Ljava/lang/Object;", object, {});
  uint64_t bytes = dump.add_byte_array({'h', 'i'});
  uint64_t s1 = dump.add_instance(string, {Value::of_object(bytes), Value::of_byte(0)});
  uint64_t s2 = dump.add_instance(string, {Value::of_object(bytes), Value::of_byte(0)});
  uint64_t n1 = dump.add_instance(node, {Value::of_object(s1)});
  uint64_t n2 = dump.add_instance(node, {Value::of_object(n1)});
  uint64_t array = dump.add_object_array(array_class, {n2, s2, 0, n1});
  dump.add_root(hprof::SubTag::kRootJniGlobal, array);
  dump.add_root(hprof::SubTag::kRootJavaFrame, n2);
  return dump.bytes();
}

TEST(Hostile, EveryTruncationIsAcceptedOrOneError) {
  const std::vector<uint8_t> full = sample_dump();
  ASSERT_EQ(analyse(full), "");
  int errors = 0;
  for (size_t size = 0; size < full.size(); ++size) {
    std::string error = analyse({full.begin(), full.begin() + static_cast<long>(size)});
    if (error.empty()) continue;  // cut at a record boundary: a valid, shorter dump
    ++errors;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    EXPECT_NE(error.find("byte offset"), std::string::npos) << error;
  }
  EXPECT_GT(errors, static_cast<int>(full.size()) / 2);
}

TEST(Hostile, RandomCorruptionNeverCrashes) {
  const std::vector<uint8_t> full = sample_dump();
  std::mt19937 rng(1234);
  for (int round = 0; round < 400; ++round) {
    std::vector<uint8_t> bytes = full;
    for (int flips = 1 + round % 4; flips > 0; --flips) {
      size_t at = rng() % bytes.size();
      bytes[at] = round % 2 ? static_cast<uint8_t>(rng()) : 0xFF;
    }
    std::string error = analyse(bytes);
    EXPECT_EQ(error.find('\n'), std::string::npos);
  }
}

// The tail of a dump: header, then a HEAP DUMP SEGMENT holding `body`.
std::vector<uint8_t> with_segment(const std::vector<uint8_t>& body) {
  std::string magic = "JAVA PROFILE 1.0.2";
  std::vector<uint8_t> out(magic.begin(), magic.end());
  out.push_back(0);
  auto u4 = [&](uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<uint8_t>(v >> s));
  };
  u4(4);
  u4(0), u4(0);
  out.push_back(0x1C);
  u4(0);
  u4(static_cast<uint32_t>(body.size()));
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

TEST(Hostile, HugeCountsAreRejectedBeforeAnyAllocation) {
  // PRIM ARRAY DUMP of 0xFFFFFFFF longs in a 20-byte record.
  std::string e = analyse(
      with_segment({0x23, 0, 0, 0, 1, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 11, 0, 0, 0, 0, 0, 0}));
  EXPECT_NE(e.find("PRIM ARRAY DUMP"), std::string::npos) << e;
  EXPECT_NE(e.find("record at 40"), std::string::npos) << e;  // 31-byte header, 9-byte record head
  // OBJ ARRAY DUMP claiming 0x40000000 elements.
  e = analyse(with_segment({0x22, 0, 0, 0, 1, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 2}));
  EXPECT_NE(e.find("OBJ ARRAY DUMP"), std::string::npos) << e;
  // INSTANCE DUMP with a field-data length past the record.
  e = analyse(with_segment({0x21, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0x7F, 0xFF, 0xFF, 0xFF}));
  EXPECT_NE(e.find("INSTANCE DUMP"), std::string::npos) << e;
  // A record length past the end of the file.
  std::vector<uint8_t> long_record = with_segment({});
  long_record[long_record.size() - 1] = 0xFF;
  e = analyse(long_record);
  EXPECT_NE(e.find("HEAP DUMP SEGMENT"), std::string::npos) << e;
}

TEST(Hostile, StructuralErrorsNameTheProblem) {
  EXPECT_NE(analyse({}).find("empty file"), std::string::npos);
  EXPECT_NE(analyse({'G', 'I', 'F', '8', '9', 'a', 0}).find("not an HPROF"), std::string::npos);
  std::vector<uint8_t> bad_ids = with_segment({});
  bad_ids[22] = 3;  // identifier size 3
  EXPECT_NE(analyse(bad_ids).find("identifier size 3"), std::string::npos);
  EXPECT_NE(analyse(with_segment({0x42})).find("unknown sub-record tag 0x42"), std::string::npos);
  // An instance whose field data does not match its class's layout.
  SyntheticDump dump(4, hprof::Version::k1_0_2);
  uint64_t object = dump.add_class("java/lang/Object", 0, {});
  uint64_t node = dump.add_class("Node", object, {{"next", BasicType::kObject}});
  dump.add_instance(node, {Value::of_object(0), Value::of_int(5)});  // 8 bytes, layout says 4
  EXPECT_NE(analyse(dump.bytes()).find("layout of Node needs 4"), std::string::npos);
  // A class that is its own superclass.
  SyntheticDump cyclic(4, hprof::Version::k1_0_2);
  uint64_t a = cyclic.id(1);
  cyclic.add_class("A", a, {{"x", BasicType::kInt}});
  EXPECT_NE(analyse(cyclic.bytes()).find("cycle"), std::string::npos);
}

// Names in a dump are untrusted: a class name with a line break (found by the fuzzer) must not
// split the error into two lines.
TEST(Hostile, NamesInErrorsStayOnOneLine) {
  SyntheticDump dump(4, hprof::Version::k1_0_2);
  uint64_t object = dump.add_class("java/lang/Object", 0, {});
  uint64_t node = dump.add_class("Evil\nName\x1b[31m", object, {{"next", BasicType::kObject}});
  dump.add_instance(node, {Value::of_object(0), Value::of_int(5)});  // 8 bytes, layout says 4
  const std::string error = analyse(dump.bytes());
  EXPECT_NE(error.find("layout of Evil\\x0aName\\x1b[31m needs 4"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  EXPECT_EQ(error.find('\x1b'), std::string::npos) << error;
}

}  // namespace
