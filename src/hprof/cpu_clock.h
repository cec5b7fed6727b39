// A thread's CPU time at every method event without a system call per event. Reading the thread
// CPU clock (CLOCK_THREAD_CPUTIME_ID) enters the kernel; the monotonic clock is read in user space
// (vDSO). So every interval between two events of a thread is timed with the monotonic clock, and
// the thread CPU clock is read only when an interval is long enough that the thread may have been
// off the CPU (blocked, sleeping, preempted), or when the last reading is a period old. At such a
// reading the CPU time the thread really used since the previous reading, less what the short
// intervals in between were already charged, is what the current interval gets: a sleep costs
// nothing, a spin its real CPU share.
#pragma once

#include <cstdint>

namespace hprof::agent {

// Nanoseconds of CLOCK_MONOTONIC.
uint64_t monotonic_ns();

class CpuClock {
 public:
  // An interval shorter than this is taken to be spent on the CPU: blocking in the kernel and
  // being woken again, or a preemption, takes longer.
  static constexpr uint64_t kShortIntervalNs = 20'000;
  // The thread CPU clock is read at least this often while a thread has events.
  static constexpr uint64_t kReadPeriodNs = 1'000'000;

  using Clock = uint64_t (*)();
  // `wall`: the monotonic clock; `thread_cpu`: the calling thread's CPU clock.
  CpuClock(Clock wall, Clock thread_cpu) : wall_(wall), thread_cpu_(thread_cpu) {}

  // The thread's CPU time now, in nanoseconds, as an estimate that never runs backwards and that
  // agrees with the thread CPU clock at every reading of it. Called on the thread itself.
  uint64_t now();
  // How often the thread CPU clock was read.
  uint64_t reads() const { return reads_; }

 private:
  uint64_t read_cpu(uint64_t wall, uint64_t interval);

  Clock wall_;
  Clock thread_cpu_;
  bool started_ = false;
  uint64_t estimate_ = 0;   // the thread's CPU time as estimated at the last event
  uint64_t last_wall_ = 0;  // monotonic time of the last event
  uint64_t read_wall_ = 0;  // monotonic time of the last thread CPU clock reading
  uint64_t read_cpu_ = 0;   // what that reading said
  uint64_t charged_ = 0;    // short intervals charged since that reading
  uint64_t reads_ = 0;
};

}  // namespace hprof::agent
