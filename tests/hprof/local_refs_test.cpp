// SPDX-License-Identifier: Apache-2.0
// JNI local references do not pile up on application threads under any HPROF mode. A JVMTI or
// JVMPI callback, or a native hook, that runs on an application thread must leave that thread's
// local references as it found them: a thread that stays in one long-running frame (or in native
// code) never gets them back otherwise. LocalRefLoop's threads contend, wait, sleep and allocate
// for a while inside one frame; then the VM's own heap dump (HotSpotDiagnosticMXBean) lists the
// JNI-local roots each thread still holds (ROOT JNI LOCAL records). Under each mode no thread may
// hold more than a small constant above the most any thread holds in the same run without an agent
// (that run's dumping thread holds a few of its own).
//
// What it can see: references left in a thread's handle blocks by native code still on its stack
// (the runtime's natives and wrapped VM natives). HotSpot releases what a JVMTI callback made when
// the callback returns (checked by hand: 20 NewLocalRef per contended entry left no root), and
// hides agent threads from heap dumps, so neither can pile up here.
#include <algorithm>
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

class LocalRefsTest : public HprofTest {
 protected:
  // The most JNI-local roots any one thread holds in the heap dump of one run.
  long MostPerThread(const std::string& hprof_options) {
    const std::string dump = path("refs-" + std::to_string(++runs_) + ".hprof");
    JavaCommand c = hprof_options.empty() ? JavaCommand{} : Command(hprof_options, "");
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

INSTANTIATE_FOR_JDKS(LocalRefsTest);

}  // namespace
}  // namespace hproftest
