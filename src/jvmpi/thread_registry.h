// SPDX-License-Identifier: Apache-2.0
// The threads the agent knows, keyed by JNIEnv* (JVMPI's thread ID), with their per-thread state:
// the agent's thread-local storage and the CPU-time marks that ThreadHasRun compares.
#pragma once

#include <jni.h>
#include <jvmpi.h>
#include <jvmti.h>
#include <sys/types.h>
#include <time.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

namespace jvmpi {

struct ThreadRecord {
  ThreadRecord() = default;
  ThreadRecord(const ThreadRecord&) = delete;
  ThreadRecord& operator=(const ThreadRecord&) = delete;
  ~ThreadRecord();  // releases the global reference, whichever thread drops the record last

  JNIEnv* env = nullptr;
  jthread thread = nullptr;  // global reference
  std::atomic<void*> local_storage{nullptr};
  // Threads the runtime itself runs; their start and end are not reported.
  bool internal = false;
  // Whether the agent has had THREAD_START for this thread.
  std::atomic<bool> announced{false};
  // Set while the thread is blocked entering (1) or waiting on (2) a JVMPI raw monitor, which
  // JVMTI reports as running native code.
  std::atomic<int> raw_monitor_state{0};

  // The object this thread waits on in Object.wait (a weak global reference), for the monitor
  // dump: from JDK 23 JVMTI no longer names it as the thread's contended monitor.
  std::mutex waiting_mutex;
  jobject waiting_on = nullptr;

  std::mutex suspension_mutex;
  bool suspended_by_jvmpi = false;
  // Thread CPU time (ns) at the latest and the previous JVMPI suspension.
  jlong cpu_at_last_suspend = 0;
  jlong cpu_at_previous_suspend = 0;

  // The OS thread and its CPU clock, noted by the thread itself at registration, so the CPU-time
  // sampler can arm a timer for it from any thread.
  pid_t tid = 0;
  clockid_t cpu_clock{};
  // The sampler's timer (cpu_sampling.cpp, cpu_timers.h), guarded by sampling_mutex: a perf
  // event (perf_fd >= 0; kept open, only paused, while sampling is off, and closed on the thread
  // at its end) or a POSIX timer.
  std::mutex sampling_mutex;
  timer_t cpu_timer{};
  int perf_fd = -1;
  bool cpu_timer_armed = false;
  bool cpu_timer_is_perf = false;  // which of the two is armed
  bool sampling_ended = false;     // ThreadEnd came: never arm again
  jlong cpu_at_arm = -1;           // the thread's CPU time (ns) when its timer was armed
  // Set when a detach took the record out of the registry: the thread-local shortcut to it (which
  // its thread keeps) no longer counts, and the next lookup registers the thread anew.
  std::atomic<bool> retired{false};
};

using ThreadRecordPtr = std::shared_ptr<ThreadRecord>;

namespace threads {

// The record for `env`, or null when the thread is unknown (never seen, or ended).
ThreadRecordPtr find(JNIEnv* env);

// The calling thread's own record when `env` is the calling thread's and it is registered, without
// taking a reference (the thread's own registration keeps it alive); else null. For hot paths
// such as GetThreadLocalStorage, which agents call on every event.
ThreadRecord* self(JNIEnv* env);

// The record of the thread object `thread`, or null.
ThreadRecordPtr find_by_object(JNIEnv* caller, jobject thread);

// The record of the calling thread, created on first sight. `thread` may be null (looked up).
// `created` tells whether this call created it.
ThreadRecordPtr current(JNIEnv* env, jthread thread = nullptr, bool* created = nullptr);

void remove(JNIEnv* env);

std::vector<ThreadRecordPtr> all();

// Registers a thread the runtime has not seen start (it ran before an attach), from another
// thread: its JNIEnv, Thread object and OS thread id found by the caller. Returns the record
// (the existing one when the thread was known already), or null when `thread` is null.
ThreadRecordPtr adopt(JNIEnv* caller, jthread thread, JNIEnv* env, pid_t tid);

// Takes every record out of the registry (a detach): each is marked retired and released as its
// last holder drops it.
void retire_all();

}  // namespace threads
}  // namespace jvmpi
