// SPDX-License-Identifier: Apache-2.0
// A thread's CPU time at every method event without a system call per event. Reading the thread
// CPU clock (CLOCK_THREAD_CPUTIME_ID) enters the kernel; the time-stamp counter and the monotonic
// clock are read in user space. So every interval between two events of a thread is timed with
// those (interval_ns below), and
// the thread CPU clock is read only when an interval is long enough that the thread may have been
// off the CPU (blocked, sleeping, preempted), or when the last reading is a period old. At such a
// reading the CPU time the thread really used since the previous reading, less what the short
// intervals in between were already charged, is what the current interval gets: a sleep costs
// nothing, a spin its real CPU share.
#pragma once

#include <x86intrin.h>

#include <atomic>
#include <cstdint>

namespace hprof::agent {

// Nanoseconds of CLOCK_MONOTONIC.
uint64_t monotonic_ns();

// The clock intervals are timed with, in nanoseconds from an arbitrary start: the processor's
// time-stamp counter scaled by a rate measured against CLOCK_MONOTONIC once (reading it costs a
// third of the vDSO's CLOCK_MONOTONIC here), or CLOCK_MONOTONIC itself where the counter is not
// invariant (its rate could change with the processor's frequency or stop in sleep states) or
// its rate does not look sane. A jump of the counter (a migrated VM) only makes one interval look
// long, and a long interval is always checked against the thread CPU clock.
uint64_t interval_ns();

namespace clock_detail {
// ns = ((counter - base) * mult) >> 32 once measured; `usable` false: CLOCK_MONOTONIC instead.
struct TscRate {
  bool usable = false;
  uint64_t base = 0;
  uint64_t mult = 0;
};
extern std::atomic<const TscRate*> g_rate;  // nullptr until the first interval_ns()

// interval_ns() inline: the counter read and one multiply, no call (two per method call).
inline uint64_t interval_ns_inline() {
  const TscRate* rate = g_rate.load(std::memory_order_acquire);
  if (rate == nullptr || !rate->usable) [[unlikely]]
    return interval_ns();
  const uint64_t ticks = __rdtsc() - rate->base;
  return static_cast<uint64_t>((static_cast<unsigned __int128>(ticks) * rate->mult) >> 32);
}
}  // namespace clock_detail

class CpuClock {
 public:
  // An interval shorter than this is taken to be spent on the CPU: blocking in the kernel and
  // being woken again, or a preemption, takes longer.
  static constexpr uint64_t kShortIntervalNs = 20'000;
  // The thread CPU clock is read at least this often while a thread has events.
  static constexpr uint64_t kReadPeriodNs = 1'000'000;

  using Clock = uint64_t (*)();
  // `wall`: the interval clock; `thread_cpu`: the calling thread's CPU clock.
  CpuClock(Clock wall, Clock thread_cpu)
      : wall_(wall), thread_cpu_(thread_cpu), default_wall_(wall == &interval_ns) {}

  // The thread's CPU time now, in nanoseconds, as an estimate that never runs backwards and that
  // agrees with the thread CPU clock at every reading of it. Called on the thread itself.
  uint64_t now() {
    const uint64_t wall = default_wall_ ? clock_detail::interval_ns_inline() : wall_();
    // The common case, inline: a short interval since the last event, the last reading recent.
    if (started_ && wall >= last_wall_ && wall - last_wall_ < kShortIntervalNs &&
        wall - read_wall_ < kReadPeriodNs) {
      const uint64_t interval = wall - last_wall_;
      last_wall_ = wall;
      estimate_ += interval;
      charged_ += interval;
      return estimate_;
    }
    return now_slow(wall);
  }
  // How often the thread CPU clock was read (also read by other threads, for reports).
  uint64_t reads() const { return reads_.load(std::memory_order_relaxed); }

 private:
  uint64_t now_slow(uint64_t wall);
  uint64_t read_cpu(uint64_t wall, uint64_t interval);

  Clock wall_;
  Clock thread_cpu_;
  bool default_wall_;  // wall_ is interval_ns: called inline
  bool started_ = false;
  uint64_t estimate_ = 0;           // the thread's CPU time as estimated at the last event
  uint64_t last_wall_ = 0;          // interval clock at the last event
  uint64_t read_wall_ = 0;          // interval clock at the last thread CPU clock reading
  uint64_t read_cpu_ = 0;           // what that reading said
  uint64_t charged_ = 0;            // short intervals charged since that reading
  std::atomic<uint64_t> reads_{0};  // written by the thread only
};

}  // namespace hprof::agent
