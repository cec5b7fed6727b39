// SPDX-License-Identifier: Apache-2.0
// The API torture test: every function of the interface from every kind of thread an agent meets,
// with valid, NULL, never-issued and stale IDs (agents/torture_agent.c, TortureProgram.java).
// The VM must neither crash nor hang, and every documented answer must hold.
#include <set>
#include <string>

#include "jvmpi_test.h"

namespace jvmpitest {
namespace {

class JvmpiTorture : public JvmpiTest {
 protected:
  void SetUp() override {
    JvmpiTest::SetUp();
    if (IsSkipped()) return;
    result_ = Run(WithAgent("torture", "jvmpitest.TortureProgram"));
    log_ = Log();
  }

  JvmResult result_;
  std::vector<Line> log_;
};

TEST_P(JvmpiTorture, EveryFunctionFromEveryThreadKind) {
  // ProfilerExit(7) from a JNI native ends the VM through the normal shutdown.
  ASSERT_TRUE(result_.exited(7)) << result_.Describe();
  EXPECT_EQ(result_.out.find("after_profiler_exit"), std::string::npos) << "ProfilerExit returned";
  for (const char* fact :
       {"FACT\tvictim_freed=true", "FACT\tstages_before_jni=true", "FACT\tjni=1"}) {
    EXPECT_NE(result_.out.find(fact), std::string::npos) << fact << "\n" << result_.Describe();
  }
  for (const auto& l : Select(log_, "ENABLE")) EXPECT_EQ(l.num("rc"), 0) << l.raw;
  auto summary = Select(log_, "SUMMARY");
  ASSERT_EQ(summary.size(), 1u) << "no JVM_SHUT_DOWN\n" << result_.Describe();
  EXPECT_EQ(summary[0].num("missing"), 0) << summary[0].raw;
  for (const auto& m : Select(log_, "MISSING")) ADD_FAILURE() << "no battery ran in " << m.raw;

  std::set<std::string> stages;
  for (const auto& s : Select(log_, "STAGE")) {
    stages.insert(s.get("name"));
    EXPECT_GE(s.num("calls"), 20) << s.raw;
    EXPECT_EQ(s.num("bad"), 0) << s.raw;
  }
  EXPECT_EQ(stages.size(), 8u);
  EXPECT_EQ(Select(log_, "STAGE").size(), 8u) << "one battery per stage";
  // The own-thread checks ran where the thread is one the agent knows.
  for (const char* stage : {"init_done", "thread_start", "system", "jni"}) {
    EXPECT_EQ(Select(log_, "STAGE", {{"name", stage}, {"own", "1"}}).size(), 1u) << stage;
  }
  // Once the victim's OBJECT_FREE arrived its ID is stale, and the later batteries used it.
  EXPECT_EQ(Select(log_, "STAGE", {{"name", "jni"}, {"stale", "1"}}).size(), 1u);
  EXPECT_EQ(Select(log_, "STAGE", {{"name", "shutdown"}, {"stale", "1"}}).size(), 1u);
  for (const auto& b : Select(log_, "BAD")) ADD_FAILURE() << b.raw;
}

JVMPI_TEST_SUITE(JvmpiTorture);

}  // namespace
}  // namespace jvmpitest
