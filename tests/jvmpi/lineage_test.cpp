// SPDX-License-Identifier: Apache-2.0
// What agents of the HPROF lineage do, and the IDs they must be able to resolve: every class ID in
// an exit heap dump taken after every event was disabled, every method ID in GetCallTrace during
// THREAD_START and after METHOD_ENTRY instrumented running methods (also MONITOR_DUMP traces),
// every class an OBJ_ALLOC names, at the moment it names it, the OBJECT_DUMP of every class of a
// dump from its handler, and GC events on a thread the agent knows. Agent: agents/lineage_agent.c.
#include "jvmpi_test.h"

namespace jvmpitest {
namespace {

class JvmpiLineage : public JvmpiTest {
 protected:
  std::string Unknown(const std::vector<Line>& log) {
    std::string text;
    for (const Line& l : Select(log, "UNKNOWN")) text += l.raw + "\n";
    for (const Line& l : Select(log, "UNKNOWN_CLASS_NAME")) text += l.raw + "\n";
    for (const Line& l : Select(log, "REQUEST_FAILED")) text += l.raw + "\n";
    return text;
  }
};

TEST_P(JvmpiLineage, ExitHeapDumpNamesOnlyAnnouncedClasses) {
  const JvmResult result = Run(WithAgent("lineage", "jvmpitest.ArrayInitProgram", "mode=dump"));
  ASSERT_TRUE(result.exited(0)) << result.Describe();
  const auto log = Log();
  const auto dump = Select(log, "DUMP");
  ASSERT_EQ(dump.size(), 1u) << result.Describe();
  EXPECT_EQ(dump[0].num("rc"), 0) << dump[0].raw;
  // A JDK's start-up alone loads more than 400 classes.
  EXPECT_GT(dump[0].num("class_dumps"), 400) << dump[0].raw;
  EXPECT_EQ(dump[0].num("unknown"), 0) << dump[0].raw << "\n" << Unknown(log);
  EXPECT_EQ(dump[0].num("complete"), 1) << dump[0].raw << "\n" << Unknown(log);
}

TEST_P(JvmpiLineage, ClassesLoadedWhileClassLoadIsSwitchedOffAreAnnounced) {
  const JvmResult result =
      Run(WithAgent("lineage", "jvmpitest.ArrayInitProgram", "mode=dump,chain=1"));
  ASSERT_TRUE(result.exited(0)) << result.Describe();
  const auto log = Log();
  const auto chain = Select(log, "CHAIN");
  ASSERT_EQ(chain.size(), 1u) << result.Describe();
  // One array class before DisableEvent(CLASS_LOAD), three more from its CLASS_LOAD handlers
  // while the runtime announces what is left: the last ones after its sweep of loaded classes.
  EXPECT_EQ(chain[0].num("made"), 4) << chain[0].raw;
  const auto dump = Select(log, "DUMP");
  ASSERT_EQ(dump.size(), 1u) << result.Describe();
  EXPECT_EQ(dump[0].num("rc"), 0) << dump[0].raw;
  EXPECT_EQ(dump[0].num("unknown"), 0) << dump[0].raw << "\n" << Unknown(log);
  EXPECT_EQ(dump[0].num("complete"), 1) << dump[0].raw << "\n" << Unknown(log);
}

TEST_P(JvmpiLineage, ExitHeapDumpAfterMonitorProfilingNamesOnlyAnnouncedClasses) {
  // Monitor events on from the start (MONITOR_CONTENDED_EXIT instruments loaded classes); at
  // JVM_SHUT_DOWN every event off (CLASS_LOAD first), a MONITOR_DUMP, then the heap dump. Taking
  // the instrumentation out there made HotSpot verify the restored classes, loading classes
  // (JDK 25) after CLASS_LOAD was off, which the dump then named.
  const JvmResult result =
      Run(WithAgent("lineage", "jvmpitest.ArrayInitProgram", "mode=dump,monitors=1"));
  ASSERT_TRUE(result.exited(0)) << result.Describe();
  const auto log = Log();
  ASSERT_EQ(Select(log, "MONITORS", {{"rc", "0"}}).size(), 1u) << result.Describe();
  const auto dump = Select(log, "DUMP");
  ASSERT_EQ(dump.size(), 1u) << result.Describe();
  EXPECT_EQ(dump[0].num("rc"), 0) << dump[0].raw;
  EXPECT_GT(dump[0].num("class_dumps"), 400) << dump[0].raw;
  EXPECT_EQ(dump[0].num("unknown"), 0) << dump[0].raw << "\n" << Unknown(log);
  EXPECT_EQ(dump[0].num("complete"), 1) << dump[0].raw << "\n" << Unknown(log);
}

TEST_P(JvmpiLineage, CallTraceInThreadStartResolvesEveryFrame) {
  const JvmResult result =
      Run(WithAgent("lineage", "jvmpitest.StartupProgram", "mode=thread_trace"));
  ASSERT_TRUE(result.exited(0)) << result.Describe();
  const auto log = Log();
  const auto traces = Select(log, "TRACES", {{"when", "shutdown"}});
  ASSERT_EQ(traces.size(), 1u) << result.Describe();
  // main, Signal Dispatcher, Finalizer, Reference Handler and the program's worker at least;
  // Finalizer and Reference Handler are inside JDK methods when they are announced.
  EXPECT_GE(traces[0].num("traces"), 5) << traces[0].raw;
  EXPECT_GE(traces[0].num("frames"), 2) << traces[0].raw;
  EXPECT_EQ(traces[0].num("unknown"), 0) << traces[0].raw << "\n" << Unknown(log);
}

TEST_P(JvmpiLineage, TracesAfterMidRunMethodEntryResolveEveryFrame) {
  const JvmResult result =
      Run(WithAgent("lineage", "jvmpitest.RetransformProgram", "mode=retransform"));
  ASSERT_TRUE(result.exited(0)) << result.Describe();
  const auto facts = ParseLines(result.out);
  ASSERT_EQ(Select(facts, "FACT", {{"enable_rc", "0"}}).size(), 1u) << result.Describe();
  ASSERT_EQ(Select(facts, "FACT", {{"dump_rc", "0"}}).size(), 1u) << result.Describe();
  const auto log = Log();
  const auto hooks = Select(log, "TRACES", {{"when", "hook"}});
  ASSERT_EQ(hooks.size(), 2u) << result.Describe();
  // At the first hook: main, the waiter and the blocked thread are inside program methods that
  // were instrumented under them (and Finalizer, Reference Handler inside JDK ones); their
  // traces and the monitor dump's (one per thread) are counted together.
  EXPECT_GE(hooks[0].num("traces"), 8) << hooks[0].raw;
  EXPECT_GE(hooks[0].num("frames"), 20) << hooks[0].raw;
  EXPECT_EQ(hooks[0].num("unknown"), 0) << hooks[0].raw << "\n" << Unknown(log);
  EXPECT_EQ(hooks[1].num("unknown"), 0) << hooks[1].raw << "\n" << Unknown(log);
}

TEST_P(JvmpiLineage, CpuSamplesAfterMidRunMethodEntryNameOnlyKnownMethods) {
  const JvmResult result =
      Run(WithAgent("lineage", "jvmpitest.SampledRetransformProgram", "mode=sample_retransform"));
  ASSERT_TRUE(result.exited(0)) << result.Describe();
  const auto facts = ParseLines(result.out);
  ASSERT_EQ(Select(facts, "FACT", {{"start_rc", "0"}}).size(), 1u) << result.Describe();
  ASSERT_EQ(Select(facts, "FACT", {{"check_rc", "0"}}).size(), 1u) << result.Describe();
  const auto log = Log();
  const auto samples = Select(log, "SAMPLES");
  ASSERT_EQ(samples.size(), 1u) << result.Describe();
  // The program waits for 20 samples of the spinner, each taken inside the spin() that
  // METHOD_ENTRY's instrumentation made obsolete under it (its thread never leaves it).
  EXPECT_GE(samples[0].num("spinner"), 20) << samples[0].raw;
  EXPECT_GE(samples[0].num("frames"), 2 * samples[0].num("spinner")) << samples[0].raw;
  EXPECT_EQ(samples[0].num("unknown"), 0) << samples[0].raw << "\n" << Unknown(log);
}

TEST_P(JvmpiLineage, ExitHeapDumpObjectsAnswerRequests) {
  const JvmResult result =
      Run(WithAgent("lineage", "jvmpitest.ArrayInitProgram", "mode=dump,fetch=1"));
  ASSERT_TRUE(result.exited(0)) << result.Describe();
  const auto log = Log();
  const auto dump = Select(log, "DUMP");
  ASSERT_EQ(dump.size(), 1u) << result.Describe();
  EXPECT_EQ(dump[0].num("rc"), 0) << dump[0].raw;
  EXPECT_EQ(dump[0].num("complete"), 1) << dump[0].raw;
  // Every instance and array of the dump was asked for (a JDK's start-up alone leaves thousands),
  // from the dump's own handler, after every event was disabled.
  EXPECT_GT(dump[0].num("fetched"), 1000) << dump[0].raw;
  EXPECT_EQ(dump[0].num("fetch_failed"), 0) << dump[0].raw;
  // Each answer describes the object as its record does (class, array kind): the answers come
  // from an index of what the walk saw, which must not mix objects up.
  std::string mismatches;
  for (const Line& l : Select(log, "FETCH_MISMATCH")) mismatches += l.raw + "\n";
  EXPECT_EQ(dump[0].num("fetch_mismatched"), 0) << dump[0].raw << "\n" << mismatches;
}

TEST_P(JvmpiLineage, ClassesOfTheDumpAnswerObjectDumpWithTheirRecord) {
  const JvmResult result =
      Run(WithAgent("lineage", "jvmpitest.ArrayInitProgram", "mode=dump,classdump=1"));
  ASSERT_TRUE(result.exited(0)) << result.Describe();
  const auto log = Log();
  const auto dump = Select(log, "DUMP");
  ASSERT_EQ(dump.size(), 1u) << result.Describe();
  EXPECT_EQ(dump[0].num("rc"), 0) << dump[0].raw;
  EXPECT_EQ(dump[0].num("complete"), 1) << dump[0].raw;
  // One request per instance of the dump (a JDK's start-up alone leaves thousands), each answered
  // with the CLASS_DUMP record the dump holds for that class, byte for byte.
  EXPECT_GT(dump[0].num("class_requests"), 1000) << dump[0].raw;
  EXPECT_EQ(dump[0].num("class_failed"), 0) << dump[0].raw;
  std::string mismatches;
  for (const Line& l : Select(log, "CLASS_MISMATCH")) mismatches += l.raw + "\n";
  EXPECT_EQ(dump[0].num("class_mismatched"), 0) << dump[0].raw << "\n" << mismatches;
}

TEST_P(JvmpiLineage, GcEventsComeOnAThreadTheAgentKnows) {
  const JvmResult result = Run(WithAgent("lineage", "jvmpitest.GcProgram", "mode=gc_times"));
  ASSERT_TRUE(result.exited(0)) << result.Describe();
  const auto fact = Select(ParseLines(result.out), "FACT");
  ASSERT_EQ(fact.size(), 1u) << result.Describe();
  EXPECT_EQ(fact[0].num("observed"), fact[0].num("forced")) << fact[0].raw;
  const auto log = Log();
  const auto gc = Select(log, "GC");
  ASSERT_EQ(gc.size(), 1u) << result.Describe();
  // Three System.gc() and one RunGC, each reported by a pair; every GC_START and GC_FINISH names
  // a thread whose THREAD_START came first (with NULL, an agent of the lineage keeps its data
  // lock and the VM deadlocks), the same one in both events of a pair.
  EXPECT_GE(gc[0].num("starts"), 4) << gc[0].raw;
  EXPECT_EQ(gc[0].num("finishes"), gc[0].num("starts")) << gc[0].raw;
  EXPECT_EQ(gc[0].num("unknown_env"), 0) << gc[0].raw << "\n" << Unknown(log);
  EXPECT_EQ(gc[0].num("env_changed"), 0) << gc[0].raw;
  // At JVM_SHUT_DOWN every thread announced and not ended (the reporter included) still answers
  // GetThreadLocalStorage: the reporter's THREAD_END comes before the agent's last handler.
  EXPECT_EQ(gc[0].num("stale_threads"), 0) << gc[0].raw;
}

TEST_P(JvmpiLineage, AllocationNamesOnlyRequestableAnnouncedClasses) {
  const JvmResult result =
      Run(WithAgent("lineage", "jvmpitest.ArrayInitProgram", "mode=alloc_class"));
  ASSERT_TRUE(result.exited(0)) << result.Describe();
  const auto log = Log();
  const auto allocs = Select(log, "ALLOCS");
  ASSERT_EQ(allocs.size(), 1u) << result.Describe();
  EXPECT_GT(allocs[0].num("named"), 100) << allocs[0].raw;
  EXPECT_EQ(allocs[0].num("unknown"), 0) << allocs[0].raw << "\n" << Unknown(log);
  EXPECT_EQ(allocs[0].num("failed"), 0) << allocs[0].raw << "\n" << Unknown(log);
}

JVMPI_TEST_SUITE(JvmpiLineage);

}  // namespace
}  // namespace jvmpitest
