// SPDX-License-Identifier: Apache-2.0
// Threads: THREAD_START/THREAD_END contents and order, thread-local storage, CreateSystemThread,
// SuspendThread/ResumeThread with ThreadHasRun and GetThreadStatus (and resuming a thread suspended
// in its THREAD_END), and ProfilerExit.
#include "jvmpi_test.h"

namespace jvmpitest {
namespace {

constexpr int kRunnable = 1, kMonitorWait = 2, kCondvarWait = 3, kInterrupted = 0x4000;

class JvmpiThreads : public JvmpiTest {};

TEST_P(JvmpiThreads, ThreadStartNamesGroupsAndParents) {
  JvmResult r = Run(WithAgent("threads", "jvmpitest.ThreadProgram"));
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  auto log = Log();
  auto truth = Select(ParseLines(r.out), "THREAD");
  ASSERT_EQ(truth.size(), 4u) << r.Describe();
  for (const auto& t : truth) {
    SCOPED_TRACE(t.raw);
    auto ts = Select(log, "TS", {{"name", t.get("name")}, {"requested", "0"}});
    ASSERT_EQ(ts.size(), 1u) << "want one THREAD_START for " << t.get("name");
    EXPECT_EQ(ts[0].get("group"), t.get("group"));
    EXPECT_EQ(ts[0].get("parent"), t.get("parent")) << "parent_name is the parent group's name";
    EXPECT_NE(ts[0].ptr("env"), 0u);
    EXPECT_NE(ts[0].ptr("id"), 0u) << "thread_id (the Thread object's ID) is NULL";
    EXPECT_EQ(ts[0].ptr("get_thread_object"), ts[0].ptr("id"))
        << "GetThreadObject(thread_env_id) differs from thread_id";
    EXPECT_EQ(ts[0].num("requested"), 0);
  }
}

TEST_P(JvmpiThreads, RequestedThreadStartRepeatsTheThread) {
  JvmResult r = Run(WithAgent("threads", "jvmpitest.ThreadProgram"));
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  EXPECT_NE(r.out.find("request_rc=0"), std::string::npos) << r.Describe();
  auto log = Log();
  auto original = Select(log, "TS", {{"name", "main"}, {"requested", "0"}});
  auto again = Select(log, "TS", {{"name", "main"}, {"requested", "1"}});
  ASSERT_EQ(original.size(), 1u) << r.Describe();
  ASSERT_EQ(again.size(), 1u) << "RequestEvent(THREAD_START, main's ID) delivered nothing";
  EXPECT_EQ(again[0].num("during_request"), 1)
      << "not delivered on the requesting thread before RequestEvent returned";
  for (const char* k : {"group", "parent", "env", "id"}) {
    EXPECT_EQ(again[0].get(k), original[0].get(k)) << k;
  }
  auto request = Select(log, "REQUEST");
  ASSERT_EQ(request.size(), 1u);
  EXPECT_EQ(request[0].get("id"), original[0].get("id"));
}

TEST_P(JvmpiThreads, ThreadEndMatchesThreadStart) {
  JvmResult r = Run(WithAgent("threads", "jvmpitest.ThreadProgram"));
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  auto log = Log();
  for (const char* name : {"jvmpitest-w1", "jvmpitest-w2", "jvmpitest-w3"}) {
    SCOPED_TRACE(name);
    auto ts = Select(log, "TS", {{"name", name}});
    ASSERT_EQ(ts.size(), 1u);
    const uint64_t env = ts[0].ptr("env");
    std::vector<Line> ends;
    for (const auto& te : Select(log, "TE")) {
      if (te.ptr("env") == env && te.index > ts[0].index) ends.push_back(te);
    }
    ASSERT_GE(ends.size(), 1u) << "no THREAD_END with the env_id of THREAD_START";
    const Line& te = ends[0];
    EXPECT_EQ(te.num("known"), 1);
    // The storage set in THREAD_START is still there in THREAD_END.
    EXPECT_EQ(te.get("tls_name"), name) << te.raw;
    EXPECT_EQ(te.num("tls_env_ok"), 1);
  }
}

// What a thread does after its THREAD_END (here: contending for its own Thread object's monitor
// while the VM notifies joiners) must not announce it a second time.
TEST_P(JvmpiThreads, EventsAfterThreadEndDoNotRepeatThreadStart) {
  JvmResult r = Run(WithAgent("threads", "jvmpitest.LateContentionProgram"));
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  ASSERT_NE(r.out.find("LATE blocked=true"), std::string::npos)
      << "the ending thread never blocked on the monitor: the case was not exercised\n"
      << r.Describe();
  auto log = Log();
  auto ts = Select(log, "TS", {{"name", "jvmpitest-late"}});
  ASSERT_EQ(ts.size(), 1u) << "THREAD_START repeated for the ended thread";
  // A thread started after this one ended may get the same env_id (the VM reuses the memory of
  // an ended thread's JNIEnv): this thread's events stop at the next THREAD_START of that env.
  const uint64_t env = ts[0].ptr("env");
  size_t until = SIZE_MAX;
  for (const auto& next : Select(log, "TS")) {
    if (next.ptr("env") == env && next.index > ts[0].index) until = std::min(until, next.index);
  }
  size_t ends = 0;
  for (const auto& te : Select(log, "TE")) {
    if (te.ptr("env") == env && te.index > ts[0].index && te.index < until) ++ends;
  }
  EXPECT_EQ(ends, 1u);
}

TEST_P(JvmpiThreads, ThreadStartPrecedesEveryOtherEventOfTheThread) {
  JvmResult r = Run(WithAgent("threads", "jvmpitest.ThreadProgram"));
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  auto log = Log();
  for (const auto& ts : Select(log, "TS")) {
    // The spec allows start-phase events of threads that predate JVM_INIT_DONE to come early;
    // after it, THREAD_START must come first.
    if (ts.num("early_event") != 0 && ts.num("early_after_init") != 0) {
      ADD_FAILURE() << "event " << ts.num("early_event") << " of thread " << ts.get("name")
                    << " arrived before its THREAD_START";
    }
  }
  for (const char* name : {"jvmpitest-w1", "jvmpitest-w2", "jvmpitest-w3"}) {
    auto ts = Select(log, "TS", {{"name", name}});
    ASSERT_EQ(ts.size(), 1u);
    EXPECT_EQ(ts[0].num("early_event"), 0) << name;
    // Each worker waited and slept: its events arrived and were attributed to it.
    EXPECT_GE(Select(log, "EV", {{"thread", name}, {"type", "57"}}).size(), 1u)
        << "no MONITOR_WAIT of " << name;
  }
  EXPECT_GE(Select(log, "EV", {{"thread", "jvmpitest-w1"}, {"type", "42"}}).size(), 1u)
      << "the CLASS_LOAD of ThreadProgram$Payload should carry jvmpitest-w1's env_id";
}

TEST_P(JvmpiThreads, ThreadLocalStorageIsPerThread) {
  JvmResult r = Run(WithAgent("threads", "jvmpitest.ThreadProgram"));
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  auto log = Log();
  for (const auto& l : Select(log, "TLS_MISMATCH")) {
    ADD_FAILURE() << "GetThreadLocalStorage did not return what THREAD_START stored: " << l.raw;
  }
  // Events were checked at all: the workers' events found their storage.
  EXPECT_GE(Select(log, "EV", {{"thread", "jvmpitest-w2"}}).size(), 2u);
  EXPECT_GE(Select(log, "EV", {{"thread", "main"}}).size(), 1u);
}

JVMPI_TEST_SUITE(JvmpiThreads);

class JvmpiSampling : public JvmpiTest {};

TEST_P(JvmpiSampling, CreateSystemThreadRunsFunctionInNewThreadWithThreadStart) {
  JvmResult r = Run(WithAgent("sampler", "jvmpitest.SamplerProgram"));
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  auto log = Log();
  auto create = Select(log, "CREATE");
  ASSERT_EQ(create.size(), 1u) << r.Describe();
  EXPECT_EQ(create[0].num("rc"), 0) << "CreateSystemThread after JVM_INIT_DONE must succeed";
  auto ts = Select(log, "SAMPLER_TS");
  ASSERT_EQ(ts.size(), 1u) << "no THREAD_START named jvmpitest-sampler";
  auto run = Select(log, "SYSTEM_THREAD");
  ASSERT_EQ(run.size(), 1u) << "the function never ran";
  EXPECT_EQ(run[0].num("differs_from_creator"), 1) << "the function ran on the creating thread";
  EXPECT_EQ(run[0].num("ts_seen"), 1) << "THREAD_START must precede the thread's function";
  EXPECT_EQ(run[0].num("same_as_ts_thread"), 1) << "THREAD_START came on another thread";
}

TEST_P(JvmpiSampling, ThreadHasRunTellsSpinnerFromSleeper) {
  JvmResult r = Run(WithAgent("sampler", "jvmpitest.SamplerProgram"));
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  ASSERT_NE(r.out.find("FACT\tsampled=true"), std::string::npos) << r.Describe();
  auto rounds = Select(Log(), "ROUND");
  ASSERT_EQ(rounds.size(), 8u) << r.Describe();
  int spinner_ran = 0;
  // Round 0 has no previous suspension to compare with.
  for (size_t i = 1; i < rounds.size(); ++i) {
    spinner_ran += rounds[i].num("spinner_ran") != 0;
    EXPECT_EQ(rounds[i].num("sleeper_ran"), 0)
        << "a sleeping thread did not run: " << rounds[i].raw;
  }
  // The spinner competes for 2 cores with whatever else runs; nearly every round must see it.
  EXPECT_GE(spinner_ran, 5) << "the spinning thread ran in only " << spinner_ran << " of 7 rounds";
}

TEST_P(JvmpiSampling, SuspendAndResumeThreadLists) {
  JvmResult r = Run(WithAgent("sampler", "jvmpitest.SamplerProgram"));
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  auto rounds = Select(Log(), "LIST_ROUND");
  ASSERT_EQ(rounds.size(), 4u) << r.Describe();
  int spinner_ran = 0;
  for (const auto& round : rounds) {
    EXPECT_EQ(round.get("suspend"), "0,0") << "results[i] must be JVMPI_SUCCESS: " << round.raw;
    EXPECT_EQ(round.get("resume"), "0,0") << round.raw;
    // The previous suspension (the last single round or list round) is the baseline.
    EXPECT_EQ(round.num("sleeper_ran"), 0) << round.raw;
    spinner_ran += round.num("spinner_ran") != 0;
  }
  EXPECT_GE(spinner_ran, 3) << "the spinning thread ran in only " << spinner_ran << " of 4 rounds";
}

TEST_P(JvmpiSampling, GetThreadStatus) {
  JvmResult r = Run(WithAgent("sampler", "jvmpitest.SamplerProgram"));
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  ASSERT_NE(r.out.find("FACT\tinterrupted_flag=true"), std::string::npos) << r.Describe();
  auto log = Log();
  auto status = [&](const char* name) -> int64_t {
    auto s = Select(log, "STATUS", {{"thread", name}});
    if (s.size() != 1 || s[0].num("found") != 1) {
      ADD_FAILURE() << "no status for " << name;
      return -1;
    }
    return s[0].num("status");
  };
  EXPECT_EQ(status("jvmpitest-spinner"), kRunnable);
  EXPECT_EQ(status("jvmpitest-sleeper"), kCondvarWait) << "Thread.sleep";
  EXPECT_EQ(status("jvmpitest-waiter"), kCondvarWait) << "Object.wait";
  EXPECT_EQ(status("jvmpitest-blocked"), kMonitorWait) << "blocked entering a monitor";
  EXPECT_EQ(status("jvmpitest-interrupted"), kMonitorWait | kInterrupted)
      << "blocked entering a monitor, interrupted";
  // A JVMPI suspension leaves the status as it was.
  for (const auto& round : Select(log, "ROUND")) {
    EXPECT_EQ(round.num("spinner_status"), kRunnable) << round.raw;
    EXPECT_EQ(round.num("sleeper_status"), kCondvarWait) << round.raw;
  }
}

// A thread suspended inside its own THREAD_END handler is held as it leaves the event, after
// which the runtime forgets it (GetThreadObject answers NULL). Resuming it by its env must still
// release it; otherwise the thread never ends (and, were it halting the VM, the exit would hang).
// `list`: SuspendThreadList/ResumeThreadList rather than SuspendThread/ResumeThread.
void ExpectResumedAfterThreadEnd(const JvmResult& r, const std::vector<Line>& log, bool list) {
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  auto truth = Select(ParseLines(r.out), "WORKER");
  ASSERT_EQ(truth.size(), 1u) << r.Describe();
  ASSERT_EQ(Select(log, "CREATE", {{"rc", "0"}}).size(), 1u) << r.Describe();
  auto ts = Select(log, "WORKER_TS");
  auto end = Select(log, "END_HANDLER");
  auto suspended = Select(log, "SUSPENDED");
  auto resuming = Select(log, "RESUMING");
  auto resumed = Select(log, "RESUMED");
  ASSERT_EQ(ts.size(), 1u) << "no THREAD_START of jvmpitest-ending";
  ASSERT_EQ(end.size(), 1u) << "no THREAD_END of jvmpitest-ending";
  ASSERT_EQ(suspended.size(), 1u) << "the system thread never got the request";
  ASSERT_EQ(resuming.size(), 1u);
  ASSERT_EQ(resumed.size(), 1u);
  for (const Line* l : {&end[0], &suspended[0], &resuming[0], &resumed[0]}) {
    EXPECT_EQ(l->ptr("env"), ts[0].ptr("env")) << l->raw;
  }
  EXPECT_NE(end[0].ptr("thread_object"), 0u) << "GetThreadObject(env) in the thread's THREAD_END";
  EXPECT_EQ(end[0].num("suspend_called"), 1) << "the handler returned before the suspension";
  // The order the case needs: suspended in the handler, forgotten, then resumed.
  EXPECT_LT(suspended[0].index, end[0].index);
  EXPECT_LT(end[0].index, resuming[0].index);
  EXPECT_TRUE(Select(log, "REMOVAL_NOT_SEEN").empty()) << r.Describe();
  EXPECT_EQ(resuming[0].num("removed"), 1)
      << "GetThreadObject(env) still answered when the thread was resumed: " << resuming[0].raw;
  EXPECT_EQ(suspended[0].num("list"), list ? 1 : 0);
  if (list) {
    EXPECT_EQ(suspended[0].num("result"), 0) << "SuspendThreadList: " << suspended[0].raw;
    EXPECT_EQ(resumed[0].num("result"), 0) << "ResumeThreadList: " << resumed[0].raw;
  }
  EXPECT_EQ(truth[0].num("ended"), 1)
      << "the thread suspended in its THREAD_END was never resumed\n"
      << r.Describe();
  EXPECT_NE(r.out.find("AGENT\tdone=1"), std::string::npos) << r.Describe();
}

TEST_P(JvmpiSampling, ResumeReleasesAThreadSuspendedInItsThreadEnd) {
  JvmResult r = Run(WithAgent("suspend_end", "jvmpitest.SuspendEndProgram"));
  ExpectResumedAfterThreadEnd(r, Log(), false);
}

TEST_P(JvmpiSampling, ResumeListReleasesAThreadSuspendedInItsThreadEnd) {
  JvmResult r = Run(WithAgent("suspend_end", "jvmpitest.SuspendEndProgram", "list=1"));
  ExpectResumedAfterThreadEnd(r, Log(), true);
}

JVMPI_TEST_SUITE(JvmpiSampling);

class JvmpiProfilerExit : public JvmpiTest {};

TEST_P(JvmpiProfilerExit, EndsTheVmWithTheGivenCode) {
  JvmResult r = Run(WithAgent("exit", "jvmpitest.ExitProgram"));
  ASSERT_TRUE(r.exited(7)) << r.Describe();
  EXPECT_EQ(r.out.find("NOT_EXITED"), std::string::npos) << r.Describe();
  auto log = Log();
  EXPECT_EQ(Select(log, "EXITING").size(), 1u);
  EXPECT_TRUE(Select(log, "PROFILER_EXIT_RETURNED").empty()) << "ProfilerExit returned";
  // In the live phase the runtime ends the VM with System.exit: the agent is told.
  EXPECT_EQ(Select(log, "SHUT_DOWN").size(), 1u) << r.Describe();
}

JVMPI_TEST_SUITE(JvmpiProfilerExit);

}  // namespace
}  // namespace jvmpitest
