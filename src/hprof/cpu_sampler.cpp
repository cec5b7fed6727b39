#include "cpu_sampler.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "jvmpi_client.h"

namespace hprof::agent {
namespace {

CpuSampler* g_sampler = nullptr;  // the thread function gets no argument of its own

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
  // The runtime's samples wait in a ring of fixed size; draining every 10 to 100 ms keeps it far
  // from full at any interval.
  const int wait_ms = cpu_time_ ? std::clamp(options_.interval_ms, 10, 100) : options_.interval_ms;
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
