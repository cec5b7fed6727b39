// SPDX-License-Identifier: Apache-2.0
// Known-answer tests: programs whose profile is known in advance (java/hprof-tests/hproftest),
// run under HPROF, and the facts their java.hprof.txt must state.
#include <algorithm>
#include <map>
#include <set>

#include "hprof_test.h"

namespace hproftest {
namespace {

class KnownAnswerTest : public HprofTest {};

std::string Join(const std::vector<std::string>& v, const std::string& sep = "\n") {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// (a) cpu=samples is thread-aware: the method that burns CPU is rank 1, and a thread sleeping all
// the while is not charged for its sleep.
TEST_P(KnownAnswerTest, CpuSamplesRankTheBusyMethodFirstAndNotTheSleepingThread) {
  const RunResult run = Run("cpu=samples,thread=y", "hproftest.CpuHog", {"800"});
  ASSERT_TRUE(run.exited(0)) << run.describe();
  ASSERT_NE(run.out.find("CPUHOG DONE"), std::string::npos) << run.describe();
  const Profile p = ReadProfile();
  EXPECT_WELL_FORMED(p, run);
  ASSERT_EQ(p.cpu_samples.size(), 1u) << run.describe();
  const CostSection& cpu = p.cpu_samples[0];
  ASSERT_FALSE(cpu.rows.empty()) << "no CPU samples at all";

  const auto burner = p.thread_serial("Burner");
  const auto sleeper = p.thread_serial("Sleeper");
  ASSERT_TRUE(burner.has_value()) << "no THREAD START for Burner";
  ASSERT_TRUE(sleeper.has_value()) << "no THREAD START for Sleeper";

  // Rank 1: CpuHog.burn on the Burner thread.
  const CostRow& first = cpu.rows[0];
  EXPECT_EQ(first.name, "hproftest.CpuHog.burn");
  EXPECT_EQ(p.top_method(first.trace), "hproftest.CpuHog.burn");
  ASSERT_NE(p.trace(first.trace), nullptr);
  EXPECT_EQ(p.trace(first.trace)->thread, burner) << "thread=y: the trace names its thread";
  // Burning ~800 ms at 10 ms intervals gives dozens of samples; insist on a clear majority.
  EXPECT_GT(first.self, 50.0) << "burn() should dominate the profile";

  // Every trace carries its thread (thread=y), and the Sleeper is not charged for sleeping: at
  // most the two moments it runs (going to sleep, waking up) may fall on a sample, against the
  // ~80 samples an unaware sampler would give its Thread.sleep trace.
  uint64_t sleeper_samples = 0, burner_samples = 0;
  for (const CostRow& r : cpu.rows) {
    const Trace* t = p.trace(r.trace);
    ASSERT_NE(t, nullptr);
    ASSERT_TRUE(t->thread.has_value()) << "TRACE " << r.trace << " has no (thread=N)";
    if (t->thread == sleeper) sleeper_samples += r.count;
    if (t->thread == burner) burner_samples += r.count;
  }
  EXPECT_LE(sleeper_samples, 2u) << "the sleeping thread was charged with CPU samples";
  EXPECT_GE(burner_samples, 10u * std::max<uint64_t>(sleeper_samples, 1));
}

// (b) heap=sites: one site allocates KEEP + DROP objects and keeps KEEP; after the dropped ones
// are collected the site shows KEEP live and KEEP + DROP allocated.
TEST_P(KnownAnswerTest, AllocationSiteCountsLiveAndAllocatedObjects) {
  constexpr uint64_t kKeep = 1000, kDrop = 500;
  constexpr uint64_t kSize = 32;  // 12-byte header + two longs, aligned to 8
  const RunResult run =
      Run("heap=sites", "hproftest.AllocSites", {std::to_string(kKeep), std::to_string(kDrop)});
  ASSERT_TRUE(run.exited(0)) << run.describe();
  ASSERT_NE(run.out.find("ALLOCSITES kept=1000 dropped=500"), std::string::npos) << run.describe();
  const Profile p = ReadProfile();
  EXPECT_WELL_FORMED(p, run);
  ASSERT_EQ(p.sites.size(), 1u);
  EXPECT_TRUE(p.sites[0].by_live_bytes);
  EXPECT_EQ(p.count("HEAP DUMP"), 0u) << "heap=sites writes no heap dump";
  EXPECT_EQ(p.count("CPU SAMPLES"), 0u);

  std::vector<const SiteRow*> rows;
  for (const SiteRow& r : p.sites[0].rows) {
    if (r.class_name == "hproftest.AllocSites$Payload") rows.push_back(&r);
  }
  ASSERT_EQ(rows.size(), 1u) << "expected exactly one site of AllocSites$Payload";
  const SiteRow& site = *rows[0];
  const Trace* trace = p.trace(site.trace);
  ASSERT_NE(trace, nullptr);
  ASSERT_GE(trace->frames.size(), 2u);
  EXPECT_EQ(trace->frames[0].method, "hproftest.AllocSites.allocate");
  EXPECT_EQ(trace->frames[0].source, "AllocSites.java");
  EXPECT_EQ(trace->frames[1].method, "hproftest.AllocSites.main");
  // The lines of AllocSites.java: `new Payload()` and the call of allocate() (the site finder
  // keys on bytecode indexes and turns them into these lines).
  EXPECT_EQ(trace->frames[0].line, "25");
  EXPECT_EQ(trace->frames[1].line, "40");
  EXPECT_EQ(site.live_objs, kKeep) << "live objects: the dropped ones were collected";
  EXPECT_EQ(site.alloc_objs, kKeep + kDrop);
  EXPECT_EQ(site.live_bytes, kKeep * kSize);
  EXPECT_EQ(site.alloc_bytes, (kKeep + kDrop) * kSize);
}

// (c) monitor=y: ROUNDS forced contentions on a Contention$Lock are counted in MONITOR TIME.
TEST_P(KnownAnswerTest, MonitorTimeCountsForcedContentions) {
  constexpr uint64_t kRounds = 5;
  const RunResult run = Run("monitor=y", "hproftest.Contention", {std::to_string(kRounds)});
  ASSERT_TRUE(run.exited(0)) << run.describe();
  const Profile p = ReadProfile();
  EXPECT_WELL_FORMED(p, run);
  ASSERT_EQ(p.monitor_times.size(), 1u);
  uint64_t count = 0;
  std::set<std::string> tops;
  for (const CostRow& r : p.monitor_times[0].rows) {
    if (r.name != "hproftest.Contention$Lock (Java)") continue;
    count += r.count;
    tops.insert(p.top_method(r.trace));
  }
  // Only the blocker threads ever contend for the lock, once each.
  EXPECT_EQ(count, kRounds) << "contended entries of Contention$Lock in MONITOR TIME";
  EXPECT_EQ(tops, std::set<std::string>{"hproftest.Contention.enterLock"})
      << "the contending trace is the blocker's synchronized block";
  EXPECT_EQ(p.count("MONITOR DUMP"), 1u);
}

void ExpectDeadlock(const Profile& p, const MonitorDump& dump, const std::string& what) {
  SCOPED_TRACE(what);
  const auto t1 = p.thread_serial("Deadlock-1");
  const auto t2 = p.thread_serial("Deadlock-2");
  ASSERT_TRUE(t1 && t2) << "no THREAD START for Deadlock-1/-2";
  const std::string lock_a = "Lhproftest/Deadlock$LockA;";
  const std::string lock_b = "Lhproftest/Deadlock$LockB;";
  // Each lock is owned by one thread and wanted by the other.
  std::map<std::string, const MonitorDumpMonitor*> monitors;
  for (const MonitorDumpMonitor& m : dump.monitors) monitors[m.monitor] = &m;
  ASSERT_TRUE(monitors.count(lock_a) && monitors.count(lock_b)) << "LockA/LockB not in the dump";
  EXPECT_EQ(monitors[lock_a]->owner, t1);
  EXPECT_EQ(monitors[lock_a]->entering, std::vector<std::optional<unsigned>>{t2});
  EXPECT_EQ(monitors[lock_b]->owner, t2);
  EXPECT_EQ(monitors[lock_b]->entering, std::vector<std::optional<unsigned>>{t1});
  for (const MonitorDumpThread& t : dump.threads) {
    if (t.thread == *t1 || t.thread == *t2) {
      EXPECT_EQ(t.status, "MW") << "thread " << t.thread;
    }
  }
  // The deadlock statement: a cycle of exactly the two threads.
  ASSERT_EQ(dump.deadlocks.size(), 1u) << "MONITOR DUMP states no (or more than one) deadlock";
  const auto& cycle = dump.deadlocks[0];
  ASSERT_EQ(cycle.size(), 2u);
  std::map<unsigned, const DeadlockEdge*> by_thread;
  for (const DeadlockEdge& e : cycle) by_thread[e.thread] = &e;
  ASSERT_TRUE(by_thread.count(*t1) && by_thread.count(*t2));
  EXPECT_EQ(by_thread[*t1]->owner, *t2);
  EXPECT_EQ(by_thread[*t1]->monitor, "MONITOR " + lock_b);
  EXPECT_EQ(by_thread[*t2]->owner, *t1);
  EXPECT_EQ(by_thread[*t2]->monitor, "MONITOR " + lock_a);
  EXPECT_EQ(p.top_method(by_thread[*t1]->trace), "hproftest.Deadlock.lockBoth");
}

// (d) A deadlock of two threads (opposite lock order) is stated in the MONITOR DUMP at exit.
TEST_P(KnownAnswerTest, MonitorDumpAtExitStatesTheDeadlock) {
  const RunResult run = Run("monitor=y", "hproftest.Deadlock", {"exit"});
  ASSERT_TRUE(run.exited(0)) << run.describe();
  ASSERT_NE(run.out.find("DEADLOCKED 2"), std::string::npos) << run.describe();
  const Profile p = ReadProfile();
  EXPECT_WELL_FORMED(p, run);
  ASSERT_EQ(p.monitor_dumps.size(), 1u);
  ExpectDeadlock(p, p.monitor_dumps[0], "dump at exit");
}

// (d) ... and in the dump the program triggers itself with kill -QUIT while deadlocked.
TEST_P(KnownAnswerTest, MonitorDumpOnSigquitStatesTheDeadlock) {
  const RunResult run = Run("monitor=y", "hproftest.Deadlock", {"quit"});
  ASSERT_TRUE(run.exited(0)) << run.describe();
  ASSERT_NE(run.out.find("DUMPED"), std::string::npos)
      << "the program did not see the SIGQUIT dump in java.hprof.txt\n"
      << run.describe();
  const Profile p = ReadProfile();
  EXPECT_WELL_FORMED(p, run);
  ASSERT_EQ(p.monitor_dumps.size(), 2u) << "one dump on SIGQUIT, one at exit";
  ExpectDeadlock(p, p.monitor_dumps[0], "dump on SIGQUIT");
  ExpectDeadlock(p, p.monitor_dumps[1], "dump at exit");
}

// (e) heap=dump: the instances of HeapGraph$Node, their reference fields by name pointing at the
// right objects, the array of kids, the static root, and the classes.
TEST_P(KnownAnswerTest, HeapDumpShowsObjectsAndTheirReferences) {
  const RunResult run = Run("heap=dump", "hproftest.HeapGraph");
  ASSERT_TRUE(run.exited(0)) << run.describe();
  const Profile p = ReadProfile();
  EXPECT_WELL_FORMED(p, run);
  ASSERT_EQ(p.heap_dumps.size(), 1u);
  EXPECT_EQ(p.count("SITES"), 0u) << "heap=dump writes no SITES";
  const HeapDump& d = p.heap_dumps[0];

  const HeapCls* graph = d.cls_named("hproftest.HeapGraph");
  const HeapCls* node_cls = d.cls_named("hproftest.HeapGraph$Node");
  const HeapCls* object_cls = d.cls_named("java.lang.Object");
  ASSERT_NE(graph, nullptr) << "no CLS for hproftest.HeapGraph";
  ASSERT_NE(node_cls, nullptr) << "no CLS for hproftest.HeapGraph$Node";
  ASSERT_NE(object_cls, nullptr) << "no CLS for java.lang.Object";
  ASSERT_TRUE(node_cls->attrs.count("super"));
  EXPECT_EQ(node_cls->attrs.at("super"), object_cls->id);
  EXPECT_TRUE(node_cls->attrs.count("loader")) << "an application class has a loader";

  // The static field ROOT holds node a.
  std::string a_id;
  for (const auto& [name, id] : graph->statics) {
    if (name == "ROOT") a_id = id;
  }
  ASSERT_FALSE(a_id.empty()) << "CLS hproftest.HeapGraph has no \"static ROOT\" line";

  const auto nodes = d.objs_of_class("hproftest.HeapGraph$Node");
  EXPECT_EQ(nodes.size(), 3u) << "the program makes exactly three Nodes";
  for (const HeapObj* n : nodes) {
    EXPECT_EQ(n->class_id, node_cls->id) << "OBJ " << n->id << " names its class's CLS id";
    EXPECT_GT(n->size, 0u);
  }
  auto fields_of = [&d](const std::string& id) {
    std::map<std::string, std::string> f;
    const HeapObj* o = d.obj(id);
    if (o != nullptr) {
      for (const auto& [name, value] : o->fields) f[name] = value;
    }
    return f;
  };
  const HeapObj* a = d.obj(a_id);
  ASSERT_NE(a, nullptr) << "no OBJ for ROOT's target " << a_id;
  ASSERT_EQ(a->class_name, "hproftest.HeapGraph$Node");
  auto fa = fields_of(a_id);
  // Only the non-null reference fields, by name: weight (an int) is never printed.
  std::set<std::string> names;
  for (const auto& [name, value] : fa) names.insert(name);
  EXPECT_EQ(names, (std::set<std::string>{"kids", "label", "left", "right"}));
  const std::string b_id = fa["left"], c_id = fa["right"];
  ASSERT_NE(d.obj(b_id), nullptr) << "a.left -> " << b_id << " is not dumped";
  ASSERT_NE(d.obj(c_id), nullptr) << "a.right -> " << c_id << " is not dumped";
  EXPECT_EQ(d.obj(b_id)->class_name, "hproftest.HeapGraph$Node");
  EXPECT_EQ(d.obj(c_id)->class_name, "hproftest.HeapGraph$Node");
  ASSERT_NE(d.obj(fa["label"]), nullptr);
  EXPECT_EQ(d.obj(fa["label"])->class_name, "java.lang.String");

  // b.left = c and nothing else; c.right = a, c.label = "gamma".
  EXPECT_EQ(fields_of(b_id), (std::map<std::string, std::string>{{"left", c_id}}));
  auto fc = fields_of(c_id);
  EXPECT_EQ(fc.size(), 2u);
  EXPECT_EQ(fc["right"], a_id);
  ASSERT_NE(d.obj(fc["label"]), nullptr);
  EXPECT_EQ(d.obj(fc["label"])->class_name, "java.lang.String");
  EXPECT_NE(fc["label"], fa["label"]) << "\"alpha\" and \"gamma\" are different strings";

  // a.kids = {b, null, c}: nelems is the last non-null index + 1, elements by index.
  const HeapArr* kids = d.arr(fa["kids"]);
  ASSERT_NE(kids, nullptr) << "a.kids -> " << fa["kids"] << " has no ARR record";
  EXPECT_EQ(kids->elem_type, "hproftest.HeapGraph$Node[]");
  EXPECT_EQ(kids->nelems, 3u);
  EXPECT_EQ(kids->elements, (std::vector<std::pair<uint64_t, std::string>>{{0, b_id}, {2, c_id}}));
}

// (e) Every reference in a heap dump leads to an object, array or class of the same dump (or to
// a root, such as a primitive type's class).
TEST_P(KnownAnswerTest, HeapDumpReferencesResolve) {
  const RunResult run = Run("heap=dump", "hproftest.HeapGraph");
  ASSERT_TRUE(run.exited(0)) << run.describe();
  const Profile p = ReadProfile();
  ASSERT_EQ(p.heap_dumps.size(), 1u) << run.describe();
  const auto dangling = p.heap_dumps[0].dangling_references();
  std::vector<std::string> first(dangling.begin(),
                                 dangling.begin() + std::min<size_t>(dangling.size(), 15));
  EXPECT_TRUE(dangling.empty()) << dangling.size() << " references lead nowhere, e.g.:\n"
                                << Join(first);
}

// (f) WAIT/WAITED for Object.wait with its timeout, SLEEP for Thread.sleep, on the right thread.
TEST_P(KnownAnswerTest, WaitAndSleepLinesCarryTheirTimeouts) {
  const RunResult run = Run("monitor=y", "hproftest.WaitSleep");
  ASSERT_TRUE(run.exited(0)) << run.describe();
  const Profile p = ReadProfile();
  EXPECT_WELL_FORMED(p, run);
  const auto main = p.thread_serial("main");
  ASSERT_TRUE(main.has_value());
  const std::string signal = "Lhproftest/WaitSleep$Signal;";
  // main's events on Signal objects, in order; a spurious wake-up may repeat a WAIT/WAITED pair.
  std::vector<int64_t> timeouts;
  std::vector<std::string> sequence;
  std::vector<int64_t> sleeps;
  for (const WaitRecord& w : p.waits) {
    if (w.thread != main) continue;
    if (w.kind == WaitRecord::kSleep) sleeps.push_back(w.value);
    if (w.monitor != signal) continue;
    if (w.kind == WaitRecord::kWait) {
      sequence.push_back("WAIT");
      if (timeouts.empty() || timeouts.back() != w.value) timeouts.push_back(w.value);
    } else if (w.kind == WaitRecord::kWaited) {
      sequence.push_back("WAITED");
      EXPECT_GE(w.value, 0) << "time_waited at line " << w.line_no;
    }
  }
  EXPECT_EQ(timeouts, (std::vector<int64_t>{60000, 0, 13}))
      << "WAIT timeouts of wait(60000), wait(), wait(13)";
  ASSERT_GE(sequence.size(), 6u);
  for (size_t i = 0; i < sequence.size(); ++i) {
    EXPECT_EQ(sequence[i], i % 2 == 0 ? "WAIT" : "WAITED") << "event " << i;
  }
  EXPECT_EQ(sleeps, std::vector<int64_t>{37}) << "one SLEEP line for Thread.sleep(37)";
}

// (g) cpu=times counts every call exactly: java/hprof-tests/hproftest/CallTree.java makes a known
// number of calls per method, some of them leaving by an exception thrown further down.
std::map<std::string, uint64_t> CallTreeCounts(const CostSection& times) {
  std::map<std::string, uint64_t> calls;
  for (const CostRow& r : times.rows) {
    if (r.name.rfind("hproftest.CallTree.", 0) == 0) calls[r.name] += r.count;
  }
  return calls;
}

TEST_P(KnownAnswerTest, CpuTimesCountsEveryCallOfAKnownCallTree) {
  // depth=1: one trace per method; cutoff=0: no row is too small to print.
  const RunResult run = Run("cpu=times,depth=1,cutoff=0", "hproftest.CallTree", {});
  ASSERT_TRUE(run.exited(0)) << run.describe();
  ASSERT_NE(run.out.find("CALLTREE DONE 5"), std::string::npos) << run.describe();
  const Profile p = ReadProfile();
  EXPECT_WELL_FORMED(p, run);
  ASSERT_EQ(p.cpu_times.size(), 1u) << run.describe();
  const std::map<std::string, uint64_t> expected = {
      {"hproftest.CallTree.main", 1},    {"hproftest.CallTree.tree", 1},
      {"hproftest.CallTree.a", 3},       {"hproftest.CallTree.b", 6},
      {"hproftest.CallTree.c", 9},       {"hproftest.CallTree.e", 4},
      {"hproftest.CallTree.thrower", 4}, {"hproftest.CallTree.deeper", 4}};
  EXPECT_EQ(CallTreeCounts(p.cpu_times[0]), expected);
}

TEST_P(KnownAnswerTest, CpuTimesChargesCallsToTheirCallingTraces) {
  const RunResult run = Run("cpu=times,depth=3,cutoff=0", "hproftest.CallTree", {});
  ASSERT_TRUE(run.exited(0)) << run.describe();
  const Profile p = ReadProfile();
  EXPECT_WELL_FORMED(p, run);
  ASSERT_EQ(p.cpu_times.size(), 1u) << run.describe();
  // Calls of c, b and deeper by calling trace (the method and its two callers).
  std::map<std::vector<std::string>, uint64_t> by_trace;
  for (const CostRow& r : p.cpu_times[0].rows) {
    const Trace* t = p.trace(r.trace);
    ASSERT_NE(t, nullptr) << "TRACE " << r.trace;
    if (t->frames.empty() || t->frames[0].method != r.name) {
      ADD_FAILURE() << "row for " << r.name << " names TRACE " << r.trace << " of another method";
      continue;
    }
    if (r.name != "hproftest.CallTree.c" && r.name != "hproftest.CallTree.b" &&
        r.name != "hproftest.CallTree.deeper") {
      continue;
    }
    std::vector<std::string> frames;
    for (const auto& f : t->frames) frames.push_back(f.method);
    by_trace[frames] += r.count;
  }
  const std::map<std::vector<std::string>, uint64_t> expected = {
      {{"hproftest.CallTree.c", "hproftest.CallTree.b", "hproftest.CallTree.a"}, 6},
      {{"hproftest.CallTree.c", "hproftest.CallTree.a", "hproftest.CallTree.tree"}, 3},
      {{"hproftest.CallTree.b", "hproftest.CallTree.a", "hproftest.CallTree.tree"}, 6},
      {{"hproftest.CallTree.deeper", "hproftest.CallTree.thrower", "hproftest.CallTree.e"}, 4}};
  EXPECT_EQ(by_trace, expected);
}

INSTANTIATE_FOR_JDKS(KnownAnswerTest);

}  // namespace
}  // namespace hproftest
