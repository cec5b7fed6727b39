// SPDX-License-Identifier: Apache-2.0
#include "cpu_clock.h"

#include <cpuid.h>
#include <time.h>
#include <x86intrin.h>

#include <algorithm>
#include <atomic>

namespace hprof::agent {

uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

namespace {

using clock_detail::TscRate;

bool invariant_tsc() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0x80000000u, &a, &b, &c, &d) == 0 || a < 0x80000007u) return false;
  __get_cpuid(0x80000007u, &a, &b, &c, &d);
  return (d & (1u << 8)) != 0;
}

// A (counter, monotonic ns) pair read as close together as a few tries allow.
void read_pair(uint64_t* tsc, uint64_t* ns) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 5; ++i) {
    const uint64_t before = __rdtsc();
    const uint64_t mono = monotonic_ns();
    const uint64_t after = __rdtsc();
    if (after >= before && after - before < best) {
      best = after - before;
      *tsc = before + (after - before) / 2;
      *ns = mono;
    }
  }
}

TscRate measure_tsc_rate() {
  TscRate rate;
  if (!invariant_tsc()) return rate;
  // 2 ms of both clocks: the pairs' read error (tens of ns) is then a few parts in 100,000.
  uint64_t tsc0 = 0, ns0 = 0, tsc1 = 0, ns1 = 0;
  read_pair(&tsc0, &ns0);
  do {
    read_pair(&tsc1, &ns1);
  } while (ns1 < ns0 + 2'000'000 && ns1 >= ns0);
  if (ns1 < ns0 || tsc1 <= tsc0) return rate;
  const double ns_per_tick = static_cast<double>(ns1 - ns0) / static_cast<double>(tsc1 - tsc0);
  // Between 0.1 and 10 GHz, or the counter is not what it claims to be.
  if (!(ns_per_tick > 0.1 && ns_per_tick < 10.0)) return rate;
  rate.usable = true;
  rate.base = tsc0;
  rate.mult = static_cast<uint64_t>(ns_per_tick * 4294967296.0);
  return rate;
}

}  // namespace

std::atomic<const TscRate*> clock_detail::g_rate{nullptr};

namespace {
using clock_detail::g_rate;

// Out of the way of interval_ns, which then needs no stack frame.
[[gnu::noinline, gnu::cold]] const TscRate* first_rate() {
  static const TscRate rate = measure_tsc_rate();
  g_rate.store(&rate, std::memory_order_release);
  return &rate;
}

}  // namespace

uint64_t interval_ns() {
  const TscRate* rate = g_rate.load(std::memory_order_acquire);
  if (rate == nullptr) [[unlikely]]
    rate = first_rate();
  if (!rate->usable) [[unlikely]]
    return monotonic_ns();
  const uint64_t ticks = __rdtsc() - rate->base;
  return static_cast<uint64_t>((static_cast<unsigned __int128>(ticks) * rate->mult) >> 32);
}

uint64_t CpuClock::now_slow(uint64_t wall) {
  if (!started_) {
    started_ = true;
    last_wall_ = wall;
    read_wall_ = wall;
    read_cpu_ = thread_cpu_();
    reads_.store(reads_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    estimate_ = read_cpu_;
    return estimate_;
  }
  // A clock that went backwards tells nothing: the CPU clock is asked.
  const bool forward = wall >= last_wall_;
  const uint64_t interval = forward ? wall - last_wall_ : 0;
  last_wall_ = wall;
  if (forward && interval < kShortIntervalNs && wall - read_wall_ < kReadPeriodNs) {
    estimate_ += interval;  // not reached from now(), which charges short intervals itself
    charged_ += interval;
    return estimate_;
  }
  return read_cpu(wall, forward ? interval : UINT64_MAX);
}

uint64_t CpuClock::read_cpu(uint64_t wall, uint64_t interval) {
  const uint64_t cpu = thread_cpu_();
  reads_.store(reads_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
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
