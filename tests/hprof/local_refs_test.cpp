// SPDX-License-Identifier: Apache-2.0
// JNI local references do not pile up on application threads under any HPROF mode. A JVMTI or
// JVMPI callback, or a native hook, that runs on an application thread must leave that thread's
// local references as it found them: a thread that stays in one long-running frame (or in native
// code) never gets them back otherwise. LocalRefLoop's threads contend, wait, sleep and allocate
// for a while inside one frame, and end parked inside a compiled one (step(), with a callee
// inlined); then a heap dump lists the JNI-local roots each thread still holds (ROOT JNI LOCAL
// records). Under each mode no thread may hold more than a small constant above the most any
// thread holds in the same program without an agent, dumped by the VM's own dumper (whose
// dumping thread holds a few of its own).
//
// Two dumps are checked. The VM's own (HotSpotDiagnosticMXBean) sees references left in a
// thread's handle blocks by native code still on its stack (the runtime's natives and wrapped VM
// natives). HPROF's own (heap=dump, on SIGQUIT) is the one the agent's users read: it is built
// from JVMTI's FollowReferences, which reports every object compiled code embeds as a JNI-local
// root of each compiled frame, again for each frame inlined there (about 50 per worker here, over a
// thousand per thread on a Tomcat worker). Those are no JNI references (docs/jni-local-roots.md)
// and the runtime writes them once each as roots of unknown kind. HotSpot releases what a JVMTI
// callback made when the callback returns (checked by hand: 20 NewLocalRef per contended entry
// left no root), and hides agent threads from heap dumps, so neither can pile up here.
#include <algorithm>
#include <csignal>
#include <map>
#include <regex>
#include <string>

#include "hprof_reader.h"
#include "hprof_test.h"

namespace hproftest {
namespace {

// Locals a callback may legitimately hold while a thread is parked inside it at the moment of the
// dump (a thread reference, a class, an object: a handful); a leak grows with the iterations
// (thousands of events per thread here).
constexpr long kSlack = 16;
constexpr int kThreads = 8;
constexpr int kIterations = 1500;

// step() runs compiled by its last call (C1 compiles it after a few hundred calls; -Xbatch has the
// calling thread wait for the compiler, so none of the 1500 calls per thread races it).
const std::vector<std::string> kCompiledByTheEnd = {"-XX:TieredStopAtLevel=1", "-Xbatch"};

class LocalRefsTest : public HprofTest {
 protected:
  // The most JNI-local roots any one thread holds in the heap dump of one run.
  long MostPerThread(const std::string& hprof_options) {
    const std::string dump = path("refs-" + std::to_string(++runs_) + ".hprof");
    JavaCommand c = hprof_options.empty() ? JavaCommand{} : Command(hprof_options, "");
    c.vm_args.insert(c.vm_args.end(), kCompiledByTheEnd.begin(), kCompiledByTheEnd.end());
    c.main_class = "hproftest.LocalRefLoop";
    c.args = {dump, std::to_string(kThreads), std::to_string(kIterations)};
    c.timeout = std::chrono::seconds(150);
    const RunResult run = Run(c);
    EXPECT_TRUE(run.exited(0)) << run.describe();
    jvmpiheap::HprofCounts counts;
    std::string error;
    if (!jvmpiheap::read_hprof_counts(dump, &counts, &error)) {
      ADD_FAILURE() << hprof_options << ": " << error << run.describe();
      return -1;
    }
    long most = 0;
    for (const auto& [serial, n] : counts.jni_local_roots) most = std::max(most, n);
    // The dump must show the workers at all: their frames are roots too.
    EXPECT_GE(counts.frame_roots.size(), static_cast<size_t>(kThreads)) << hprof_options;
    return most;
  }

  // HPROF's own text dump under `mode` (a heap= option with heap dumps), taken on SIGQUIT while the
  // workers wait inside step(): the most JNI-local roots any one thread holds there. Also tells
  // whether step()'s class object is a root of unknown kind: the compiled frames were there and
  // their constants reported as such.
  long MostPerThreadInAgentDump(const std::string& mode, bool* code_constants_seen) {
    const std::string file = path("agent-" + std::to_string(++runs_) + ".txt");
    JavaCommand c =
        Command(mode + ",format=a,file=" + file, "hproftest.LocalRefLoop",
                {"-", std::to_string(kThreads), std::to_string(kIterations)}, kCompiledByTheEnd);
    c.timeout = std::chrono::seconds(150);
    JavaProcess jvm(jdk(), c, dir().path());
    EXPECT_TRUE(jvm.wait_for_stdout("READY")) << jvm.wait().describe();
    jvm.signal(SIGQUIT);
    std::string text;
    const bool dumped = jvm.wait_until([&] {
      text = ReadFile(file);
      return text.find("HEAP DUMP END\n") != std::string::npos;
    });
    jvm.write_stdin("go\n");
    const RunResult run = jvm.wait();
    EXPECT_TRUE(dumped) << mode << ": no heap dump after SIGQUIT\n" << run.describe();
    EXPECT_TRUE(run.exited(0)) << run.describe();
    const size_t begin = text.find("HEAP DUMP BEGIN");
    const size_t end = text.find("HEAP DUMP END\n");
    if (begin == std::string::npos || end == std::string::npos) return -1;
    const std::string dump = text.substr(begin, end - begin);
    std::map<std::string, long> per_thread;
    const std::regex jni_local(R"(\(kind=<JNI local ref>, thread=(\d+),)");
    for (std::sregex_iterator it(dump.begin(), dump.end(), jni_local), last; it != last; ++it)
      ++per_thread[(*it)[1]];
    long most = 0;
    for (const auto& [thread, n] : per_thread) most = std::max(most, n);
    std::smatch cls;
    const std::regex loop_class(R"(\nCLS (\w+) \(name=hproftest\.LocalRefLoop,)");
    *code_constants_seen =
        std::regex_search(dump, cls, loop_class) &&
        dump.find("\nROOT " + cls[1].str() + " (kind=<unknown>)\n") != std::string::npos;
    return most;
  }

  void ExpectNoPileUpInAgentDump(const std::string& mode) {
    const long without = MostPerThread("");
    bool code_constants_seen = false;
    const long with = MostPerThreadInAgentDump(mode, &code_constants_seen);
    ASSERT_GE(without, 0);
    EXPECT_GE(with, 0) << mode;
    EXPECT_LE(with, without + kSlack)
        << mode << ": HPROF's dump lists " << with << " JNI local references "
        << "for one thread (the VM's own dump without an agent at most " << without << ")";
    EXPECT_TRUE(code_constants_seen)
        << mode << ": hproftest.LocalRefLoop is no root of unknown kind: the "
        << "workers' compiled frames (step()) were not in the dump, so it proves nothing";
  }

  void ExpectNoPileUp(const std::string& mode) {
    const long without = MostPerThread("");
    const long with = MostPerThread(mode);
    ASSERT_GE(without, 0);
    EXPECT_LE(with, without + kSlack)
        << mode << ": a thread holds " << with << " JNI local references at the end (without an "
        << "agent at most " << without << ")";
  }

 private:
  int runs_ = 0;
};

TEST_P(LocalRefsTest, HeapSites) {
  ExpectNoPileUp("heap=sites");
}
TEST_P(LocalRefsTest, Monitor) {
  ExpectNoPileUp("monitor=y");
}
TEST_P(LocalRefsTest, HeapSitesWithMonitor) {
  ExpectNoPileUp("heap=sites,monitor=y");
}
TEST_P(LocalRefsTest, EveryModeSampled) {
  ExpectNoPileUp("cpu=samples,heap=sites,sample=512k,monitor=y");
}
TEST_P(LocalRefsTest, CpuTimes) {
  ExpectNoPileUp("cpu=times,monitor=y");
}

TEST_P(LocalRefsTest, AgentDumpHeapOnly) {
  ExpectNoPileUpInAgentDump("heap=dump");
}
TEST_P(LocalRefsTest, AgentDumpHeapSitesWithMonitor) {
  ExpectNoPileUpInAgentDump("heap=all,monitor=y");
}
TEST_P(LocalRefsTest, AgentDumpEveryModeSampled) {
  ExpectNoPileUpInAgentDump("cpu=samples,heap=all,monitor=y");
}
TEST_P(LocalRefsTest, AgentDumpCpuTimes) {
  ExpectNoPileUpInAgentDump("cpu=times,heap=dump,monitor=y");
}

INSTANTIATE_FOR_JDKS(LocalRefsTest);

}  // namespace
}  // namespace hproftest
