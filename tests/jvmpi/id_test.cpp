// SPDX-License-Identifier: Apache-2.0
// IDs resolve the moment the runtime hands them over: inside the CLASS_LOAD events of VM start-up
// (before the live phase, when JVMTI cannot look tags up), along the chain "object -> its class ->
// its class ..." that HPROF-lineage agents follow (java.lang.Class's class object ends it with a
// NULL class_id), and bad IDs answer JVMPI_FAIL at every stage. Agent: agents/ids_agent.c.
#include "jvmpi_test.h"

namespace jvmpitest {
namespace {

constexpr int64_t kJvmpiFail = -1;  // JVMPI_FAIL

class JvmpiIds : public JvmpiTest {
 protected:
  void SetUp() override {
    JvmpiTest::SetUp();
    if (IsSkipped()) return;
    result_ = Run(WithAgent("ids", "jvmpitest.StartupProgram"));
    ASSERT_TRUE(result_.exited(0)) << result_.Describe();
    log_ = Log();
    auto summary = Select(log_, "SUMMARY");
    ASSERT_EQ(summary.size(), 1u) << "no SUMMARY at JVM_SHUT_DOWN\n" << result_.Describe();
    summary_ = summary[0];
  }

  JvmResult result_;
  std::vector<Line> log_;
  Line summary_;
};

TEST_P(JvmpiIds, ClassIdsOfTheStartUpBatchResolveInsideTheirClassLoad) {
  // The start-up batch is a few hundred classes on every JDK; all of them must resolve.
  EXPECT_GT(summary_.num("loads_batch"), 100) << summary_.raw;
  EXPECT_EQ(summary_.num("unresolved_batch"), 0) << summary_.raw;
  EXPECT_EQ(summary_.num("request_failed_batch"), 0) << summary_.raw;
  EXPECT_GT(summary_.num("loads_later"), 0) << summary_.raw;
  EXPECT_EQ(summary_.num("unresolved_later"), 0) << summary_.raw;
  EXPECT_EQ(summary_.num("request_failed_later"), 0) << summary_.raw;
}

TEST_P(JvmpiIds, TheClassOfJavaLangClassEndsTheChase) {
  EXPECT_EQ(summary_.num("self_class"), 0)
      << "an object was reported as its own class (java.lang.Class's class object must have a "
         "NULL class_id): "
      << summary_.raw;
  EXPECT_EQ(summary_.num("chain_too_deep"), 0) << summary_.raw;
  // Every chase ends at java.lang.Class's class object, whose class_id is NULL.
  EXPECT_GT(summary_.num("null_class_of_class"), 0) << summary_.raw;
}

TEST_P(JvmpiIds, BadIdsFailAtEveryStage) {
  auto bad = Select(log_, "BAD_ID");
  ASSERT_EQ(bad.size(), 3u) << "on_load, init_done, shut_down";
  for (const Line& b : bad) {
    for (const char* key : {"alloc_null", "alloc_never", "class_never", "dump_never"})
      EXPECT_EQ(b.num(key), kJvmpiFail) << key << ": " << b.raw;
    EXPECT_EQ(b.ptr("resolve_never"), 0u) << b.raw;
  }
}

// RequestEvent(CLASS_LOAD) of an instance's ID or of a primitive type's mirror: JVMPI_FAIL, and the
// VM lives on (the runtime links classes through a reflection call that crashes on non-classes).
TEST_P(JvmpiIds, ClassLoadOfWhatIsNoClassFails) {
  auto lines = Select(log_, "NOT_CLASS");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].ptr("string_id"), 0u) << lines[0].raw;
  EXPECT_NE(lines[0].ptr("int_id"), 0u) << lines[0].raw;
  EXPECT_EQ(lines[0].num("string_rc"), kJvmpiFail) << lines[0].raw;
  EXPECT_EQ(lines[0].num("int_rc"), kJvmpiFail) << lines[0].raw;
}

JVMPI_TEST_SUITE(JvmpiIds);

}  // namespace
}  // namespace jvmpitest
