// cpu=samples. By default (sampler=cputime) the JVMPI runtime's CPU-time sampler (jvmpi_ext.h)
// takes a sample each time a thread has used `interval` ms of CPU, where the thread is, and this
// class's thread drains them into the CPU SAMPLES table. With sampler=suspend it is the paper's
// thread-aware sampling: a system thread wakes every `interval` ms and, for each thread that is
// runnable, suspends it, and if it really ran on a CPU since its last sample (ThreadHasRun),
// charges one sample to its current trace. Blocked, waiting and sleeping threads are skipped
// without being suspended.
#pragma once

#include <jvmpi.h>
#include <jvmpi_ext.h>

#include <atomic>

#include "cost_table.h"
#include "options.h"
#include "tables.h"

namespace hprof::agent {

class CpuSampler {
 public:
  CpuSampler(const Options& options, ThreadTable& threads, TraceTable& traces, CostTable& costs)
      : options_(options), threads_(threads), traces_(traces), costs_(costs) {}

  // Starts the sampling thread (after JVM_INIT_DONE). Returns false if it could not be created.
  bool start();
  // Stops sampling; returns once the thread has finished its current round.
  void stop();
  // Sampling on or off (the net= CONTROL commands); on by default.
  void set_enabled(bool on) { enabled_.store(on); }
  static constexpr const char* kThreadName = "HPROF cpu sampler";

 private:
  static void thread_main(void* arg);
  void run();
  void sample_round(JNIEnv* self);
  // sampler=cputime: takes the runtime's samples (on this class's thread).
  void drain();
  static void JNICALL on_samples(void* arg, const JVMPIExt_CpuSample* samples, jint count);

  const Options& options_;
  ThreadTable& threads_;
  TraceTable& traces_;
  CostTable& costs_;
  JVMPI_RawMonitor lock_ = nullptr;
  std::atomic<bool> enabled_{true};
  bool cpu_time_ = false;  // the runtime's CPU-time sampler delivers the samples
  JNIEnv* self_ = nullptr;
  bool stopping_ = false;  // guarded by lock_
  bool running_ = false;   // guarded by lock_
};

}  // namespace hprof::agent
