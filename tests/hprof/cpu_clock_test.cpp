// SPDX-License-Identifier: Apache-2.0
// The per-thread CPU time estimate of cpu=times (src/hprof/cpu_clock.cpp), with a scripted
// monotonic clock and a scripted thread CPU clock: time off the CPU is never charged, time on it
// is, and the thread CPU clock is read rarely while events come fast.
#include "cpu_clock.h"

#include <gtest/gtest.h>
#include <time.h>

#include <cstdint>

namespace hprof::agent {
namespace {

uint64_t g_wall = 0;
uint64_t g_cpu = 0;
uint64_t g_cpu_reads = 0;
uint64_t wall() {
  return g_wall;
}
uint64_t cpu() {
  ++g_cpu_reads;
  return g_cpu;
}

class CpuClockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_wall = 5'000'000'000;
    g_cpu = 70'000'000;
    g_cpu_reads = 0;
  }
  // The thread runs for `ns` on the CPU, then the next event comes.
  uint64_t run(uint64_t ns) {
    g_wall += ns;
    g_cpu += ns;
    return clock_.now();
  }
  // The thread is off the CPU for `ns` (sleeping, blocked, preempted), then the next event comes.
  uint64_t off(uint64_t ns) {
    g_wall += ns;
    return clock_.now();
  }
  CpuClock clock_{wall, cpu};
};

TEST_F(CpuClockTest, StartsAtTheThreadCpuClock) {
  EXPECT_EQ(clock_.now(), 70'000'000u);
  EXPECT_EQ(clock_.reads(), 1u);
}

TEST_F(CpuClockTest, ShortIntervalsOnTheCpuAreChargedWithoutReadingTheCpuClock) {
  const uint64_t start = clock_.now();
  uint64_t now = start;
  for (int i = 0; i < 1000; ++i) now = run(300);  // 1000 events 300 ns apart: 0.3 ms
  EXPECT_EQ(now - start, 300'000u);
  EXPECT_EQ(g_cpu_reads, 1u) << "only the first event reads the thread CPU clock";
}

TEST_F(CpuClockTest, TheCpuClockIsReadOncePerPeriodWhileEventsComeFast) {
  const uint64_t start = clock_.now();
  uint64_t now = start;
  constexpr int kEvents = 100'000;  // 200 ns apart: 20 ms
  for (int i = 0; i < kEvents; ++i) now = run(200);
  EXPECT_EQ(now - start, 200u * kEvents) << "a thread always on the CPU is charged all of it";
  const uint64_t periods = 200u * kEvents / CpuClock::kReadPeriodNs;
  EXPECT_GE(clock_.reads(), periods);
  EXPECT_LE(clock_.reads(), periods + 2);
  EXPECT_EQ(clock_.reads(), g_cpu_reads);
}

TEST_F(CpuClockTest, ASleepIsNotCharged) {
  const uint64_t start = clock_.now();
  run(1'000);
  const uint64_t before_sleep = run(1'000);
  const uint64_t after_sleep = off(50'000'000);  // Thread.sleep(50)
  EXPECT_EQ(after_sleep, before_sleep);
  EXPECT_EQ(run(1'000) - start, 3'000u);
}

TEST_F(CpuClockTest, ALongSpinIsChargedWhatItUsed) {
  const uint64_t start = clock_.now();
  EXPECT_EQ(run(50'000'000) - start, 50'000'000u);
}

TEST_F(CpuClockTest, APreemptedIntervalIsChargedOnlyItsCpuShare) {
  const uint64_t start = clock_.now();
  // 5 ms between two events, of which the thread ran 2 ms.
  g_wall += 5'000'000;
  g_cpu += 2'000'000;
  EXPECT_EQ(clock_.now() - start, 2'000'000u);
}

TEST_F(CpuClockTest, ShortIntervalsThenASleepChargeOnlyWhatWasUsed) {
  const uint64_t start = clock_.now();
  for (int i = 0; i < 100; ++i) run(500);  // 50 us on the CPU in short intervals
  // A 10 ms interval of which 1 ms on the CPU: the reading sees 50 us + 1 ms used since the first.
  g_wall += 10'000'000;
  g_cpu += 1'000'000;
  EXPECT_EQ(clock_.now() - start, 1'050'000u);
}

TEST_F(CpuClockTest, NeverGoesBackwards) {
  uint64_t last = clock_.now();
  // Short intervals charged while the thread was in fact off the CPU (a preemption shorter than
  // the short-interval bound): the reading after them finds less used than charged.
  for (int i = 0; i < 10; ++i) last = off(10'000);
  const uint64_t after = off(30'000);
  EXPECT_GE(after, last);
  // A monotonic clock read across CPUs that went backwards reads the CPU clock and stays put.
  const uint64_t reads = clock_.reads();
  g_wall -= 1'000;
  g_cpu += 500;
  const uint64_t back = clock_.now();
  EXPECT_GE(back, after);
  EXPECT_EQ(clock_.reads(), reads + 1);
}

TEST_F(CpuClockTest, TheLongIntervalIsChargedAtMostItsLength) {
  const uint64_t start = clock_.now();
  // The CPU clock ran ahead of the wall clock (coarse accounting): the 100 us interval gets at
  // most 100 us.
  g_wall += 100'000;
  g_cpu += 400'000;
  EXPECT_EQ(clock_.now() - start, 100'000u);
}

// The real interval clock (the time-stamp counter at its measured rate, or CLOCK_MONOTONIC) keeps
// pace with CLOCK_MONOTONIC.
TEST(IntervalClockTest, KeepsPaceWithTheMonotonicClock) {
  const uint64_t i0 = interval_ns();
  const uint64_t m0 = monotonic_ns();
  timespec pause{0, 50'000'000};
  nanosleep(&pause, nullptr);
  const uint64_t i1 = interval_ns();
  const uint64_t m1 = monotonic_ns();
  const double interval = static_cast<double>(i1 - i0);
  const double monotonic = static_cast<double>(m1 - m0);
  EXPECT_GE(monotonic, 50e6);
  EXPECT_NEAR(interval / monotonic, 1.0, 0.01) << interval << " ns vs " << monotonic << " ns";
}

}  // namespace
}  // namespace hprof::agent
