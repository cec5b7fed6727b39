// SPDX-License-Identifier: Apache-2.0
// cpu=times charges CPU time, not wall time, and takes it without a system call per method event:
// java/hprof-tests/hproftest/SleepSpin.java sleeps in nap() and computes in spin() for the same
// wall time, and prints the CPU time the JVM's thread CPU clock gave each phase.
#include <cstdio>
#include <regex>

#include "hprof_test.h"

namespace hproftest {
namespace {

class CpuTimesTest : public HprofTest {};

// The microseconds the program printed for a phase ("NAP cpu_us=... wall_us=...").
bool PhaseTimes(const std::string& out, const std::string& phase, double* cpu_ms, double* wall_ms) {
  std::smatch m;
  const std::regex re(phase + " cpu_us=([0-9]+) wall_us=([0-9]+)");
  if (!std::regex_search(out, m, re)) return false;
  *cpu_ms = std::stod(m[1]) / 1000.0;
  *wall_ms = std::stod(m[2]) / 1000.0;
  return true;
}

// The time cpu=times charged to `method` and everything it called: the self times of every trace
// that has `method` among its frames (the depth is enough to reach it from every callee).
double InclusiveMs(const Profile& p, const CostSection& times, const std::string& method) {
  double percent = 0;
  for (const CostRow& r : times.rows) {
    const Trace* t = p.trace(r.trace);
    if (t == nullptr) continue;
    for (const auto& f : t->frames) {
      if (f.method == method) {
        percent += r.self;
        break;
      }
    }
  }
  return percent / 100.0 * static_cast<double>(times.total);
}

TEST_P(CpuTimesTest, ASleepingMethodCostsNoCpuAndASpinningOneItsCpuShare) {
  const RunResult run = Run("cpu=times,depth=12,cutoff=0", "hproftest.SleepSpin", {"400"});
  ASSERT_TRUE(run.exited(0)) << run.describe();
  ASSERT_NE(run.out.find("SLEEPSPIN DONE true"), std::string::npos) << run.describe();
  double nap_cpu = 0, nap_wall = 0, spin_cpu = 0, spin_wall = 0;
  ASSERT_TRUE(PhaseTimes(run.out, "NAP", &nap_cpu, &nap_wall)) << run.describe();
  ASSERT_TRUE(PhaseTimes(run.out, "SPIN", &spin_cpu, &spin_wall)) << run.describe();
  const Profile p = ReadProfile();
  EXPECT_WELL_FORMED(p, run);
  ASSERT_EQ(p.cpu_times.size(), 1u) << run.describe();
  const CostSection& times = p.cpu_times[0];

  const double nap = InclusiveMs(p, times, "hproftest.SleepSpin.nap");
  const double spin = InclusiveMs(p, times, "hproftest.SleepSpin.spin");
  const std::string facts =
      "nap: charged " + std::to_string(nap) + " ms, used " + std::to_string(nap_cpu) +
      " ms CPU in " + std::to_string(nap_wall) + " ms; spin: charged " + std::to_string(spin) +
      " ms, used " + std::to_string(spin_cpu) + " ms CPU in " + std::to_string(spin_wall) + " ms";
  // nap() slept ~400 ms and used some CPU waking up ~200 times (a few ms on a quiet machine, 60 ms
  // seen with a heap-dump test beside it): it is charged about what it used, and far less than its
  // wall time (a charge of wall time would exceed half of it).
  EXPECT_LE(nap, nap_cpu + 10.0) << facts;
  EXPECT_LT(nap, 0.5 * nap_wall) << facts;
  // spin() is charged the CPU time it got (less than its wall time when the machine is busy),
  // within the report's millisecond rounding and the percentages' two decimals.
  EXPECT_GE(spin, 0.85 * spin_cpu - 5.0) << facts;
  EXPECT_LE(spin, 1.15 * spin_cpu + 5.0) << facts;
}

// The thread CPU clock is a system call: it is read when an interval may have been spent off the
// CPU or once a millisecond per thread, not at every event. HPROF says how often (verbose=y).
TEST_P(CpuTimesTest, TheThreadCpuClockIsReadFarLessOftenThanEventsCome) {
  const RunResult run = Run("cpu=times", "hproftest.SleepSpin", {"300"});
  ASSERT_TRUE(run.exited(0)) << run.describe();
  std::smatch m;
  const std::regex re("HPROF cpu=times: ([0-9]+) method events, ([0-9]+) thread CPU clock reads");
  ASSERT_TRUE(std::regex_search(run.err, m, re)) << run.describe();
  const double events = std::stod(m[1]);
  const double reads = std::stod(m[2]);
  // spin() alone makes hundreds of thousands of calls of step() in 300 ms.
  EXPECT_GT(events, 100000.0) << run.describe();
  EXPECT_LT(reads * 50, events) << events << " events, " << reads << " reads";
}

// verbose=n prints nothing of it.
TEST_P(CpuTimesTest, TheClockCountsAreVerboseOutput) {
  const RunResult run = Run("cpu=times,verbose=n", "hproftest.CallTree");
  ASSERT_TRUE(run.exited(0)) << run.describe();
  EXPECT_EQ(run.err.find("HPROF cpu=times"), std::string::npos) << run.describe();
}

INSTANTIATE_FOR_JDKS(CpuTimesTest);

}  // namespace
}  // namespace hproftest
