// SPDX-License-Identifier: Apache-2.0
// INSTRUCTION_START: original bytecode offsets, and the branch details of if, tableswitch and
// lookupswitch, against the agent's own decoding of the original class file. Skipped while
// docs/jvmpi-conformance.md lists the event as "later" (EnableEvent must then refuse it).
#include "jvmpi_test.h"

namespace jvmpitest {
namespace {

constexpr int kInstructionStart = 9, kNotAvailable = 1;

class JvmpiInstructionStart : public JvmpiTest {};

TEST_P(JvmpiInstructionStart, OffsetsAndBranchDetails) {
  JvmResult r = Run(WithAgent("instructions", "jvmpitest.InstructionProgram"));
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  auto log = Log();
  auto enable = Select(log, "ENABLE");
  ASSERT_EQ(enable.size(), 1u) << r.Describe();
  if (DocStatus(kInstructionStart) == "later") {
    EXPECT_EQ(enable[0].num("rc"), kNotAvailable) << "documented as later, yet enabled";
    if (!HasFailure()) GTEST_SKIP() << "INSTRUCTION_START is documented as not available yet";
    return;
  }
  ASSERT_EQ(enable[0].num("rc"), 0);
  ASSERT_EQ(Select(log, "PARSED").size(), 1u) << "the agent never saw the class's bytes";

  // Each method ran twice on the caller thread; every event names an instruction boundary.
  for (const char* name : {"branchy", "dense", "sparse"}) {
    auto m = Select(log, "METHOD", {{"name", name}});
    ASSERT_EQ(m.size(), 1u) << name;
    EXPECT_NE(m[0].ptr("mid"), 0u) << name << ": no CLASS_LOAD method ID";
    EXPECT_EQ(m[0].num("offset0"), 2) << name << ": want one event at offset 0 per call";
    EXPECT_GT(m[0].num("events"), 2 * 2) << name;
    EXPECT_EQ(m[0].num("bad_offsets"), 0) << name << ": offsets that are no instruction";
  }
  for (const auto& bad : Select(log, "BAD_OFFSET")) ADD_FAILURE() << bad.raw;

  // branchy(10), branchy(1): javac's if_icmple jumps (to the else part) only for x <= 5.
  auto ifs = Select(log, "IF", {{"method", "branchy"}});
  ASSERT_EQ(ifs.size(), 2u);
  EXPECT_EQ(ifs[0].num("is_true"), 0) << "branchy(10) does not take the branch";
  EXPECT_EQ(ifs[1].num("is_true"), 1) << "branchy(1) takes the branch";

  // dense(2), dense(9): tableswitch over 1..4.
  auto table = Select(log, "TABLESWITCH", {{"method", "dense"}});
  ASSERT_EQ(table.size(), 2u);
  EXPECT_EQ(table[0].num("key"), 2);
  EXPECT_EQ(table[1].num("key"), 9);
  for (const auto& t : table) {
    EXPECT_EQ(t.num("low"), t.num("code_low")) << t.raw;
    EXPECT_EQ(t.num("hi"), t.num("code_hi")) << t.raw;
  }

  // sparse(1000), sparse(7): lookupswitch over 10, 1000, 100000 (sorted); 7 is the default.
  auto lookup = Select(log, "LOOKUPSWITCH", {{"method", "sparse"}});
  ASSERT_EQ(lookup.size(), 2u);
  EXPECT_EQ(lookup[0].num("chosen"), 1);
  EXPECT_EQ(lookup[1].num("chosen"), lookup[1].num("total")) << "the default branch";
  for (const auto& l : lookup) EXPECT_EQ(l.num("total"), l.num("code_pairs")) << l.raw;
}

JVMPI_TEST_SUITE(JvmpiInstructionStart);

}  // namespace
}  // namespace jvmpitest
