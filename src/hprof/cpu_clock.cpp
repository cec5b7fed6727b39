#include "cpu_clock.h"

#include <time.h>

#include <algorithm>

namespace hprof::agent {

uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t CpuClock::now() {
  const uint64_t wall = wall_();
  if (!started_) {
    started_ = true;
    last_wall_ = wall;
    read_wall_ = wall;
    read_cpu_ = thread_cpu_();
    ++reads_;
    estimate_ = read_cpu_;
    return estimate_;
  }
  // A clock that went backwards tells nothing: the CPU clock is asked.
  const bool forward = wall >= last_wall_;
  const uint64_t interval = forward ? wall - last_wall_ : 0;
  last_wall_ = wall;
  if (forward && interval < kShortIntervalNs && wall - read_wall_ < kReadPeriodNs) {
    estimate_ += interval;
    charged_ += interval;
    return estimate_;
  }
  return read_cpu(wall, forward ? interval : UINT64_MAX);
}

uint64_t CpuClock::read_cpu(uint64_t wall, uint64_t interval) {
  const uint64_t cpu = thread_cpu_();
  ++reads_;
  const uint64_t used = cpu > read_cpu_ ? cpu - read_cpu_ : 0;
  // What the thread used since the last reading and the short intervals were not charged with was
  // used in this interval (it cannot have used more than the interval lasted). Short intervals
  // charged more than was used (a brief preemption) stay charged: the estimate never goes back.
  const uint64_t rest = used > charged_ ? used - charged_ : 0;
  estimate_ += std::min(rest, interval);
  read_wall_ = wall;
  read_cpu_ = cpu;
  charged_ = 0;
  return estimate_;
}

}  // namespace hprof::agent
