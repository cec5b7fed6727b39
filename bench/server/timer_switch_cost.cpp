// SPDX-License-Identifier: Apache-2.0
// What a thread's CPU-time sampling timer adds to each of its context switches: two threads hand
// a byte back and forth through pipes (every hand-off blocks one thread and wakes the other, two
// context switches a round trip), each with no timer, with the runtime's perf event
// (cpu_timers::perf_open) or with its POSIX CPU timer (cpu_timers::posix_create), at the
// sampling interval given. Prints the process's CPU per round trip and the signals taken, per
// timer kind, rounds interleaved; the difference to "none" is the timer's cost per two switches
// (plus its signals, counted apart). Both threads run on one CPU (sched_setaffinity) so every
// hand-off is a real switch. Then what a signal itself costs (the kernel's delivery and return,
// with a handler that only counts, and the timer's own interrupt): one thread spins through a
// fixed loop with a perf event every 100 us, or a POSIX timer at every tick, against none; CPU
// difference over the signals.
//
//   timer_switch_cost [--round-trips N] [--rounds N] [--interval-us N]
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cpu_timers.h"

namespace {

using jvmpi::cpu_timers::Kind;

std::atomic<long> g_signals{0};
void on_signal(int, siginfo_t*, void*) {
  g_signals.fetch_add(1, std::memory_order_relaxed);
}

enum class Timer { kNone, kPerf, kPosix };
const char* name(Timer t) {
  return t == Timer::kNone ? "none" : t == Timer::kPerf ? "perf event" : "POSIX CPU timer";
}

struct Run {
  Timer timer;
  long round_trips;
  long interval_ns;
  int to_peer[2];
  int to_main[2];
  bool armed_ok = true;
};

// Arms the calling thread's timer as the runtime does for a Java thread; false on failure.
bool arm(const Run& run, int* fd, timer_t* timer) {
  const auto tid = static_cast<pid_t>(gettid());
  if (run.timer == Timer::kPerf) {
    *fd = jvmpi::cpu_timers::perf_open(tid, SIGPROF, run.interval_ns);
    return *fd >= 0;
  }
  if (run.timer == Timer::kPosix) {
    clockid_t clock{};
    return pthread_getcpuclockid(pthread_self(), &clock) == 0 &&
           jvmpi::cpu_timers::posix_create(clock, tid, SIGPROF, run.interval_ns, timer);
  }
  return true;
}

void disarm(const Run& run, int fd, timer_t timer) {
  if (run.timer == Timer::kPerf) jvmpi::cpu_timers::perf_close(fd);
  if (run.timer == Timer::kPosix) timer_delete(timer);
}

void* peer(void* arg) {
  auto* run = static_cast<Run*>(arg);
  int fd = -1;
  timer_t timer{};
  if (!arm(*run, &fd, &timer)) run->armed_ok = false;
  char byte = 0;
  for (long i = 0; i < run->round_trips; ++i) {
    if (read(run->to_peer[0], &byte, 1) != 1 || write(run->to_main[1], &byte, 1) != 1) break;
  }
  disarm(*run, fd, timer);
  return nullptr;
}

double now_ns(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

// One run: CPU ns of the process per round trip, and the signals it took.
bool measure(Timer timer, long round_trips, long interval_ns, double* cpu_per_trip, long* signals) {
  Run run{timer, round_trips, interval_ns, {-1, -1}, {-1, -1}};
  if (pipe(run.to_peer) != 0 || pipe(run.to_main) != 0) return false;
  int fd = -1;
  timer_t posix_timer{};
  bool ok = arm(run, &fd, &posix_timer);
  const long signals_before = g_signals.load();
  const double cpu_before = now_ns(CLOCK_PROCESS_CPUTIME_ID);
  pthread_t thread{};
  if (ok && pthread_create(&thread, nullptr, peer, &run) == 0) {
    char byte = 1;
    for (long i = 0; i < round_trips; ++i) {
      if (write(run.to_peer[1], &byte, 1) != 1 || read(run.to_main[0], &byte, 1) != 1) {
        ok = false;
        break;
      }
    }
    pthread_join(thread, nullptr);
  } else {
    ok = false;
  }
  *cpu_per_trip =
      (now_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu_before) / static_cast<double>(round_trips);
  *signals = g_signals.load() - signals_before;
  disarm(run, fd, posix_timer);
  for (int f : {run.to_peer[0], run.to_peer[1], run.to_main[0], run.to_main[1]}) close(f);
  return ok && run.armed_ok;
}

// One spin of a fixed loop, with a timer of kind `timer` every `interval_ns`: CPU ns, signals.
bool spin(Timer timer, long interval_ns, double* cpu_ns, long* signals) {
  int fd = -1;
  timer_t posix_timer{};
  if (timer == Timer::kPerf) {
    fd = jvmpi::cpu_timers::perf_open(static_cast<pid_t>(gettid()), SIGPROF, interval_ns);
    if (fd < 0) return false;
  } else if (timer == Timer::kPosix) {
    clockid_t clock{};
    if (pthread_getcpuclockid(pthread_self(), &clock) != 0 ||
        !jvmpi::cpu_timers::posix_create(clock, static_cast<pid_t>(gettid()), SIGPROF, interval_ns,
                                         &posix_timer)) {
      return false;
    }
  }
  const long before = g_signals.load();
  const double start = now_ns(CLOCK_THREAD_CPUTIME_ID);
  volatile uint64_t sink = 0;
  uint64_t x = 88172645463325252ULL;
  for (long i = 0; i < 400000000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
  }
  sink = x;
  (void)sink;
  *cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - start;
  *signals = g_signals.load() - before;
  if (fd >= 0) jvmpi::cpu_timers::perf_close(fd);
  if (timer == Timer::kPosix) timer_delete(posix_timer);
  return true;
}

bool whole_number(const char* text, long* out) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value <= 0) return false;
  *out = value;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  long round_trips = 100000, rounds = 5, interval_us = 10000;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::printf(
          "usage: timer_switch_cost [--round-trips N] [--rounds N] [--interval-us N]\n"
          "CPU per pipe round trip (two context switches on one CPU) with no timer, the JVMPI\n"
          "runtime's perf-event timer and its POSIX CPU timer on both threads, rounds "
          "interleaved;\nthen the CPU of one signal (a spinning thread, a perf event every "
          "100 us or a POSIX timer every tick).\n");
      return 0;
    }
    long* target = arg == "--round-trips"   ? &round_trips
                   : arg == "--rounds"      ? &rounds
                   : arg == "--interval-us" ? &interval_us
                                            : nullptr;
    if (target == nullptr || i + 1 >= argc || !whole_number(argv[i + 1], target)) {
      std::fprintf(stderr, "timer_switch_cost: bad argument '%s' (see --help)\n", argv[i]);
      return 2;
    }
    ++i;
  }
  struct sigaction action {};
  action.sa_sigaction = on_signal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGPROF, &action, nullptr);
  cpu_set_t one{};
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu() >= 0 ? sched_getcpu() : 0, &one);
  sched_setaffinity(0, sizeof one, &one);  // inherited by the peer thread
  // Perf events only where the kernel allows them (the runtime's own probe).
  bool required = false;
  const bool perf = jvmpi::cpu_timers::is_perf(jvmpi::cpu_timers::choose(1000000, &required));
  std::vector<Timer> timers = {Timer::kNone, Timer::kPosix};
  if (perf) timers.insert(timers.begin() + 1, Timer::kPerf);
  std::vector<std::vector<double>> cpu(timers.size());
  std::vector<long> signals(timers.size());
  for (long r = 0; r < rounds; ++r) {
    for (size_t t = 0; t < timers.size(); ++t) {
      double per_trip = 0;
      long taken = 0;
      if (!measure(timers[t], round_trips, interval_us * 1000, &per_trip, &taken)) {
        std::fprintf(stderr, "timer_switch_cost: %s run failed: %s\n", name(timers[t]),
                     std::strerror(errno));
        return 1;
      }
      cpu[t].push_back(per_trip);
      signals[t] += taken;
    }
  }
  std::printf("%ld round trips x %ld rounds, interval %ld us, one CPU\n", round_trips, rounds,
              interval_us);
  double base = 0;
  for (size_t t = 0; t < timers.size(); ++t) {
    std::vector<double> v = cpu[t];
    std::sort(v.begin(), v.end());
    const double median = v[v.size() / 2];
    if (t == 0) base = median;
    std::printf(
        "%-16s CPU per round trip %7.0f ns (median; min %.0f, max %.0f), +%.0f ns per "
        "switch over none, %ld signals\n",
        name(timers[t]), median, v.front(), v.back(), (median - base) / 2, signals[t]);
  }
  if (!perf) {
    std::printf("perf events: refused by this kernel, not measured\n");
    return 0;
  }
  // Per kind, the interval that signals most often: perf events every 100 us; POSIX timers at
  // 1 ms, which fire at every tick.
  for (const auto& [timer, interval_ns] :
       {std::pair{Timer::kPerf, 100000L}, std::pair{Timer::kPosix, 1000000L}}) {
    std::vector<double> plain, signalled;
    long total_signals = 0;
    for (long r = 0; r < rounds; ++r) {
      double cpu_plain = 0, cpu_signalled = 0;
      long none = 0, taken = 0;
      if (!spin(Timer::kNone, 0, &cpu_plain, &none) ||
          !spin(timer, interval_ns, &cpu_signalled, &taken)) {
        std::fprintf(stderr, "timer_switch_cost: spin failed: %s\n", std::strerror(errno));
        return 1;
      }
      plain.push_back(cpu_plain);
      signalled.push_back(cpu_signalled);
      total_signals += taken;
    }
    std::sort(plain.begin(), plain.end());
    std::sort(signalled.begin(), signalled.end());
    const double per_round = static_cast<double>(total_signals) / static_cast<double>(rounds);
    std::printf(
        "signal of a %s every %ld us (spinning thread, handler that counts): %.0f ns of "
        "CPU per signal (median spin %.1f ms without, %.1f ms with, %.0f signals)\n",
        name(timer), interval_ns / 1000,
        (signalled[signalled.size() / 2] - plain[plain.size() / 2]) / per_round,
        plain[plain.size() / 2] / 1e6, signalled[signalled.size() / 2] / 1e6, per_round);
  }
  return 0;
}
