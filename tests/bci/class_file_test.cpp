// SPDX-License-Identifier: Apache-2.0
// Reader/writer round trip and malformed input: every problem is a bci::ClassFormatError naming
// the problem and the offset, never a crash.
#include <gtest/gtest.h>

#include "bci.h"
#include "bci_tree.h"
#include "class_builder.h"
#include "test_support.h"

namespace bcitest {
namespace {

using bci::ClassFormatError;

std::vector<uint8_t> test_program_class(const std::string& name) {
  auto bytes = read_file(java_classes_dir() / name);
  EXPECT_FALSE(bytes.empty()) << "missing " << name << " (build java_bci_tests)";
  return bytes;
}

// The exception message for instrumenting `bytes`, or "" when it succeeds.
std::string error_of(const std::vector<uint8_t>& bytes) {
  try {
    bci::instrument(bytes, all_hooks("T", 1));
    return "";
  } catch (const ClassFormatError& e) {
    return e.what();
  }
}

TEST(RoundTrip, TestProgramClasses) {
  RoundTripStats stats = round_trip_tree(java_classes_dir());
  std::cout << "round trip of " << stats.classes << " test program classes: " << stats.mismatches
            << " mismatches, " << stats.errors << " errors\n";
  for (const auto& m : stats.messages) ADD_FAILURE() << m;
  EXPECT_GE(stats.classes, 10u);
  EXPECT_EQ(stats.mismatches + stats.errors, 0u);
}

TEST(RoundTrip, GeneratedClassIsReadBack) {
  auto bytes = bci::write_class(make_class({{.code = {0x1a, 0xac}}}));
  bci::ClassFile cf = bci::parse_class(bytes);
  EXPECT_EQ(cf.name(), "Test");
  EXPECT_EQ(bci::write_class(cf), bytes);
}

TEST(Instrument, NoHooksLeavesClassUnchanged) {
  auto bytes = test_program_class("bciprog/CallSequence.class");
  bci::InjectionOptions none;
  bci::InjectionResult r = bci::instrument(bytes, none);
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(r.class_bytes, bytes);
  EXPECT_EQ(r.class_name, "bciprog/CallSequence");
}

TEST(Instrument, TrackerClassIsNotInstrumented) {
  auto bytes = test_program_class("bcitest/RecordingTracker.class");
  bci::InjectionResult r = bci::instrument(bytes, all_hooks("bcitest/RecordingTracker", 1));
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(r.class_bytes, bytes);
}

TEST(Instrument, AbstractAndNativeMethodsAreSkipped) {
  bci::ClassFile cf = make_class({{.name = "a", .descriptor = "()V", .access = 0x0401},
                                  {.name = "n", .descriptor = "()V", .access = 0x0109},
                                  {.code = {0x1a, 0xac}}});
  bci::InjectionResult r = bci::instrument(bci::write_class(cf), all_hooks("T", 1));
  ASSERT_EQ(r.methods.size(), 3u);
  EXPECT_FALSE(r.methods[0].instrumented);
  EXPECT_FALSE(r.methods[1].instrumented);
  EXPECT_TRUE(r.methods[2].instrumented);
  EXPECT_TRUE(r.changed);
}

TEST(Instrument, MethodMetadataAndLookupswitchTables) {
  auto bytes = test_program_class("bciprog/CallSequence.class");
  bci::InjectionResult r = bci::instrument(bytes, all_hooks("T", 7));
  const bci::MethodInfo* lookup = nullptr;
  for (const auto& m : r.methods) {
    if (m.name == "lookupSwitch") lookup = &m;
  }
  ASSERT_NE(lookup, nullptr);
  EXPECT_EQ(lookup->descriptor, "(I)I");
  EXPECT_TRUE(lookup->instrumented);
  EXPECT_TRUE(lookup->instruction_hooks);
  ASSERT_EQ(lookup->lookup_switches.size(), 1u);
  const bci::LookupSwitch& s = lookup->lookup_switches[0];
  EXPECT_EQ(s.keys, (std::vector<int32_t>{-1000, 7, 100000}));
  EXPECT_EQ(s.pair_index(7), 1);
  EXPECT_EQ(s.pair_index(100000), 2);
  EXPECT_EQ(s.pair_index(8), -1);
}

// The runtime gives a class a new number every time it instruments it again, and HotSpot keeps
// every constant of the version a retransformation replaces: a number in the constant pool would
// grow the class's pool by one entry per retransformation, for good. Numbers beyond sipush are
// therefore built in code, and two instrumentations that differ only in the number have the same
// constant pool. (bci.CallSequence runs classes numbered this way and maps every hook's number
// back to its class.)
TEST(Instrument, ClassNumbersAddNoConstants) {
  auto bytes = test_program_class("bciprog/CallSequence.class");
  const bci::ClassFile small =
      bci::parse_class(bci::instrument(bytes, all_hooks("T", 7)).class_bytes);
  for (uint32_t number : {40000u, 65536u, 0x12345u, (1u << 22) - 1}) {
    SCOPED_TRACE(number);
    const bci::ClassFile big =
        bci::parse_class(bci::instrument(bytes, all_hooks("T", number)).class_bytes);
    ASSERT_EQ(big.cp.size(), small.cp.size());
    for (size_t i = 1; i < big.cp.size(); ++i) {
      EXPECT_EQ(big.cp.entries[i].tag, small.cp.entries[i].tag) << "entry " << i;
      EXPECT_EQ(big.cp.entries[i].bits, small.cp.entries[i].bits) << "entry " << i;
      EXPECT_EQ(big.cp.entries[i].utf8, small.cp.entries[i].utf8) << "entry " << i;
      EXPECT_EQ(big.cp.entries[i].ref1, small.cp.entries[i].ref1) << "entry " << i;
    }
  }
}

TEST(Instrument, EmptyFinalizeStaysEmpty) {
  bci::ClassFile cf = make_class({{.name = "finalize",
                                   .descriptor = "()V",
                                   .access = 0x0004,
                                   .max_locals = 1,
                                   .code = {0xb1}}});
  bci::InjectionResult r = bci::instrument(bci::write_class(cf), all_hooks("T", 1));
  EXPECT_FALSE(r.methods[0].instrumented);
}

TEST(Malformed, EmptyAndBadMagic) {
  EXPECT_EQ(error_of({}), "truncated magic at offset 0");
  EXPECT_EQ(error_of({0xCA, 0xFE, 0xBA, 0xBF, 0, 0, 0, 52}), "bad magic number at offset 0");
  EXPECT_EQ(error_of({0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 70}),
            "unsupported class file version 70 at offset 6");
}

TEST(Malformed, EveryTruncationIsAnError) {
  auto bytes = test_program_class("bciprog/CallSequence$Derived.class");
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + n);
    std::string e = error_of(prefix);
    ASSERT_NE(e, "") << "prefix of " << n << " bytes accepted";
    EXPECT_NE(e.find(" at offset "), std::string::npos) << e;
  }
  EXPECT_EQ(error_of(bytes), "");
}

TEST(Malformed, BadConstantTag) {
  auto bytes = bci::write_class(make_class({{.code = {0x1a, 0xac}}}));
  ASSERT_EQ(bytes[10], bci::kCpUtf8);  // first constant
  bytes[10] = 2;
  EXPECT_EQ(error_of(bytes), "bad constant pool tag 2 at offset 10");
  bytes[10] = 21;
  EXPECT_EQ(error_of(bytes), "bad constant pool tag 21 at offset 10");
}

TEST(Malformed, BadConstantPoolIndexes) {
  bci::ClassFile cf = make_class({{.code = {0x1a, 0xac}}});
  bci::ClassFile bad_this = cf;
  bad_this.this_class = 1;  // a Utf8
  EXPECT_NE(error_of(bci::write_class(bad_this)).find("bad constant pool index 1 for this_class"),
            std::string::npos);
  bci::ClassFile bad_name = cf;
  bad_name.methods[0].name_index = 999;
  EXPECT_NE(error_of(bci::write_class(bad_name)).find("bad constant pool index 999 for member"),
            std::string::npos);
  bci::ClassFile bad_ref = cf;
  bad_ref.cp.entries[cf.this_class].ref1 = static_cast<uint16_t>(cf.this_class);
  EXPECT_NE(error_of(bci::write_class(bad_ref)).find("for constant name"), std::string::npos);
  // getstatic #1 where #1 is a Utf8.
  bci::ClassFile bad_operand = make_class({{.code = {0xb2, 0x00, 0x01, 0x57, 0x1a, 0xac}}});
  EXPECT_NE(
      error_of(bci::write_class(bad_operand)).find("bad constant pool index 1 for field access"),
      std::string::npos);
}

TEST(Malformed, BadCode) {
  auto error_for_code = [](std::vector<uint8_t> code) {
    return error_of(bci::write_class(make_class({{.code = std::move(code)}})));
  };
  EXPECT_NE(error_for_code({0x1a, 0xff}).find("bad opcode 255"), std::string::npos);
  EXPECT_NE(error_for_code({0x1a, 0xcb}).find("bad opcode 203"), std::string::npos);
  EXPECT_NE(error_for_code({0x1a, 0x99, 0x00, 0x40, 0x1a, 0xac}).find("branch target 65"),
            std::string::npos);
  EXPECT_NE(error_for_code({0x1a, 0x99, 0x00, 0x02, 0x1a, 0xac}).find("is not an instruction"),
            std::string::npos);
  EXPECT_NE(error_for_code({0x1a, 0x11, 0x00}).find("truncated instruction"), std::string::npos);
  EXPECT_NE(error_for_code({0x1a, 0xaa, 0, 0, 0, 0, 0, 0}).find("truncated switch"),
            std::string::npos);
  EXPECT_NE(error_for_code({0xc4, 0x10, 0, 0}).find("after wide"), std::string::npos);
  // An exception range that ends inside an instruction.
  auto bytes = bci::write_class(
      make_class({{.code = {0x1a, 0x10, 0x05, 0x60, 0xac}, .exceptions = {{0, 2, 4, 0}}}}));
  EXPECT_NE(error_of(bytes).find("instruction boundaries"), std::string::npos);
}

TEST(Malformed, BadStackMapTable) {
  // iload_0; iload_0; ifeq 8; iconst_1; iadd; ireturn; 8: ireturn, with a frame at 8 holding
  // one int on the stack: same_locals_1_stack_item (type 64 + 8) then the type tag.
  TestMethod m{.code = {0x1a, 0x1a, 0x99, 0x00, 0x06, 0x04, 0x60, 0xac, 0xac},
               .frames = {{0, 8, {{bci::kInteger, 0}}, {{bci::kInteger, 0}}}}};
  auto good = bci::write_class(make_class({m}));
  EXPECT_EQ(error_of(good), "");
  std::vector<uint8_t> pattern = {0, 1, 72, bci::kInteger};
  auto at = std::search(good.begin(), good.end(), pattern.begin(), pattern.end());
  ASSERT_NE(at, good.end());
  size_t frame = static_cast<size_t>(at - good.begin()) + 2;
  auto bad = good;
  bad[frame + 1] = 9;
  EXPECT_NE(error_of(bad).find("bad verification type tag"), std::string::npos);
  bad = good;
  bad[frame] = 200;
  EXPECT_NE(error_of(bad).find("reserved stack map frame type 200"), std::string::npos);
  bad = good;
  bad[frame] = 64 + 3;  // inside the ifeq
  EXPECT_NE(error_of(bad).find("is not an instruction"), std::string::npos);
  bad = good;
  bad[frame] = 64 + 40;  // beyond the code
  EXPECT_NE(error_of(bad).find("stack map frame beyond code"), std::string::npos);
}

// A cheap deterministic fuzz: corrupt every byte of a real class a few ways. Instrumentation
// either succeeds or reports ClassFormatError; anything else (or a crash) fails.
TEST(Malformed, ByteCorruptionsNeverCrash) {
  auto bytes = test_program_class("bciprog/CallSequence$Derived.class");
  size_t errors = 0, accepted = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (uint8_t v : {uint8_t{0}, uint8_t{0xff}, static_cast<uint8_t>(bytes[i] ^ 1),
                      static_cast<uint8_t>(bytes[i] + 1)}) {
      auto bad = bytes;
      bad[i] = v;
      try {
        bci::instrument(bad, all_hooks("T", 1));
        ++accepted;
      } catch (const ClassFormatError&) {
        ++errors;
      }
    }
  }
  std::cout << "corruptions: " << errors << " rejected, " << accepted << " accepted\n";
  EXPECT_GT(errors, 0u);
}

}  // namespace
}  // namespace bcitest
