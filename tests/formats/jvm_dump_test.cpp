// SPDX-License-Identifier: Apache-2.0
// Reads a heap dump written by the JVM itself (JDK 17, HotSpotDiagnosticMXBean.dumpHeap, the same
// writer as `jcmd <pid> GC.heap_dump`) of FormatsHeapDumpProgram, whose objects are known.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "hprof_format.h"

using namespace hprof;

namespace {

constexpr int kCount = 1234;  // FormatsHeapDumpProgram.COUNT

// The dump is made once and reused by later test processes while the program is unchanged.
const std::string& dump_path() {
  static const std::string path = [] {
    std::string dir = FORMATS_WORK_DIR;
    std::string out = dir + "/jvm_heap_dump.hprof";
    std::string cls = std::string(FORMATS_CLASSES_DIR) + "/FormatsHeapDumpProgram.class";
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::exists(out, ec) && fs::last_write_time(out, ec) >= fs::last_write_time(cls, ec)) {
      return out;
    }
    std::string tmp = dir + "/jvm_heap_dump." + std::to_string(getpid()) + ".tmp.hprof";
    fs::remove(tmp, ec);
    std::string cmd = std::string("'") + FORMATS_JAVA + "' -Xmx128m -XX:+UseSerialGC -cp '" +
                      FORMATS_CLASSES_DIR + "' FormatsHeapDumpProgram '" + tmp + "' > '" + tmp +
                      ".log' 2>&1";
    int rc = std::system(cmd.c_str());
    if (rc != 0 || !fs::exists(tmp, ec)) {
      ADD_FAILURE() << "java failed (" << rc << "): " << cmd;
      return out;
    }
    fs::remove(tmp + ".log", ec);
    fs::rename(tmp, out, ec);  // atomic: parallel test processes may race here
    return out;
  }();
  return path;
}

class JvmDump : public testing::Test {
 protected:
  static void SetUpTestSuite() { profile_ = std::make_unique<Profile>(read_file(dump_path())); }
  static void TearDownTestSuite() { profile_.reset(); }

  const Profile& p() const { return *profile_; }
  const HeapDump& dump() const { return profile_->heap_dumps.at(0); }

  // The instance's field named `name`, which must exist.
  Value field(const InstanceDump& i, std::string_view name) const {
    auto v = field_value(p(), dump(), i, name);
    EXPECT_TRUE(v.has_value()) << name;
    return v.value_or(Value{});
  }

  const ClassDump* class_named(std::string_view name) const {
    for (const LoadClass& c : p().classes) {
      if (p().string(c.name_id) == name) return dump().find_class(c.class_id);
    }
    return nullptr;
  }

  Value static_field(const ClassDump& c, std::string_view name) const {
    for (const StaticField& f : c.statics) {
      if (p().string(f.name_id) == name) return f.value;
    }
    ADD_FAILURE() << "no static " << name;
    return {};
  }

  static std::unique_ptr<Profile> profile_;
};

std::unique_ptr<Profile> JvmDump::profile_;

}  // namespace

TEST_F(JvmDump, HeaderAndStructure) {
  EXPECT_EQ(p().header.version, Version::k1_0_2);
  EXPECT_EQ(p().header.id_size, 8u);
  EXPECT_GT(p().header.timestamp_ms, 1600000000000ull);
  ASSERT_EQ(p().heap_dumps.size(), 1u);
  EXPECT_TRUE(dump().complete);
  EXPECT_GE(dump().segments, 1u);
  EXPECT_GT(p().strings.size(), 1000u);
  EXPECT_GT(p().classes.size(), 400u);
  EXPECT_GT(dump().classes.size(), 400u);
  EXPECT_FALSE(p().traces.empty());
  bool sticky = false, thread = false;
  for (const Root& r : dump().roots) {
    sticky |= r.kind == SubTag::kRootStickyClass;
    thread |= r.kind == SubTag::kRootThreadObject;
  }
  EXPECT_TRUE(sticky);
  EXPECT_TRUE(thread);
}

TEST_F(JvmDump, InstanceCountsMatchTheProgram) {
  auto counts = instance_counts(p(), dump());
  EXPECT_EQ(counts["FormatsHeapDumpProgram$Subject"], uint64_t{kCount});
  EXPECT_EQ(counts["FormatsHeapDumpProgram$Base"], 0u);
  EXPECT_GE(counts["java/lang/String"], uint64_t{kCount});
  // The Subject[] array holds them all.
  const ClassDump* program = class_named("FormatsHeapDumpProgram");
  ASSERT_NE(program, nullptr);
  const ObjArrayDump* subjects =
      dump().find_object_array(static_field(*program, "subjects").as_object());
  ASSERT_NE(subjects, nullptr);
  EXPECT_EQ(subjects->elements.size(), size_t{kCount});
  EXPECT_EQ(p().class_name(subjects->array_class_id), "[LFormatsHeapDumpProgram$Subject;");
}

TEST_F(JvmDump, FieldValuesDecode) {
  const ClassDump* program = class_named("FormatsHeapDumpProgram");
  ASSERT_NE(program, nullptr);
  EXPECT_EQ(static_field(*program, "answer").as_int(), 42);
  const ObjArrayDump* subjects =
      dump().find_object_array(static_field(*program, "subjects").as_object());
  ASSERT_NE(subjects, nullptr);
  for (int i : {0, 7, 999, kCount - 1}) {
    const InstanceDump* s = dump().find_instance(subjects->elements.at(i));
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(field(*s, "index").as_int(), i);
    EXPECT_EQ(field(*s, "big").as_long(), i * 1'000'000'007LL);
    EXPECT_EQ(field(*s, "ratio").as_double(), i * 0.5);
    EXPECT_EQ(field(*s, "fraction").as_float(), i * 0.25f);
    EXPECT_EQ(field(*s, "flag").as_boolean(), i % 2 == 0);
    EXPECT_EQ(field(*s, "letter").as_char(), static_cast<char16_t>('A' + i % 26));
    EXPECT_EQ(field(*s, "small").as_byte(), static_cast<int8_t>(-i));
    EXPECT_EQ(field(*s, "medium").as_short(), static_cast<int16_t>(i * 7));
    EXPECT_EQ(field(*s, "baseValue").as_int(), 12345 + i);  // from the superclass's dump
    EXPECT_EQ(decode_string(p(), dump(), field(*s, "label").as_object()),
              "subject-" + std::to_string(i));
    EXPECT_EQ(decode_string(p(), dump(), field(*s, "baseName").as_object()), "base");
    Id next = field(*s, "next").as_object();
    if (i + 1 < kCount) {
      EXPECT_EQ(next, subjects->elements.at(i + 1));
    } else {
      EXPECT_EQ(next, 0u);
    }
    // Own fields come first, then Base's.
    auto fields = decode_fields(p(), dump(), *s);
    ASSERT_EQ(fields.size(), 12u);
    EXPECT_EQ(fields.back().declaring_class, fields.front().declaring_class == s->class_id
                                                 ? dump().find_class(s->class_id)->super_id
                                                 : 0u);
  }
}

TEST_F(JvmDump, StringsAndPrimitiveArraysDecode) {
  const ClassDump* program = class_named("FormatsHeapDumpProgram");
  ASSERT_NE(program, nullptr);
  EXPECT_EQ(decode_string(p(), dump(), static_field(*program, "latin1").as_object()),
            "gr\xc3\xbc\xc3\x9f"
            "e aus K\xc3\xb6ln");
  EXPECT_EQ(decode_string(p(), dump(), static_field(*program, "unicode").as_object()),
            "h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93 \xf0\x9f\x98\x80");
  const PrimArrayDump* numbers =
      dump().find_primitive_array(static_field(*program, "numbers").as_object());
  ASSERT_NE(numbers, nullptr);
  EXPECT_EQ(numbers->type, BasicType::kInt);
  std::vector<int32_t> got;
  for (size_t i = 0; i < numbers->length; ++i) got.push_back(numbers->element(i).as_int());
  EXPECT_EQ(got, (std::vector<int32_t>{3, 1, 4, 1, 5, 9, 2, 6}));
  // Every instance of the dump decodes against its class chain.
  size_t decoded = 0;
  for (const InstanceDump& i : dump().instances) {
    decode_fields(p(), dump(), i);
    ++decoded;
  }
  EXPECT_EQ(decoded, dump().instances.size());
}

// Our writer can re-encode what the JVM wrote, and the copy reads back the same.
TEST_F(JvmDump, RewriteWithOurWriter) {
  MemorySink sink(false);
  {
    WriterOptions o;
    o.buffer_limit = 1 << 20;
    BinaryWriter w(sink, o);
    for (const auto& [id, text] : p().strings) w.utf8(id, text);
    for (const LoadClass& c : p().classes) w.load_class(c);
    HeapDumpWriter d = w.begin_heap_dump();
    for (const Root& r : dump().roots) d.root(r);
    for (const ClassDump& c : dump().classes) d.class_dump(c);
    for (const InstanceDump& i : dump().instances) {
      d.instance_dump(i.object_id, i.trace_serial, i.class_id, i.fields);
    }
    for (const ObjArrayDump& a : dump().object_arrays) {
      d.obj_array_dump(a.array_id, a.trace_serial, a.array_class_id, a.elements);
    }
    for (const PrimArrayDump& a : dump().primitive_arrays) {
      d.prim_array_dump(a.array_id, a.trace_serial, a.type, a.data.data(), a.length,
                        ByteOrder::kBig);
    }
    d.finish();
  }
  Profile copy = read_memory(sink.data(), "copy");
  const HeapDump& d = copy.heap_dumps.at(0);
  EXPECT_GT(d.segments, 1u);
  EXPECT_EQ(instance_counts(copy, d), instance_counts(p(), dump()));
  EXPECT_EQ(d.roots, dump().roots);
  EXPECT_EQ(d.classes, dump().classes);
  ASSERT_EQ(d.primitive_arrays.size(), dump().primitive_arrays.size());
  for (size_t i = 0; i < d.primitive_arrays.size(); ++i) {
    ASSERT_TRUE(std::equal(d.primitive_arrays[i].data.begin(), d.primitive_arrays[i].data.end(),
                           dump().primitive_arrays[i].data.begin(),
                           dump().primitive_arrays[i].data.end()));
  }
}
