// SPDX-License-Identifier: Apache-2.0
// The per-thread CPU-time timers behind the CPU-time sampler: each sends its thread the sampling
// signal every interval of that thread's own CPU time. Two kinds:
//  - perf events (PERF_COUNT_SW_TASK_CLOCK, one per thread): an hrtimer counts the thread's CPU
//    time, so the thread is signalled every interval, even at 1 ms; the signal comes through the
//    event's file (F_SETOWN_EX to the thread, F_SETSIG). User mode only by default (all that
//    perf_event_paranoid 2 allows the unprivileged; time in the kernel is carried by the next
//    signal); JVMPI_SAMPLER_TIMER=perf_kernel samples kernel mode too where that is allowed;
//  - POSIX timers on the thread's CPU clock (timer_create, SIGEV_THREAD_ID): the kernel checks
//    them at its scheduler tick, so below the tick one signal stands for several intervals.
// By default (auto) POSIX timers serve intervals of at least two ticks, where the tick costs them
// no resolution, and perf events shorter ones where the kernel allows them (perf_event_paranoid
// <= 2, no seccomp filter against them): a perf event is stopped and restarted at every context
// switch of its thread, which a busy server does thousands of times a second, while a POSIX CPU
// timer costs nothing at a switch. JVMPI_SAMPLER_TIMER=perf or posix forces one kind.
#pragma once

#include <jni.h>
#include <signal.h>
#include <sys/types.h>
#include <time.h>

namespace jvmpi::cpu_timers {

enum class Kind { kPerfUserTaskClock, kPerfKernelTaskClock, kPosixCpuClock };

inline bool is_perf(Kind kind) {
  return kind != Kind::kPosixCpuClock;
}

// "perf", "perf_kernel" or "posix", as the statistics line prints it.
const char* name(Kind kind);

// The kind to use for sampling every `interval_ns`: JVMPI_SAMPLER_TIMER (auto, perf, perf_kernel
// or posix; anything else gets one error line and counts as auto), the interval against the
// kernel's tick (auto), and whether the kernel lets the calling thread open such a perf event
// (auto: a user-mode one). Sets *required when the user asked for perf events explicitly (no
// fallback to POSIX timers wanted).
Kind choose(jlong interval_ns, bool* required);

// The kernel's scheduler tick in ns (the resolution of its coarse clocks), 0 if unknown.
jlong tick_ns();

// A perf event counting thread `tid`'s CPU time, signalling it with `signo` every `interval_ns`,
// enabled; kernel mode sampled or not as choose() found allowed. Returns the file descriptor, or -1
// (errno set) when the kernel refuses.
int perf_open(pid_t tid, int signo, jlong interval_ns);
// Sets the period of a disabled event and enables it again.
bool perf_resume(int fd, jlong interval_ns);
// Stops the event's signals; the descriptor stays valid (closed by perf_close on its thread).
void perf_pause(int fd);
// Disables and closes. Call on the thread the event signals (see cpu_timers.cpp for why).
void perf_close(int fd);

// In the signal handler: how many intervals of CPU time the signal `info` stands for. For a
// perf event's signal, the CPU time its thread used since the previous one (one read of the
// event's counter; time spent in the kernel, where the event takes no sample, is charged to the
// next signal); for a POSIX timer, 1 + its overruns. Async-signal-safe.
jint signal_weight(const siginfo_t* info, jlong interval_ns);

// A POSIX timer on `clock` sending `signo` to thread `tid` every `interval_ns`; false on failure.
bool posix_create(clockid_t clock, pid_t tid, int signo, jlong interval_ns, timer_t* timer);

}  // namespace jvmpi::cpu_timers
