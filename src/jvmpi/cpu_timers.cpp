// SPDX-License-Identifier: Apache-2.0
#include "cpu_timers.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "log.h"

namespace jvmpi::cpu_timers {
namespace {

// Per perf-event descriptor, the CPU time (ns) its thread's samples were charged so far, with
// kOurs set while the descriptor is one of our events. The handler reads an event's counter only
// when the descriptor is marked ours: a signal left pending past perf_close must not read from
// whatever file took the number next. Descriptors at or above kMaxFd are not used for events (the
// thread gets a POSIX timer instead). calloc'd once: its untouched pages stay unbacked.
constexpr int kMaxFd = 1 << 16;
constexpr uint64_t kOurs = uint64_t{1} << 63;
std::atomic<uint64_t*> g_fd_state{nullptr};
// Whether events skip kernel mode (the default; all that paranoid 2 allows without CAP_PERFMON).
std::atomic<bool> g_exclude_kernel{true};

std::atomic_ref<uint64_t> fd_state(uint64_t* table, int fd) {
  return std::atomic_ref<uint64_t>(table[fd]);
}

uint64_t* fd_table() {
  uint64_t* table = g_fd_state.load(std::memory_order_acquire);
  if (table != nullptr) return table;
  auto* fresh = static_cast<uint64_t*>(std::calloc(kMaxFd, sizeof(uint64_t)));
  if (fresh == nullptr) return nullptr;
  if (!g_fd_state.compare_exchange_strong(table, fresh, std::memory_order_acq_rel)) {
    std::free(fresh);
    return table;
  }
  return fresh;
}

int open_task_clock(pid_t tid, jlong interval_ns, bool exclude_kernel) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.sample_period = static_cast<uint64_t>(interval_ns);
  attr.disabled = 1;  // enabled once the signal has somewhere to go
  // User mode only: the counter still counts kernel time, but a period that ends in the kernel
  // gives no signal; the next signal carries that time (see signal_weight). With kernel mode
  // (perf_kernel), such a period signals the thread on its return to user mode, as a POSIX timer
  // does; docs/jvmpi-extensions.md says what that does to native calls that enter the kernel.
  attr.exclude_kernel = exclude_kernel ? 1 : 0;
  attr.exclude_hv = 1;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC));
}

}  // namespace

const char* name(Kind kind) {
  switch (kind) {
    case Kind::kPerfUserTaskClock:
      return "perf";
    case Kind::kPerfKernelTaskClock:
      return "perf_kernel";
    case Kind::kPosixCpuClock:
      break;
  }
  return "posix";
}

jlong tick_ns() {
  // CLOCK_MONOTONIC_COARSE advances once per tick, and its resolution is that step.
  timespec resolution{};
  if (clock_getres(CLOCK_MONOTONIC_COARSE, &resolution) != 0) return 0;
  return static_cast<jlong>(resolution.tv_sec) * 1000000000LL + resolution.tv_nsec;
}

Kind choose(jlong interval_ns, bool* required) {
  *required = false;
  const char* want = std::getenv("JVMPI_SAMPLER_TIMER");
  auto is = [want](const char* value) { return want != nullptr && std::strcmp(want, value) == 0; };
  if (is("posix")) return Kind::kPosixCpuClock;
  const bool with_kernel = is("perf_kernel");
  if (is("perf") || with_kernel) {
    *required = true;
  } else if (want != nullptr && *want != '\0' && !is("auto")) {
    log_error("JVMPI_SAMPLER_TIMER=%s: expected auto, perf, perf_kernel or posix; using auto",
              want);
  }
  if (!*required) {
    // A POSIX CPU timer is checked at the tick: at two ticks or more per interval it still fires
    // about once per interval of CPU, and it adds nothing to the thread's context switches, where
    // a perf event's hrtimer is cancelled and started again (about 2 us per switch measured on a
    // paravirtualised 2-CPU guest: bench/README.md, server benchmark).
    const jlong tick = tick_ns();
    if (tick > 0 && interval_ns >= 2 * tick) return Kind::kPosixCpuClock;
  }
  // A probe on the calling thread, never enabled: refused under perf_event_paranoid 3, by a
  // seccomp filter, or by a kernel without perf events.
  const auto self = static_cast<pid_t>(gettid());
  const int fd = open_task_clock(self, 1000000, !with_kernel);
  if (fd < 0) return Kind::kPosixCpuClock;
  close(fd);
  if (fd_table() == nullptr) return Kind::kPosixCpuClock;
  g_exclude_kernel.store(!with_kernel);
  return with_kernel ? Kind::kPerfKernelTaskClock : Kind::kPerfUserTaskClock;
}

int perf_open(pid_t tid, int signo, jlong interval_ns) {
  uint64_t* table = fd_table();
  if (table == nullptr) {
    errno = ENOMEM;
    return -1;
  }
  const int fd = open_task_clock(tid, interval_ns, g_exclude_kernel.load());
  if (fd < 0) return -1;
  f_owner_ex owner{F_OWNER_TID, tid};
  const int flags = fcntl(fd, F_GETFL);
  if (fd >= kMaxFd || flags < 0 || fcntl(fd, F_SETOWN_EX, &owner) != 0 ||
      fcntl(fd, F_SETSIG, signo) != 0 || fcntl(fd, F_SETFL, flags | O_ASYNC) != 0) {
    const int saved = fd >= kMaxFd ? EMFILE : errno;
    close(fd);
    errno = saved;
    return -1;
  }
  fd_state(table, fd).store(kOurs, std::memory_order_release);  // nothing charged yet
  if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
    const int saved = errno;
    fd_state(table, fd).store(0, std::memory_order_release);
    close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

bool perf_resume(int fd, jlong interval_ns) {
  uint64_t* table = g_fd_state.load(std::memory_order_acquire);
  if (table == nullptr || fd < 0 || fd >= kMaxFd) return false;
  auto period = static_cast<uint64_t>(interval_ns);
  if (ioctl(fd, PERF_EVENT_IOC_PERIOD, &period) != 0) return false;
  // The counter kept what the thread used before the pause: charge from where it stands now.
  uint64_t count = 0;
  if (read(fd, &count, sizeof count) != static_cast<ssize_t>(sizeof count)) return false;
  fd_state(table, fd).store(kOurs | count, std::memory_order_release);
  return ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) == 0;
}

void perf_pause(int fd) {
  // Only disabled, not closed: a signal of this event may still be pending on its thread, and
  // the handler may read the descriptor; it is closed on that thread (perf_close), where no
  // handler can run at the same time.
  (void)ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
}

void perf_close(int fd) {
  if (fd < 0) return;
  if (uint64_t* table = g_fd_state.load(std::memory_order_acquire);
      table != nullptr && fd < kMaxFd) {
    fd_state(table, fd).store(0, std::memory_order_release);
  }
  (void)ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
  close(fd);
}

jint signal_weight(const siginfo_t* info, jlong interval_ns) {
  if (info == nullptr) return 1;
  if (info->si_code == SI_TIMER) return 1 + (info->si_overrun > 0 ? info->si_overrun : 0);
  // A perf event's signal: si_code is a poll band (POLL_IN; POLL_HUP at an event limit).
  if (info->si_code < POLL_IN || info->si_code > POLL_HUP) return 1;
  uint64_t* table = g_fd_state.load(std::memory_order_acquire);
  const int fd = info->si_fd;
  if (table == nullptr || fd < 0 || fd >= kMaxFd) return 1;
  const uint64_t state = fd_state(table, fd).load(std::memory_order_acquire);
  if ((state & kOurs) == 0) return 1;
  uint64_t count = 0;
  if (read(fd, &count, sizeof count) != static_cast<ssize_t>(sizeof count)) return 1;
  // Only this thread's handler charges this event, and a handler does not interrupt itself (the
  // signal is blocked while it runs): a plain read-modify-write is enough.
  const uint64_t charged = state & ~kOurs;
  const auto interval = static_cast<uint64_t>(interval_ns);
  uint64_t weight = 1;
  if (count > charged) {
    // Rounded to whole intervals; what rounding leaves or takes is settled at the next signal,
    // so the weights add up to the counter.
    weight = (count - charged + interval / 2) / interval;
    if (weight < 1) weight = 1;
    if (weight > 1000000) weight = 1000000;
  }
  fd_state(table, fd).store(kOurs | (charged + weight * interval), std::memory_order_release);
  return static_cast<jint>(weight);
}

bool posix_create(clockid_t clock, pid_t tid, int signo, jlong interval_ns, timer_t* timer) {
  sigevent event{};
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = signo;
  event._sigev_un._tid = tid;
  if (timer_create(clock, &event, timer) != 0) return false;
  itimerspec spec{};
  spec.it_interval.tv_sec = static_cast<time_t>(interval_ns / 1000000000LL);
  spec.it_interval.tv_nsec = static_cast<long>(interval_ns % 1000000000LL);
  spec.it_value = spec.it_interval;
  if (timer_settime(*timer, 0, &spec, nullptr) != 0) {
    timer_delete(*timer);
    return false;
  }
  return true;
}

}  // namespace jvmpi::cpu_timers
