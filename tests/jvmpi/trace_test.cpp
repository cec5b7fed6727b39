// SPDX-License-Identifier: Apache-2.0
// GetCallTrace (own thread and a suspended other thread) and GetCurrentThreadCpuTime.
#include "jvmpi_test.h"

namespace jvmpitest {
namespace {

class JvmpiCallTrace : public JvmpiTest {
 protected:
  void SetUp() override {
    JvmpiTest::SetUp();
    if (IsSkipped()) return;
    result_ = Run(WithAgent("probe", "jvmpitest.TraceProgram"));
    ASSERT_TRUE(result_.exited(0)) << result_.Describe();
    log_ = Log();
    for (const auto& l : Select(ParseLines(result_.out), "LINE")) {
      lines_[l.get("method")] = l.num("line");
    }
    ASSERT_EQ(lines_.size(), 4u) << result_.Describe();
  }

  std::vector<Line> Frames(const std::string& who) {
    auto trace = Select(log_, "TRACE", {{"who", who}});
    EXPECT_EQ(trace.size(), 1u) << who;
    auto frames = Select(log_, "FRAME", {{"who", who}});
    if (!trace.empty()) {
      EXPECT_EQ(trace[0].num("num_frames"), (int64_t)frames.size());
    }
    return frames;
  }

  JvmResult result_;
  std::vector<Line> log_;
  std::map<std::string, int64_t> lines_;
};

TEST_P(JvmpiCallTrace, OwnThreadCalleeFirstWithSourceLines) {
  auto frames = Frames("self");
  ASSERT_EQ(frames.size(), 3u) << "want Agent.hook, probe, main\n" << result_.Describe();
  EXPECT_EQ(frames[0].get("method"), "jvmpitest.Agent.hook");
  EXPECT_LT(frames[0].num("line"), 0) << "a native frame has no source line";
  EXPECT_EQ(frames[1].get("method"), "jvmpitest.TraceProgram.probe");
  EXPECT_EQ(frames[1].num("line"), lines_["jvmpitest.TraceProgram.probe"]);
  EXPECT_EQ(frames[2].get("method"), "jvmpitest.TraceProgram.main");
  EXPECT_EQ(frames[2].num("line"), lines_["jvmpitest.TraceProgram.main"]);
}

TEST_P(JvmpiCallTrace, DepthLimitsTheFrames) {
  auto frames = Frames("self_depth2");
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].get("method"), "jvmpitest.Agent.hook");
  EXPECT_EQ(frames[1].get("method"), "jvmpitest.TraceProgram.probe");
}

TEST_P(JvmpiCallTrace, SuspendedOtherThread) {
  ASSERT_TRUE(Select(log_, "NO_TARGET").empty()) << "no THREAD_START for jvmpitest-trace-target";
  auto trace = Select(log_, "TRACE", {{"who", "other"}});
  ASSERT_EQ(trace.size(), 1u);
  auto frames = Frames("other");
  // Object.wait's own frames (wait0/wait; they differ by JDK) come first, then the caller.
  size_t i = 0;
  while (i < frames.size() && frames[i].get("method").rfind("java.lang.Object.", 0) == 0) ++i;
  ASSERT_GE(i, 1u) << "the waiting thread's top frame should be in java.lang.Object";
  ASSERT_GE(frames.size(), i + 3) << result_.Describe();
  EXPECT_EQ(frames[i].get("method"), "jvmpitest.TraceProgram.targetInner");
  EXPECT_EQ(frames[i].num("line"), lines_["jvmpitest.TraceProgram.targetInner"]);
  EXPECT_EQ(frames[i + 1].get("method"), "jvmpitest.TraceProgram.targetOuter");
  EXPECT_EQ(frames[i + 1].num("line"), lines_["jvmpitest.TraceProgram.targetOuter"]);
  EXPECT_EQ(frames[i + 2].get("method"), "jvmpitest.TraceProgram$1.run");
  for (const auto& f : frames) EXPECT_NE(f.get("method"), "?") << "unresolvable: " << f.raw;
}

TEST_P(JvmpiCallTrace, EndedThreadHasNoFrames) {
  auto ended = Select(log_, "ENDED_TRACE");
  ASSERT_EQ(ended.size(), 1u);
  ASSERT_EQ(ended[0].num("known"), 1) << "no THREAD_END for jvmpitest-trace-target";
  EXPECT_EQ(ended[0].num("num_frames"), 0) << "an ended thread gives 0 frames";
}

JVMPI_TEST_SUITE(JvmpiCallTrace);

// A method keeps its ID when METHOD_ENTRY's hooks go in or come out (a retransformation), but its
// code and so its line table change: each trace's line must be the one the program printed, in
// every version (`early` is traced with its original code first, `late` with the hooks in first).
class JvmpiLinesAcrossRetransformation : public JvmpiTest {};

TEST_P(JvmpiLinesAcrossRetransformation, EveryVersionOfTheCodeGivesTheSourceLine) {
  JvmResult r = Run(WithAgent("probe", "jvmpitest.RetransformLinesProgram"));
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  const auto facts = ParseLines(r.out);
  ASSERT_EQ(Select(facts, "ENABLE", {{"rc", "0"}}).size(), 1u) << r.Describe();
  ASSERT_EQ(Select(facts, "DISABLE", {{"rc", "0"}}).size(), 1u) << r.Describe();
  std::map<std::string, int64_t> lines;
  for (const auto& l : Select(facts, "LINE")) lines[l.get("method")] = l.num("line");
  ASSERT_EQ(lines.size(), 2u) << r.Describe();
  const auto log = Log();
  // who=call<arg>: early(n) passes 2n (n = 1 original, 2 hooked, 3 original again), late(n) 101+3n
  // (n = 1 hooked, 2 original).
  const std::vector<std::pair<std::string, std::string>> calls = {{"call2", "early"},
                                                                  {"call4", "early"},
                                                                  {"call6", "early"},
                                                                  {"call104", "late"},
                                                                  {"call107", "late"}};
  for (const auto& [who, method] : calls) {
    const auto frames = Select(log, "FRAME", {{"who", who}});
    ASSERT_GE(frames.size(), 3u) << who << "\n" << r.Describe();
    EXPECT_EQ(frames[0].get("method"), "jvmpitest.Agent.hook") << who;
    const std::string name = "jvmpitest.RetransformLinesProgram." + method;
    EXPECT_EQ(frames[1].get("method"), name) << who;
    EXPECT_EQ(frames[1].num("line"), lines[name]) << who << ": " << frames[1].raw;
  }
}

JVMPI_TEST_SUITE(JvmpiLinesAcrossRetransformation);

class JvmpiCpuTime : public JvmpiTest {};

TEST_P(JvmpiCpuTime, GrowsWithWork) {
  JvmResult r = Run(WithAgent("probe", "jvmpitest.CpuProgram"));
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  auto cpu = Select(ParseLines(r.out), "CPU");
  ASSERT_EQ(cpu.size(), 1u) << r.Describe();
  const int64_t agent = cpu[0].num("agent_after") - cpu[0].num("agent_before");
  const int64_t mx = cpu[0].num("mx_after") - cpu[0].num("mx_before");
  ASSERT_GE(mx, 200'000'000) << "the program did not spin long enough\n" << r.Describe();
  EXPECT_GT(cpu[0].num("agent_before"), 0);
  // Both read the thread's CPU clock; the agent's readings enclose the JDK's.
  EXPECT_GE(agent, mx * 9 / 10) << cpu[0].raw;
  EXPECT_LE(agent, cpu[0].num("wall") + 50'000'000) << "more CPU than wall time: " << cpu[0].raw;
}

JVMPI_TEST_SUITE(JvmpiCpuTime);

}  // namespace
}  // namespace jvmpitest
