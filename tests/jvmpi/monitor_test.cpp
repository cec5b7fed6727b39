// SPDX-License-Identifier: Apache-2.0
// Raw monitors (functions and contention events) and Java monitor events.
#include "jvmpi_test.h"

namespace jvmpitest {
namespace {

class JvmpiRawMonitors : public JvmpiTest {
 protected:
  void SetUp() override {
    JvmpiTest::SetUp();
    if (IsSkipped()) return;
    result_ = Run(WithAgent("rawmon", "jvmpitest.RawMonitorProgram"));
    ASSERT_TRUE(result_.exited(0)) << result_.Describe();
    log_ = Log();
    for (const auto& l : Select(log_, "TIMEOUT")) ADD_FAILURE() << "agent protocol: " << l.raw;
    for (const auto& l : Select(log_, "B_NEVER_BLOCKED")) ADD_FAILURE() << l.raw;
    ASSERT_NE(result_.out.find("FACT\tscenario_done=true"), std::string::npos)
        << result_.Describe();
  }

  JvmResult result_;
  std::vector<Line> log_;
};

TEST_P(JvmpiRawMonitors, ContentionEventsWithNameAndId) {
  auto created = Select(log_, "CREATED");
  ASSERT_EQ(created.size(), 1u);
  const std::string id = created[0].get("rawlock");
  const std::map<std::string, std::string> on_lock{{"name", "jvmpitest.rawlock"}, {"id", id}};
  auto enter = Select(log_, "RAW_ENTER", on_lock);
  auto entered = Select(log_, "RAW_ENTERED", on_lock);
  auto exit = Select(log_, "RAW_EXIT", on_lock);
  ASSERT_EQ(enter.size(), 1u) << result_.Describe();
  ASSERT_EQ(entered.size(), 1u);
  ASSERT_EQ(exit.size(), 1u);
  EXPECT_EQ(enter[0].get("thread"), "jvmpitest-raw-b") << "CONTENDED_ENTER is the blocked thread's";
  EXPECT_EQ(entered[0].get("thread"), "jvmpitest-raw-b");
  EXPECT_EQ(exit[0].get("thread"), "jvmpitest-raw-a") << "CONTENDED_EXIT is the owner's";
  EXPECT_LT(enter[0].index, entered[0].index);
  EXPECT_LT(enter[0].index, exit[0].index);
  // Nothing else on that monitor: re-entering it uncontended produces no events.
  EXPECT_EQ(Select(log_, "RAW_ENTER", {{"id", id}}).size(), 1u);
}

TEST_P(JvmpiRawMonitors, UnderscoreNamedMonitorIsSilent) {
  auto created = Select(log_, "CREATED");
  ASSERT_EQ(created.size(), 1u);
  // B really was blocked on it (see the fixture), yet no event may name it.
  EXPECT_EQ(Select(log_, "B_ENTERED", {{"monitor", "_jvmpitest.hidden"}}).size(), 1u);
  for (const char* tag : {"RAW_ENTER", "RAW_ENTERED", "RAW_EXIT"}) {
    EXPECT_TRUE(Select(log_, tag, {{"id", created[0].get("hidden")}}).empty()) << tag;
    EXPECT_TRUE(Select(log_, tag, {{"name", "_jvmpitest.hidden"}}).empty()) << tag;
  }
}

TEST_P(JvmpiRawMonitors, WaitNotifyAllAndTimedWait) {
  auto notified = Select(log_, "WAIT_NOTIFIED");
  ASSERT_EQ(notified.size(), 1u);
  EXPECT_EQ(notified[0].num("notified"), 1) << "RawMonitorNotifyAll did not wake the waiter";
  auto timed = Select(log_, "TIMED_WAIT");
  ASSERT_EQ(timed.size(), 1u);
  EXPECT_GE(timed[0].num("elapsed"), 95) << "RawMonitorWait(100) returned early";
  EXPECT_LT(timed[0].num("elapsed"), 10'000) << "RawMonitorWait(100) did not time out";
  EXPECT_EQ(Select(log_, "DESTROYED").size(), 1u);
}

JVMPI_TEST_SUITE(JvmpiRawMonitors);

class JvmpiJavaMonitors : public JvmpiTest {
 protected:
  void SetUp() override {
    JvmpiTest::SetUp();
    if (IsSkipped()) return;
    result_ = Run(WithAgent("monitors", "jvmpitest.MonitorProgram"));
    ASSERT_TRUE(result_.exited(0)) << result_.Describe();
    ASSERT_NE(result_.out.find("FACT\tdone=1"), std::string::npos) << result_.Describe();
    log_ = Log();
    out_ = ParseLines(result_.out);
    for (const auto& l : Select(log_, "ENABLE")) EXPECT_EQ(l.num("rc"), 0) << l.raw;
  }

  std::string ObjId(int what) {
    auto id = Select(log_, "OBJID", {{"what", std::to_string(what)}});
    EXPECT_EQ(id.size(), 1u);
    return id.empty() ? "" : id[0].get("id");
  }

  std::vector<Line> Events(const std::string& kind, const std::string& thread) {
    return Select(log_, "MON", {{"kind", kind}, {"thread", thread}});
  }

  JvmResult result_;
  std::vector<Line> log_, out_;
};

TEST_P(JvmpiJavaMonitors, ContendedEnterThenEnteredOnTheBlockedThread) {
  const std::string lock = ObjId(1);
  ASSERT_NE(lock, "0x0");
  auto enter = Events("ENTER", "jvmpitest-contender");
  auto entered = Events("ENTERED", "jvmpitest-contender");
  ASSERT_EQ(enter.size(), 1u) << result_.Describe();
  ASSERT_EQ(entered.size(), 1u);
  EXPECT_EQ(enter[0].get("obj"), lock) << "the object ID is not the lock's";
  EXPECT_EQ(entered[0].get("obj"), lock);
  EXPECT_LT(enter[0].index, entered[0].index);
  EXPECT_TRUE(Events("ENTER", "main").empty()) << "main never had to wait for the lock";
}

TEST_P(JvmpiJavaMonitors, ObjectIdConversions) {
  auto ids = Select(log_, "OBJID");
  ASSERT_EQ(ids.size(), 3u);
  for (const auto& id : ids) {
    EXPECT_NE(id.ptr("id"), 0u) << id.raw;
    EXPECT_EQ(id.num("stable"), 1) << "jobject2jobjectID gave two IDs for one object: " << id.raw;
    EXPECT_EQ(id.num("roundtrip"), 1) << "jobjectID2jobject(jobject2jobjectID(o)) is not o";
  }
  EXPECT_NE(ids[0].get("id"), ids[1].get("id"));
  EXPECT_NE(ids[1].get("id"), ids[2].get("id"));
}

TEST_P(JvmpiJavaMonitors, RequestedObjectAllocOfTheMonitorObject) {
  auto request = Select(log_, "REQUEST_ALLOC");
  ASSERT_EQ(request.size(), 1u) << result_.Describe();
  EXPECT_EQ(request[0].num("rc"), 0);
  auto alloc = Select(log_, "OA");
  ASSERT_EQ(alloc.size(), 1u) << "RequestEvent(OBJECT_ALLOC) delivered nothing";
  EXPECT_EQ(alloc[0].num("requested"), 1) << "JVMPI_REQUESTED_EVENT not set";
  EXPECT_EQ(alloc[0].num("same_thread"), 1) << "not delivered synchronously on the caller";
  EXPECT_EQ(alloc[0].get("obj"), ObjId(1));
  EXPECT_EQ(alloc[0].num("is_array"), 0);
  EXPECT_GT(alloc[0].num("size"), 0);
  auto cls = Select(log_, "CL", {{"name", "jvmpitest.MonitorProgram$ContendedLock"}});
  ASSERT_EQ(cls.size(), 1u);
  EXPECT_EQ(alloc[0].get("class_id"), cls[0].get("id")) << "class_id is not ContendedLock's";
}

TEST_P(JvmpiJavaMonitors, TimedObjectWait) {
  const std::string obj = ObjId(2);
  auto wait = Events("WAIT", "jvmpitest-timed-waiter");
  auto waited = Events("WAITED", "jvmpitest-timed-waiter");
  ASSERT_EQ(wait.size(), 1u) << result_.Describe();
  ASSERT_EQ(waited.size(), 1u);
  EXPECT_EQ(wait[0].get("obj"), obj);
  EXPECT_EQ(wait[0].num("timeout"), 200) << "MONITOR_WAIT carries the requested timeout";
  EXPECT_EQ(waited[0].get("obj"), obj);
  EXPECT_LT(wait[0].index, waited[0].index);
  auto truth = Select(out_, "WAITED");
  ASSERT_EQ(truth.size(), 1u);
  // MONITOR_WAITED carries the time actually waited, measured inside the program's own window.
  const int64_t actual = truth[0].num("actual_ms");
  EXPECT_LE(waited[0].num("timeout"), actual + 1) << waited[0].raw << " vs " << truth[0].raw;
  EXPECT_GE(waited[0].num("timeout"), actual - 100) << waited[0].raw << " vs " << truth[0].raw;
}

TEST_P(JvmpiJavaMonitors, UntimedObjectWait) {
  const std::string obj = ObjId(3);
  auto wait = Events("WAIT", "jvmpitest-untimed-waiter");
  ASSERT_GE(wait.size(), 1u) << result_.Describe();
  EXPECT_EQ(wait[0].get("obj"), obj);
  EXPECT_EQ(wait[0].num("timeout"), 0) << "wait() without timeout is reported as 0 (forever)";
  auto waited = Events("WAITED", "jvmpitest-untimed-waiter");
  ASSERT_EQ(waited.size(), wait.size());
  EXPECT_EQ(waited.back().get("obj"), obj);
}

TEST_P(JvmpiJavaMonitors, ThreadSleep) {
  auto wait = Events("WAIT", "jvmpitest-sleeper");
  auto waited = Events("WAITED", "jvmpitest-sleeper");
  ASSERT_EQ(wait.size(), 1u) << "Thread.sleep must produce one MONITOR_WAIT\n"
                             << result_.Describe();
  ASSERT_EQ(waited.size(), 1u);
  EXPECT_EQ(wait[0].get("obj"), "0x0") << "object NULL means Thread.sleep";
  EXPECT_EQ(wait[0].num("timeout"), 150);
  EXPECT_EQ(waited[0].get("obj"), "0x0");
  EXPECT_GE(waited[0].num("timeout"), 150) << "slept less than asked";
  auto truth = Select(out_, "SLEPT");
  ASSERT_EQ(truth.size(), 1u);
  EXPECT_LE(waited[0].num("timeout"), truth[0].num("actual_ms") + 1);
}

TEST_P(JvmpiJavaMonitors, InterruptedSleep) {
  auto wait = Events("WAIT", "jvmpitest-interrupted-sleeper");
  auto waited = Events("WAITED", "jvmpitest-interrupted-sleeper");
  ASSERT_EQ(wait.size(), 1u) << result_.Describe();
  ASSERT_EQ(waited.size(), 1u) << "no MONITOR_WAITED after an interrupted sleep";
  EXPECT_EQ(wait[0].num("timeout"), 60000);
  EXPECT_EQ(waited[0].get("obj"), "0x0");
  auto truth = Select(out_, "INTERRUPTED");
  ASSERT_EQ(truth.size(), 1u);
  EXPECT_LE(waited[0].num("timeout"), truth[0].num("actual_ms") + 1) << "the time actually slept";
}

JVMPI_TEST_SUITE(JvmpiJavaMonitors);

class JvmpiContendedExit : public JvmpiTest {
 protected:
  void SetUp() override {
    JvmpiTest::SetUp();
    if (IsSkipped()) return;
    result_ = Run(WithAgent("contended_exit", "jvmpitest.ContendedExitProgram"));
    ASSERT_TRUE(result_.exited(0)) << result_.Describe();
    ASSERT_NE(result_.out.find("FACT\tdone=1"), std::string::npos) << result_.Describe();
    log_ = Log();
    for (const auto& l : Select(log_, "ENABLE")) ASSERT_EQ(l.num("rc"), 0) << l.raw;
  }

  std::string ObjId(int what) {
    auto id = Select(log_, "OBJID", {{"what", std::to_string(what)}});
    EXPECT_EQ(id.size(), 1u);
    return id.empty() ? "" : id[0].get("id");
  }

  // The monitor's release while `contender` was blocked on it: exactly one EXIT, by main, after
  // the contender's ENTER and before its ENTERED.
  void ExpectOneContendedExit(const std::string& monitor, const std::string& contender) {
    ASSERT_NE(monitor, "0x0");
    auto exits = Select(log_, "MON", {{"kind", "EXIT"}, {"obj", monitor}});
    ASSERT_EQ(exits.size(), 1u) << "releases of " << monitor << "\n" << result_.Describe();
    EXPECT_EQ(exits[0].get("thread"), "main") << "CONTENDED_EXIT is the owner's";
    auto enter = Select(log_, "MON", {{"kind", "ENTER"}, {"obj", monitor}, {"thread", contender}});
    auto entered =
        Select(log_, "MON", {{"kind", "ENTERED"}, {"obj", monitor}, {"thread", contender}});
    ASSERT_EQ(enter.size(), 1u);
    ASSERT_EQ(entered.size(), 1u);
    EXPECT_LT(enter[0].index, exits[0].index);
    EXPECT_LT(exits[0].index, entered[0].index) << "the owner releases before the waiter enters";
  }

  JvmResult result_;
  std::vector<Line> log_;
};

TEST_P(JvmpiContendedExit, SynchronizedBlock) {
  ExpectOneContendedExit(ObjId(1), "jvmpitest-c1");
}

TEST_P(JvmpiContendedExit, SynchronizedMethodReturn) {
  ExpectOneContendedExit(ObjId(2), "jvmpitest-c2");
}

TEST_P(JvmpiContendedExit, StaticSynchronizedMethodReleasesTheClass) {
  auto cls = Select(log_, "CL", {{"name", "jvmpitest.ContendedExitProgram$StaticGuarded"}});
  ASSERT_EQ(cls.size(), 1u);
  ExpectOneContendedExit(cls[0].get("id"), "jvmpitest-c3");
}

TEST_P(JvmpiContendedExit, ExceptionOutOfBlockAndMethod) {
  EXPECT_NE(result_.out.find("FACT\tblock_threw=1"), std::string::npos);
  EXPECT_NE(result_.out.find("FACT\tmethod_threw=1"), std::string::npos);
  ExpectOneContendedExit(ObjId(4), "jvmpitest-c4");
  ExpectOneContendedExit(ObjId(5), "jvmpitest-c5");
}

TEST_P(JvmpiContendedExit, NoEventWithoutContenderOrOnceDisabled) {
  EXPECT_TRUE(Select(log_, "MON", {{"obj", ObjId(6)}}).empty()) << "nobody contended for it";
  auto disable = Select(log_, "DISABLE");
  ASSERT_EQ(disable.size(), 1u);
  EXPECT_EQ(disable[0].num("rc"), 0);
  const std::string late = ObjId(7);
  EXPECT_EQ(Select(log_, "MON", {{"kind", "ENTER"}, {"obj", late}}).size(), 1u)
      << "the contention itself is still reported";
  EXPECT_TRUE(Select(log_, "MON", {{"kind", "EXIT"}, {"obj", late}}).empty())
      << "MONITOR_CONTENDED_EXIT after DisableEvent";
  // Every release reported is of a monitor some thread was blocked on before it.
  for (const auto& exit : Select(log_, "MON", {{"kind", "EXIT"}})) {
    bool contended = false;
    for (const auto& enter : Select(log_, "MON", {{"kind", "ENTER"}, {"obj", exit.get("obj")}})) {
      contended |= enter.index < exit.index;
    }
    EXPECT_TRUE(contended) << "CONTENDED_EXIT of a monitor nobody waited for: " << exit.raw;
  }
}

JVMPI_TEST_SUITE(JvmpiContendedExit);

}  // namespace
}  // namespace jvmpitest
