// SPDX-License-Identifier: Apache-2.0
#include "cpu_sampling.h"

#include <dlfcn.h>
#include <jvmpi.h>
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "block_arena.h"
#include "code_ranges.h"
#include "cpu_timers.h"
#include "frame_anchor.h"
#include "jvmti_access.h"
#include "known_methods.h"
#include "line_numbers.h"
#include "log.h"
#include "sample_ring.h"
#include "stub_recovery.h"
#include "thread_registry.h"
#include "vm_thread_stack.h"

namespace jvmpi::cpu_sampling {
namespace {

// HotSpot's AsyncGetCallTrace takes a trace laid out exactly as JVMPI_CallTrace (env, frame
// count, frames of {line-or-bci, method}): it was JVMPI's GetCallTrace made callable from a
// signal handler. It stores bytecode indexes where JVMPI has lines (-3 for native frames) and a
// negative frame count when it could not walk the stack.
using AsyncGetCallTrace = stub_recovery::AsyncGetCallTrace;
constexpr jint kAgctNativeFrame = -3;

constexpr int kSignal = SIGPROF;
constexpr uint32_t kRingCapacity = 2048;  // ~1 s of samples of two busy threads at 1 ms
constexpr size_t kBatch = 64;

// What one thread drains the ring into: kBatch samples and their frames.
struct DrainBuffers {
  BlockArena memory;
  JVMPIExt_CpuSample* batch = static_cast<JVMPIExt_CpuSample*>(
      memory.allocate(sizeof(JVMPIExt_CpuSample) * kBatch, alignof(JVMPIExt_CpuSample)));
  JVMPI_CallFrame* frames = static_cast<JVMPI_CallFrame*>(memory.allocate(
      sizeof(JVMPI_CallFrame) * kBatch * SampleRing::kMaxDepth, alignof(JVMPI_CallFrame)));
};

std::atomic<bool> g_active{false};
std::atomic<AsyncGetCallTrace> g_agct{nullptr};
// Allocated at the first start and never freed, so a signal that arrives late (pending when its
// timer was deleted) still writes into live memory; it then finds g_active false anyway.
std::atomic<SampleRing*> g_ring{nullptr};
std::atomic<jint> g_depth{0};
std::atomic<jlong> g_interval_ns{0};
std::atomic<jint> g_options{0};  // JVMPI_EXT_CPU_*
// The timer kind chosen at start (cpu_timers::choose); g_perf_required: no fallback to POSIX.
std::atomic<cpu_timers::Kind> g_timer_kind{cpu_timers::Kind::kPosixCpuClock};
std::atomic<bool> g_perf_required{false};
std::atomic<bool> g_timer_chosen{false};
// Once sampling was asked for, every prepared class gets jmethodIDs for all its methods: the
// stack walker runs in a signal handler and can only name methods whose IDs already exist.
std::atomic<bool> g_method_ids_wanted{false};

std::atomic<jlong> g_signals{0};
std::atomic<jlong> g_taken{0};
std::atomic<jlong> g_delivered{0};
std::atomic<jlong> g_threads_armed{0};
std::atomic<jlong> g_arm_failures{0};
std::atomic<jlong> g_posix_fallbacks{0};
// The CPU time (ns) the threads used while their timers were armed, summed at each disarm: what
// the signals' weights should add up to, in intervals (for the statistics line).
std::atomic<jlong> g_armed_cpu_ns{0};
std::array<std::atomic<jlong>, JVMPI_EXT_FAIL_KINDS> g_failures{};
std::atomic<jlong> g_recovered{0};
// With JVMPI_SAMPLER_STATS=2 only: the thread CPU time spent in the handler and in draining
// (copying, line lookup and the agent's handler), for the statistics line: what a sample costs in
// this process beyond the kernel's timer and signal delivery. A thread CPU clock read is a system
// call, so it is not paid otherwise.
std::atomic<bool> g_measure{false};
std::atomic<jlong> g_handler_ns{0};
std::atomic<jlong> g_drain_ns{0};
std::array<std::atomic<jlong>, JVMPI_EXT_FAIL_KINDS> g_recovered_kinds{};

std::mutex g_control_mutex;  // start and stop
bool g_handler_installed = false;
std::mutex g_drain_mutex;  // one drainer reads the ring at a time

// The calling thread's CPU time in ns when measuring, else 0. Async-signal-safe.
jlong thread_cpu_ns() {
  if (!g_measure.load(std::memory_order_relaxed)) return 0;
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<jlong>(t.tv_sec) * 1000000000LL + t.tv_nsec;
}

// The CPU time (ns) of a thread's clock, or -1.
jlong clock_ns(clockid_t clock) {
  timespec t{};
  if (clock_gettime(clock, &t) != 0) return -1;
  return static_cast<jlong>(t.tv_sec) * 1000000000LL + t.tv_nsec;
}

void count_failure(int kind) {
  g_failures[static_cast<size_t>(kind)].fetch_add(1, std::memory_order_relaxed);
}

int failure_kind(jint num_frames) {
  if (num_frames == 0) return JVMPI_EXT_FAIL_NO_JAVA_FRAME;
  if (num_frames < 0 && num_frames >= -JVMPI_EXT_FAIL_SAFEPOINT) return -num_frames;
  return JVMPI_EXT_FAIL_OTHER_CODE;
}

// The SIGPROF handler. Async-signal-safe: atomics, a thread-local-free GetEnv (a read of the VM's
// current-thread pointer), the stack walker HotSpot provides for exactly this, and a slot of a
// preallocated ring. Nothing here locks or allocates.
void on_signal(int, siginfo_t* info, void* ucontext) {
  const int saved_errno = errno;
  SampleRing* ring = g_ring.load(std::memory_order_acquire);
  AsyncGetCallTrace agct = g_agct.load(std::memory_order_acquire);
  if (g_active.load(std::memory_order_acquire) && ring != nullptr && agct != nullptr) {
    const jlong entered = thread_cpu_ns();
    g_signals.fetch_add(1, std::memory_order_relaxed);
    JavaVM* vm = java_vm();
    JNIEnv* env = nullptr;
    if (vm == nullptr || vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_6) != JNI_OK ||
        env == nullptr) {
      count_failure(JVMPI_EXT_FAIL_NO_ENV);
    } else if (SampleRing::Slot* slot = ring->claim(); slot == nullptr) {
      count_failure(JVMPI_EXT_FAIL_BUFFER_FULL);
    } else {
      JVMPI_CallTrace trace{env, 0, slot->frames};
      const jint depth = g_depth.load(std::memory_order_relaxed);
      agct(&trace, depth, ucontext);
      int failure = trace.num_frames > 0 ? 0 : failure_kind(trace.num_frames);
      if (trace.num_frames <= 0) {
        // A stub or a prologue the walker does not know: walk again from the Java caller.
        const jint found = stub_recovery::recover(agct, &trace, depth, ucontext, trace.num_frames);
        if (found > 0) {
          g_recovered.fetch_add(1, std::memory_order_relaxed);
          g_recovered_kinds[static_cast<size_t>(failure)].fetch_add(1, std::memory_order_relaxed);
          trace.num_frames = found;
        }
      }
      slot->env = env;
      slot->num_frames = trace.num_frames;
      slot->failure = failure;
      // The intervals of CPU time this signal stands for: several for a POSIX timer at the
      // scheduler's tick, or a perf event's after time in the kernel (where it takes no sample).
      slot->weight = cpu_timers::signal_weight(info, g_interval_ns.load(std::memory_order_relaxed));
      SampleRing::publish(slot);
      if (trace.num_frames > 0) {
        g_taken.fetch_add(1, std::memory_order_relaxed);
      } else {
        count_failure(failure);
      }
    }
    g_handler_ns.fetch_add(thread_cpu_ns() - entered, std::memory_order_relaxed);
  }
  errno = saved_errno;
}

bool install_handler() {
  if (g_handler_installed) return true;
  struct sigaction old {};
  if (sigaction(kSignal, nullptr, &old) != 0) return false;
  const bool has_other = (old.sa_flags & SA_SIGINFO) != 0
                             ? old.sa_sigaction != nullptr && old.sa_sigaction != on_signal
                             : old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN;
  if (has_other) {
    log_error("SIGPROF already has a handler (another profiler?); CPU-time sampling is off");
    return false;
  }
  struct sigaction action {};
  action.sa_sigaction = on_signal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  // Never uninstalled: a signal still pending when sampling stops must not meet the default
  // action, which would end the process.
  if (sigaction(kSignal, &action, nullptr) != 0) return false;
  g_handler_installed = true;
  return true;
}

// Arms the thread's CPU-time timer: its perf event when perf events are in use (opened at the
// first arming, resumed at later ones), else, or when the kernel refuses the event, a POSIX timer.
// Caller holds record.sampling_mutex.
void arm(ThreadRecord& record) {
  if (record.cpu_timer_armed || record.sampling_ended || record.internal || record.tid == 0) {
    return;
  }
  const jlong interval = g_interval_ns.load();
  if (cpu_timers::is_perf(g_timer_kind.load())) {
    if (record.perf_fd < 0) {
      record.perf_fd = cpu_timers::perf_open(record.tid, kSignal, interval);
      record.cpu_timer_is_perf = record.perf_fd >= 0;
    } else {
      record.cpu_timer_is_perf = cpu_timers::perf_resume(record.perf_fd, interval);
    }
    if (record.cpu_timer_is_perf) {
      record.cpu_timer_armed = true;
      record.cpu_at_arm = clock_ns(record.cpu_clock);
      g_threads_armed.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    if (g_perf_required.load()) {
      g_arm_failures.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    g_posix_fallbacks.fetch_add(1, std::memory_order_relaxed);
  }
  timer_t timer{};
  if (!cpu_timers::posix_create(record.cpu_clock, record.tid, kSignal, interval, &timer)) {
    g_arm_failures.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  record.cpu_timer = timer;
  record.cpu_timer_armed = true;
  record.cpu_at_arm = clock_ns(record.cpu_clock);
  g_threads_armed.fetch_add(1, std::memory_order_relaxed);
}

// Caller holds record.sampling_mutex. A perf event is only paused: it may be closed on its own
// thread only (cpu_timers.h), at the thread's end.
void disarm(ThreadRecord& record) {
  if (!record.cpu_timer_armed) return;
  if (const jlong now = clock_ns(record.cpu_clock); now >= 0 && record.cpu_at_arm >= 0) {
    g_armed_cpu_ns.fetch_add(now - record.cpu_at_arm, std::memory_order_relaxed);
  }
  record.cpu_at_arm = -1;
  if (record.cpu_timer_is_perf) {
    cpu_timers::perf_pause(record.perf_fd);
  } else {
    timer_delete(record.cpu_timer);
  }
  record.cpu_timer_armed = false;
}

void create_method_ids(jclass klass) {
  jint count = 0;
  JvmtiPtr<jmethodID> methods;
  (void)jvmti()->GetClassMethods(klass, &count, methods.out());
}

void create_all_method_ids(JNIEnv* jni) {
  jint count = 0;
  JvmtiPtr<jclass> classes;
  if (!jvmti_ok(jvmti()->GetLoadedClasses(&count, classes.out()), "GetLoadedClasses")) return;
  for (jint i = 0; i < count; ++i) {
    create_method_ids(classes[i]);
    jni->DeleteLocalRef(classes[i]);
  }
}

jint line_of_frame(const JVMPI_CallFrame& frame) {
  if (frame.method_id == nullptr) return line_numbers::kUnknownLine;
  if (frame.lineno == kAgctNativeFrame) return line_numbers::kNativeMethod;
  if (frame.lineno < 0) return line_numbers::kUnknownLine;
  return line_numbers::line_of(frame.method_id, frame.lineno);
}

}  // namespace

jint JNICALL start(jlong interval_ns, jint max_depth) {
  if (interval_ns < 100000 || interval_ns > 10000000000LL || max_depth <= 0) return JVMPI_FAIL;
  JNIEnv* jni = current_jni_env();
  if (jni == nullptr || current_phase() != JVMTI_PHASE_LIVE) return JVMPI_NOT_AVAILABLE;
  std::lock_guard lock(g_control_mutex);
  if (g_active.load()) return JVMPI_FAIL;
  if (g_agct.load() == nullptr) {
    auto agct = reinterpret_cast<AsyncGetCallTrace>(dlsym(RTLD_DEFAULT, "AsyncGetCallTrace"));
    if (agct == nullptr) {
      log_error("this VM exports no AsyncGetCallTrace; CPU-time sampling is not available");
      return JVMPI_NOT_AVAILABLE;
    }
    g_agct.store(agct);
  }
  if (!install_handler()) return JVMPI_NOT_AVAILABLE;
  if (!g_timer_chosen.load()) {
    // Once per process, for the first interval: threads keep the perf events they opened across
    // stop and start.
    bool required = false;
    const cpu_timers::Kind kind = cpu_timers::choose(interval_ns, &required);
    if (required && !cpu_timers::is_perf(kind)) {
      log_error("JVMPI_SAMPLER_TIMER asks for perf events, but this kernel refuses them (%s)",
                "perf_event_paranoid, seccomp or no CONFIG_PERF_EVENTS");
      return JVMPI_NOT_AVAILABLE;
    }
    g_timer_kind.store(kind);
    g_perf_required.store(required);
    g_timer_chosen.store(true);
  }
  if (g_ring.load() == nullptr) g_ring.store(new SampleRing(kRingCapacity));
  // The walker answers "no class load" unless ClassLoad events are on, whoever consumes them.
  if (!jvmti_ok(jvmti()->SetEventNotificationMode(JVMTI_ENABLE, JVMTI_EVENT_CLASS_LOAD, nullptr),
                "SetEventNotificationMode(ClassLoad)")) {
    return JVMPI_NOT_AVAILABLE;
  }
  g_method_ids_wanted.store(true);
  create_all_method_ids(jni);
  // Where the stubs and compiled methods lie, for the samples the walker cannot take there.
  code_ranges::start_recording();
  stub_recovery::note_current_thread_stack();  // the thread that starts it had no ThreadStart
  if (!frame_anchor::init(jni)) {
    log_warning(
        "this VM does not describe its frame anchors; samples in VM code called from "
        "stubs stay unattributable");
  } else if (!vm_thread_stack::init()) {
    log_warning(
        "this VM does not describe its threads' stacks; samples in stubs of threads that ran "
        "before the attach stay unattributable");
  }
  const char* stats_wanted = std::getenv("JVMPI_SAMPLER_STATS");
  g_measure.store(stats_wanted != nullptr && std::strcmp(stats_wanted, "2") == 0);
  g_depth.store(std::min(max_depth, static_cast<jint>(SampleRing::kMaxDepth)));
  g_interval_ns.store(interval_ns);
  // Active first, then the sweep: a thread starting meanwhile either is in the sweep or sees
  // sampling on and arms itself (the armed flag keeps it to one timer).
  g_active.store(true);
  for (const ThreadRecordPtr& record : threads::all()) {
    std::lock_guard record_lock(record->sampling_mutex);
    arm(*record);
  }
  return JVMPI_SUCCESS;
}

jint JNICALL stop() {
  std::lock_guard lock(g_control_mutex);
  g_active.store(false);
  for (const ThreadRecordPtr& record : threads::all()) {
    std::lock_guard record_lock(record->sampling_mutex);
    disarm(*record);
  }
  return JVMPI_SUCCESS;
}

jint JNICALL drain(JVMPIExt_CpuSampleHandler handler, void* arg) {
  SampleRing* ring = g_ring.load(std::memory_order_acquire);
  if (handler == nullptr || ring == nullptr) return 0;
  const jlong interval = g_interval_ns.load();
  const bool unwalkable = (g_options.load() & JVMPI_EXT_CPU_UNWALKABLE_SAMPLES) != 0;
  const jlong entered = thread_cpu_ns();
  // Kept per draining thread: 128 KiB of frames, which a fresh vector would map, zero (a page
  // fault per page) and unmap again at every drain. Mapped, not malloc'ed: freed when the thread
  // ends, they would stay resident in the glibc arena it used (an arena other than the main one
  // keeps its top chunk below glibc's trim threshold), a new arena for each session's sampler.
  thread_local DrainBuffers buffers;
  JVMPIExt_CpuSample* const batch = buffers.batch;
  JVMPI_CallFrame* const frames = buffers.frames;
  if (batch == nullptr || frames == nullptr) return 0;  // the kernel refused the memory
  jint total = 0;
  for (;;) {
    size_t n = 0;
    {
      std::lock_guard lock(g_drain_mutex);
      while (n < kBatch) {
        SampleRing::Slot* slot = ring->peek();
        if (slot == nullptr) break;
        if (slot->num_frames > 0) {
          JVMPI_CallFrame* out = &frames[n * SampleRing::kMaxDepth];
          std::copy_n(slot->frames, slot->num_frames, out);
          batch[n] =
              JVMPIExt_CpuSample{{slot->env, slot->num_frames, out}, interval * slot->weight};
          ++n;
        } else if (unwalkable) {
          // Counted where the agent can see it: no frames, the failure kind in frames[0].
          JVMPI_CallFrame* out = &frames[n * SampleRing::kMaxDepth];
          out[0] = JVMPI_CallFrame{slot->failure, nullptr};
          batch[n] = JVMPIExt_CpuSample{{slot->env, 0, out}, interval * slot->weight};
          ++n;
        }
        ring->release(slot);
      }
    }
    if (n == 0) break;
    // Lines are looked up here, outside the handler, where JVMTI may be called; so is the method
    // an agent knows for a frame still running an obsolete version (after the line, which the
    // obsolete version's bytecode index gives).
    for (size_t i = 0; i < n; ++i) {
      for (jint f = 0; f < batch[i].trace.num_frames; ++f) {
        JVMPI_CallFrame& frame = batch[i].trace.frames[f];
        frame.lineno = line_of_frame(frame);
        frame.method_id = known_methods::known_id(frame.method_id);
      }
    }
    handler(arg, batch, static_cast<jint>(n));
    total += static_cast<jint>(n);
    g_delivered.fetch_add(static_cast<jlong>(n), std::memory_order_relaxed);
  }
  g_drain_ns.fetch_add(thread_cpu_ns() - entered, std::memory_order_relaxed);
  return total;
}

jint JNICALL stats(JVMPIExt_CpuSamplingStats* out, jint size) {
  if (out == nullptr || size <= 0) return JVMPI_FAIL;
  JVMPIExt_CpuSamplingStats s{};
  s.signals = g_signals.load();
  s.samples_taken = g_taken.load();
  s.samples_delivered = g_delivered.load();
  s.threads_armed = g_threads_armed.load();
  s.arm_failures = g_arm_failures.load();
  switch (!g_timer_chosen.load() ? cpu_timers::Kind::kPosixCpuClock : g_timer_kind.load()) {
    case cpu_timers::Kind::kPerfUserTaskClock:
      s.timer = JVMPI_EXT_TIMER_PERF;
      break;
    case cpu_timers::Kind::kPerfKernelTaskClock:
      s.timer = JVMPI_EXT_TIMER_PERF_KERNEL;
      break;
    case cpu_timers::Kind::kPosixCpuClock:
      s.timer = g_timer_chosen.load() ? JVMPI_EXT_TIMER_POSIX : JVMPI_EXT_TIMER_NONE;
      break;
  }
  s.posix_fallbacks = g_posix_fallbacks.load();
  for (size_t i = 0; i < g_failures.size(); ++i) s.failures[i] = g_failures[i].load();
  s.recovered = g_recovered.load();
  for (size_t i = 0; i < g_recovered_kinds.size(); ++i) {
    s.recovered_kinds[i] = g_recovered_kinds[i].load();
  }
  std::copy_n(reinterpret_cast<const char*>(&s), std::min<size_t>(sizeof s, size),
              reinterpret_cast<char*>(out));
  return JVMPI_SUCCESS;
}

const char* JNICALL failure_name(jint kind) {
  static constexpr const char* kNames[JVMPI_EXT_FAIL_KINDS] = {"no_java_frame",
                                                               "no_class_load",
                                                               "gc_active",
                                                               "unknown_not_java",
                                                               "not_walkable_not_java",
                                                               "unknown_java",
                                                               "not_walkable_java",
                                                               "unknown_state",
                                                               "thread_exit",
                                                               "deopt",
                                                               "safepoint",
                                                               "other_code",
                                                               "no_env",
                                                               "buffer_full"};
  return kind >= 0 && kind < JVMPI_EXT_FAIL_KINDS ? kNames[kind] : nullptr;
}

jint JNICALL set_options(jint options) {
  if ((options & ~JVMPI_EXT_CPU_UNWALKABLE_SAMPLES) != 0) return JVMPI_FAIL;
  g_options.store(options);
  return JVMPI_SUCCESS;
}

jint JNICALL set_depth(jint max_depth) {
  if (max_depth <= 0 || max_depth > SampleRing::kMaxDepth) return JVMPI_FAIL;
  g_depth.store(max_depth);
  return JVMPI_SUCCESS;
}

void release_timers() {
  std::lock_guard lock(g_control_mutex);
  for (const ThreadRecordPtr& record : threads::all()) {
    std::lock_guard record_lock(record->sampling_mutex);
    disarm(*record);
    // Closed here rather than on each thread (which may never call into the runtime again): with
    // sampling inactive, a signal still pending returns from the handler before it reads an event.
    cpu_timers::perf_close(record->perf_fd);
    record->perf_fd = -1;
  }
}

void on_thread_start(JNIEnv* jni) {
  // Every thread, sampled or not yet: sampling may start later, and only the thread itself can
  // find its stack.
  stub_recovery::note_current_thread_stack();
  if (!g_active.load()) return;
  ThreadRecordPtr record = threads::find(jni);
  if (record == nullptr) return;
  std::lock_guard lock(record->sampling_mutex);
  if (g_active.load()) arm(*record);
}

void on_thread_end(JNIEnv* jni) {
  ThreadRecordPtr record = threads::find(jni);
  if (record == nullptr) return;
  std::lock_guard lock(record->sampling_mutex);
  record->sampling_ended = true;
  disarm(*record);
  // On the thread itself: no signal of its event can be pending or in its handler now.
  cpu_timers::perf_close(record->perf_fd);
  record->perf_fd = -1;
}

void on_class_prepare(jclass klass) {
  if (g_method_ids_wanted.load(std::memory_order_relaxed)) create_method_ids(klass);
}

void JNICALL on_class_load(jvmtiEnv*, JNIEnv*, jthread, jclass) {
  // Only enabled for the stack walker's sake (see start); methods get IDs at ClassPrepare.
}

void on_vm_death() {
  stop();
}

void report_stats() {
  // For benchmarks and diagnosis: what the sampler did, in one line.
  if (const char* want = std::getenv("JVMPI_SAMPLER_STATS");
      want != nullptr && (*want == '1' || *want == '2') && g_ring.load() != nullptr) {
    JVMPIExt_CpuSamplingStats s{};
    stats(&s, sizeof s);
    // Appended piece by piece: " " + string makes GCC 12 at -O3 warn (a false -Wrestrict).
    std::string failures;
    if (s.posix_fallbacks != 0) {
      failures += " posix_fallbacks=";
      failures += std::to_string(s.posix_fallbacks);
    }
    for (int k = 0; k < JVMPI_EXT_FAIL_KINDS; ++k) {
      if (s.failures[k] == 0) continue;
      failures += ' ';
      failures += failure_name(k);
      failures += '=';
      failures += std::to_string(s.failures[k]);
    }
    if (g_measure.load()) {
      // Mean thread CPU ns per signal in the handler, and per delivered sample in draining
      // (drains that found nothing included).
      failures += " handler_ns=";
      failures += std::to_string(s.signals > 0 ? g_handler_ns.load() / s.signals : 0);
      failures += " drain_ns=";
      failures +=
          std::to_string(s.samples_delivered > 0 ? g_drain_ns.load() / s.samples_delivered : 0);
    }
    std::fprintf(stderr,
                 "jvmpi: cpu sampler: timer=%s signals=%lld taken=%lld recovered=%lld "
                 "delivered=%lld threads=%lld arm_failures=%lld armed_cpu_ms=%lld%s\n",
                 cpu_timers::name(g_timer_kind.load()), static_cast<long long>(s.signals),
                 static_cast<long long>(s.samples_taken), static_cast<long long>(s.recovered),
                 static_cast<long long>(s.samples_delivered),
                 static_cast<long long>(s.threads_armed), static_cast<long long>(s.arm_failures),
                 static_cast<long long>(g_armed_cpu_ns.load() / 1000000), failures.c_str());
  }
}

}  // namespace jvmpi::cpu_sampling
