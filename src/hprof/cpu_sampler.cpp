#include "cpu_sampler.h"

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
  for (;;) {
    {
      RawLock lock(lock_);
      if (!stopping_) jvmpi()->RawMonitorWait(lock_, options_.interval_ms);
      if (stopping_) {
        running_ = false;
        jvmpi()->RawMonitorNotifyAll(lock_);
        return;
      }
    }
    if (enabled_.load()) sample_round(self);
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
