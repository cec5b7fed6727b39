// SPDX-License-Identifier: Apache-2.0
#include "cpu_sampler.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "jvmpi_client.h"

namespace hprof::agent {
namespace {

CpuSampler* g_sampler = nullptr;  // the thread function gets no argument of its own

// The pseudo methods of unwalkable samples: one per failure kind, told apart by address (never a
// real jmethodID), named in the class table when first used.
char g_unwalkable_method[JVMPI_EXT_FAIL_KINDS];

// Whether a failure kind means the thread was in Java code the walker could not read (rather than
// in the VM, in native code or at a safepoint).
bool in_java(jint kind) {
  return kind == JVMPI_EXT_FAIL_UNKNOWN_JAVA || kind == JVMPI_EXT_FAIL_NOT_WALKABLE_JAVA ||
         kind == JVMPI_EXT_FAIL_DEOPT || kind == JVMPI_EXT_FAIL_OTHER_CODE;
}

bool is_runnable(jint status) {
  return (status & ~(JVMPI_THREAD_SUSPENDED | JVMPI_THREAD_INTERRUPTED)) == JVMPI_THREAD_RUNNABLE;
}

}  // namespace

bool CpuSampler::start() {
  if (options_.depth == 0) return true;  // empty traces: nothing to charge
  lock_ = jvmpi()->RawMonitorCreate(const_cast<char*>("_hprof cpu sampler"));
  g_sampler = this;
  if (options_.sampler == SamplerKind::kCpuTime) {
    JVMPI_ExtInterface* ext = jvmpi_ext();
    const jlong interval_ns = static_cast<jlong>(options_.interval_ms) * 1000000;
    // Signals that found no Java stack come too, to be counted under a frame that says so.
    if (ext != nullptr && JVMPI_EXT_HAS(ext, SetCpuSamplingOptions)) {
      ext->SetCpuSamplingOptions(JVMPI_EXT_CPU_UNWALKABLE_SAMPLES);
    }
    cpu_time_ =
        ext != nullptr && ext->StartCpuSampling(interval_ns, options_.depth) == JVMPI_SUCCESS;
    if (!cpu_time_) {
      std::fprintf(stderr,
                   "hprof: warning: CPU-time sampling is not available here; using "
                   "sampler=suspend\n");
    }
  }
  {
    RawLock lock(lock_);
    running_ = true;
  }
  if (jvmpi()->CreateSystemThread(const_cast<char*>(kThreadName), JVMPI_MAXIMUM_PRIORITY,
                                  thread_main) != JNI_OK) {
    RawLock lock(lock_);
    running_ = false;
    return false;
  }
  return true;
}

void CpuSampler::stop() {
  if (lock_ == nullptr) return;
  RawLock lock(lock_);
  stopping_ = true;
  jvmpi()->RawMonitorNotifyAll(lock_);
  // Bounded: the sampler finishes its round within one interval unless the VM is stuck.
  for (int i = 0; i < 100 && running_; ++i) jvmpi()->RawMonitorWait(lock_, 50);
}

void CpuSampler::thread_main(void* arg) {
  (void)arg;
  g_sampler->run();
}

void CpuSampler::run() {
  JNIEnv* self = nullptr;
  for (const auto& [env, info] : threads_.live()) {
    if (info.name == kThreadName) self = env;
  }
  self_ = self;
  // The runtime's samples wait in a ring of 2048: draining every 10 intervals (10 to 100 ms) keeps
  // it far from full (at most 10 samples per busy CPU a round) and wakes this thread no more than
  // 10 times a second at the default 10 ms; every wake-up costs a timed wait and a drain.
  const int wait_ms =
      cpu_time_ ? std::clamp(10 * options_.interval_ms, 10, 100) : options_.interval_ms;
  for (;;) {
    {
      RawLock lock(lock_);
      if (!stopping_) jvmpi()->RawMonitorWait(lock_, wait_ms);
      if (stopping_) {
        // The runtime stopped its timers before JVM_SHUT_DOWN: what is left is the last samples.
        if (cpu_time_) drain();
        running_ = false;
        jvmpi()->RawMonitorNotifyAll(lock_);
        return;
      }
    }
    if (cpu_time_) {
      drain();
    } else if (enabled_.load()) {
      sample_round(self);
    }
  }
}

void CpuSampler::depth_changed() {
  if (!cpu_time_ || options_.depth <= 0) return;
  JVMPI_ExtInterface* ext = jvmpi_ext();
  if (JVMPI_EXT_HAS(ext, SetCpuSamplingDepth)) {
    ext->SetCpuSamplingDepth(std::min(options_.depth, 128));
  }
}

CpuSampler::Counts CpuSampler::counts() const {
  Counts c;
  if (!cpu_time_) return c;
  JVMPIExt_CpuSamplingStats s{};
  if (jvmpi_ext()->GetCpuSamplingStats(&s, sizeof s) != JVMPI_SUCCESS) return c;
  c.valid = true;
  c.signals = s.signals;
  c.taken = s.samples_taken;
  c.recovered = s.recovered;
  c.lost = s.failures[JVMPI_EXT_FAIL_NO_ENV] + s.failures[JVMPI_EXT_FAIL_BUFFER_FULL];
  for (jlong f : s.failures) c.unattributable += f;
  c.unattributable -= c.lost;
  return c;
}

unsigned CpuSampler::unwalkable_trace(jint failure_kind, unsigned thread) {
  if (failure_kind < 0 || failure_kind >= JVMPI_EXT_FAIL_KINDS) {
    failure_kind = JVMPI_EXT_FAIL_OTHER_CODE;
  }
  auto* method = reinterpret_cast<jmethodID>(&g_unwalkable_method[failure_kind]);
  if (classes_.method(method).name.empty()) {
    MethodInfo m;
    m.class_name = in_java(failure_kind) ? "<unknown Java frame>" : "<in VM code>";
    const char* why = jvmpi_ext()->CpuSamplingFailureName(failure_kind);
    m.name = why != nullptr ? why : "unknown";
    m.signature = "()V";
    classes_.add_pseudo_method(method, m);
  }
  const JVMPI_CallFrame frame{-1, method};
  return traces_.intern(&frame, 1, thread);
}

void CpuSampler::drain() {
  jvmpi_ext()->DrainCpuSamples(on_samples, this);
}

void JNICALL CpuSampler::on_samples(void* arg, const JVMPIExt_CpuSample* samples, jint count) {
  auto* self = static_cast<CpuSampler*>(arg);
  if (!self->enabled_.load()) return;  // sampling off (net= CONTROL): the samples are dropped
  const jlong interval_ns = static_cast<jlong>(self->options_.interval_ms) * 1000000;
  for (jint i = 0; i < count; ++i) {
    const JVMPIExt_CpuSample& s = samples[i];
    if (s.trace.env_id == self->self_) continue;  // HPROF's own draining
    unsigned thread = 0;
    if (self->options_.thread_in_traces) {
      thread = self->threads_.serial_of(s.trace.env_id);
      if (thread == kUnknownThreadSerial) thread = 0;
    }
    // A signal that stood for several intervals of CPU (the timer fires at the scheduler's tick)
    // counts as that many samples, so counts stay proportional to CPU time.
    const auto weight =
        static_cast<uint64_t>(std::max<jlong>(1, (s.cpu_time + interval_ns / 2) / interval_ns));
    if (s.trace.num_frames <= 0) {
      // No Java stack (JVMPI_EXT_CPU_UNWALKABLE_SAMPLES): frames[0].lineno is why.
      self->costs_.add(self->unwalkable_trace(s.trace.frames[0].lineno, thread), weight, 0);
      continue;
    }
    const int depth = std::min(s.trace.num_frames, static_cast<jint>(self->options_.depth));
    self->costs_.add(self->traces_.intern(s.trace.frames, depth, thread), weight, 0);
  }
}

void CpuSampler::sample_round(JNIEnv* self) {
  std::vector<JVMPI_CallFrame> frames(static_cast<size_t>(options_.depth));
  for (const auto& [env, info] : threads_.live()) {
    if (env == self || !info.alive || info.name.rfind("HPROF ", 0) == 0) continue;
    if (!is_runnable(jvmpi()->GetThreadStatus(env))) continue;
    jvmpi()->SuspendThread(env);
    if (jvmpi()->ThreadHasRun(env)) {
      JVMPI_CallTrace trace{env, 0, frames.data()};
      jvmpi()->GetCallTrace(&trace, options_.depth);
      if (trace.num_frames > 0) {
        const unsigned thread = options_.thread_in_traces ? info.serial : 0;
        costs_.add(traces_.intern(frames.data(), trace.num_frames, thread), 1, 0);
      }
    }
    jvmpi()->ResumeThread(env);
  }
}

}  // namespace hprof::agent
