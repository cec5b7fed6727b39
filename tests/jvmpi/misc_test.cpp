// SPDX-License-Identifier: Apache-2.0
// GC events, COMPILED_METHOD_LOAD, the data dump/reset requests, and EnableEvent/DisableEvent.
#include <signal.h>

#include "jvmpi_test.h"

namespace jvmpitest {
namespace {

class JvmpiGc : public JvmpiTest {};

TEST_P(JvmpiGc, BalancedStartFinishWithGcInfo) {
  JvmResult r = Run(WithAgent("gc", "jvmpitest.GcProgram"));
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  auto fact = Select(ParseLines(r.out), "FACT");
  ASSERT_EQ(fact.size(), 1u) << r.Describe();
  EXPECT_EQ(fact[0].num("observed"), fact[0].num("forced"))
      << "a forced collection (System.gc or RunGC) produced no GC_FINISH";
  int open = 0, pairs = 0;
  for (const auto& l : Log()) {
    if (l.tag == "GC_START") {
      EXPECT_EQ(open, 0) << "GC_START inside another GC_START/GC_FINISH pair, line " << l.index;
      open = 1;
    } else if (l.tag == "GC_FINISH") {
      EXPECT_EQ(open, 1) << "GC_FINISH without GC_START, line " << l.index;
      open = 0;
      ++pairs;
      EXPECT_GT(l.num("used_objects"), 0) << l.raw;
      EXPECT_GT(l.num("used_space"), 0) << l.raw;
      EXPECT_LE(l.num("used_space"), l.num("total_space")) << l.raw;
    }
  }
  EXPECT_EQ(open, 0) << "unfinished GC_START";
  EXPECT_GE(pairs, fact[0].num("forced"));
}

JVMPI_TEST_SUITE(JvmpiGc);

class JvmpiCompiledMethod : public JvmpiTest {};

TEST_P(JvmpiCompiledMethod, HotMethodLoadWithLineTable) {
  JvmOptions o = WithAgent("compile", "jvmpitest.CompileProgram");
  o.vm_args.push_back("-Xbatch");  // compile in the foreground: no race with the loop
  JvmResult r = Run(o);
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  auto log = Log();
  ASSERT_EQ(Select(log, "ENABLE", {{"rc", "0"}}).size(), 1u);
  EXPECT_NE(r.out.find("FACT\tcompiled=true"), std::string::npos) << r.Describe();
  auto loads = Select(log, "CML", {{"method", "jvmpitest.CompileProgram.hot"}});
  ASSERT_GE(loads.size(), 1u) << r.Describe();
  for (const auto& l : loads) {
    SCOPED_TRACE(l.raw);
    EXPECT_NE(l.ptr("code_addr"), 0u);
    EXPECT_GT(l.num("code_size"), 0);
    EXPECT_GT(l.num("lines"), 0) << "empty lineno_table";
    EXPECT_GT(l.num("start"), 0) << "CLASS_LOAD gave no line range for hot";
    EXPECT_EQ(l.num("lines_in_range"), 1) << "a line outside the method";
    EXPECT_EQ(l.num("offsets_in_code"), 1) << "an offset outside [0, code_size)";
  }
}

TEST_P(JvmpiCompiledMethod, EnabledLateReportsMethodsCompiledEarlier) {
  JvmOptions o = WithAgent("compile", "jvmpitest.CompileProgram", "late=1");
  o.vm_args.push_back("-Xbatch");
  o.args = {"late"};
  JvmResult r = Run(o);
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  auto log = Log();
  auto enable = Select(log, "LATE_ENABLE");
  ASSERT_EQ(enable.size(), 1u) << r.Describe();
  EXPECT_EQ(enable[0].num("rc"), 0);
  // hot() is not called after the event is enabled, so only the compiled-earlier report
  // (JVMTI GenerateEvents) can name it.
  EXPECT_NE(r.out.find("reported=true"), std::string::npos) << r.Describe();
  auto loads = Select(log, "CML", {{"method", "jvmpitest.CompileProgram.hot"}});
  ASSERT_GE(loads.size(), 1u);
  for (const auto& l : loads) {
    EXPECT_NE(l.ptr("code_addr"), 0u) << l.raw;
    EXPECT_EQ(l.num("lines_in_range"), 1) << l.raw;
  }
}

JVMPI_TEST_SUITE(JvmpiCompiledMethod);

class JvmpiDataRequests : public JvmpiTest {};

TEST_P(JvmpiDataRequests, SigquitDumpsAndSigusr1Resets) {
  JvmProcess jvm(jdk(), WithAgent("signals", "jvmpitest.SignalProgram"), Stem());
  ASSERT_TRUE(jvm.WaitForStdout("READY", std::chrono::seconds(30))) << jvm.Wait().Describe();
  jvm.Signal(SIGQUIT);
  jvm.Signal(SIGUSR1);
  jvm.WriteStdin("go\n");
  JvmResult r = jvm.Wait();
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  auto log = Log();
  for (const auto& e : Select(log, "ENABLE")) EXPECT_EQ(e.num("rc"), 0) << e.raw;
  EXPECT_EQ(Select(log, "DUMP_REQUEST").size(), 1u) << r.Describe();
  EXPECT_EQ(Select(log, "RESET_REQUEST").size(), 1u) << r.Describe();
  EXPECT_NE(r.out.find("FACT\tdumps=1\tresets=1"), std::string::npos) << r.Describe();
}

JVMPI_TEST_SUITE(JvmpiDataRequests);

class JvmpiEventControl : public JvmpiTest {};

TEST_P(JvmpiEventControl, RefusedEventNumbers) {
  JvmResult r = Run(WithAgent("events", "jvmpitest.EventsProgram"));
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  auto log = Log();
  constexpr int kNotAvailable = 1;
  // HEAP_DUMP 37, MONITOR_DUMP 59, OBJECT_DUMP 50 are request-only; 0, -1, 62, 100 and the
  // REQUESTED bit are no event numbers; 10, 32, 36 are unassigned.
  for (int event : {37, 59, 50, 0, -1, 62, 100, 0x10000000 | 33, 10, 32, 36}) {
    for (const char* op : {"enable", "disable"}) {
      auto rc = Select(log, "RC", {{"op", op}, {"event", std::to_string(event)}});
      ASSERT_EQ(rc.size(), 1u) << op << " " << event << "\n" << r.Describe();
      EXPECT_EQ(rc[0].num("rc"), kNotAvailable) << op << " " << event;
    }
  }
  for (int event : {60, 34, 62}) {
    auto rc = Select(log, "RC", {{"op", "request"}, {"event", std::to_string(event)}});
    ASSERT_EQ(rc.size(), 1u);
    EXPECT_EQ(rc[0].num("rc"), kNotAvailable) << "RequestEvent(" << event << ")";
  }
  for (const char* op : {"enable", "disable"}) {
    auto rc = Select(log, "RC", {{"op", op}, {"event", "60"}});
    ASSERT_EQ(rc.size(), 1u);
    EXPECT_EQ(rc[0].num("rc"), 0) << op << " GC_START";
  }
  EXPECT_EQ(Select(log, "RC", {{"op", "enable"}, {"event", "33"}, {"rc", "0"}}).size(), 1u);
  // All the others, MONITOR_CONTENDED_EXIT included: with the three request-only dumps, every
  // one of JVMPI's 37 events is available (docs/jvmpi-conformance.md).
  auto every = Select(log, "EVERY");
  EXPECT_EQ(every.size(), 34u);
  for (const auto& e : every) {
    EXPECT_EQ(e.num("enable"), 0) << e.raw;
    EXPECT_EQ(e.num("disable"), 0) << e.raw;
  }
}

TEST_P(JvmpiEventControl, DisabledEventStopsArriving) {
  JvmResult r = Run(WithAgent("events", "jvmpitest.EventsProgram"));
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  EXPECT_NE(r.out.find("FACT\tdisable_rc=0"), std::string::npos) << r.Describe();
  EXPECT_NE(r.out.find("FACT\tenable_rc=0"), std::string::npos) << r.Describe();
  auto log = Log();
  EXPECT_EQ(Select(log, "TS", {{"name", "jvmpitest-before"}}).size(), 1u);
  EXPECT_TRUE(Select(log, "TS", {{"name", "jvmpitest-during"}}).empty())
      << "THREAD_START arrived while disabled";
  EXPECT_EQ(Select(log, "TS", {{"name", "jvmpitest-after"}}).size(), 1u)
      << "THREAD_START did not come back after EnableEvent";
}

JVMPI_TEST_SUITE(JvmpiEventControl);

}  // namespace
}  // namespace jvmpitest
