// SPDX-License-Identifier: Apache-2.0
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
  CpuSampler(const Options& options, ClassTable& classes, ThreadTable& threads, TraceTable& traces,
             CostTable& costs)
      : options_(options), classes_(classes), threads_(threads), traces_(traces), costs_(costs) {}

  // Starts the sampling thread (after JVM_INIT_DONE). Returns false if it could not be created.
  bool start();
  // Stops sampling; returns once the thread has finished its current round.
  void stop();
  // Sampling on or off (the net= CONTROL commands); on by default.
  void set_enabled(bool on) { enabled_.store(on); }
  // The stack depth changed (the net= CONTROL command "set depth"): the runtime's sampler records
  // that many frames from its next signal on (sampler=suspend reads options_.depth each round).
  void depth_changed();

  // What the runtime's CPU-time sampler did (sampler=cputime only; `valid` false otherwise), for
  // the CPU SAMPLES header: every signal either gave a Java stack (taken; `recovered` of them only
  // after stepping out of a stub), or is counted under an <unknown Java frame> or <in VM code>
  // trace (unattributable), or could not be recorded at all (lost: no room in the runtime's
  // buffer, or a thread unknown to the VM).
  struct Counts {
    bool valid = false;
    long long signals = 0, taken = 0, recovered = 0, unattributable = 0, lost = 0;
  };
  Counts counts() const;
  static constexpr const char* kThreadName = "HPROF cpu sampler";

 private:
  static void thread_main(void* arg);
  void run();
  void sample_round(JNIEnv* self);
  // sampler=cputime: takes the runtime's samples (on this class's thread).
  void drain();
  static void JNICALL on_samples(void* arg, const JVMPIExt_CpuSample* samples, jint count);
  // The one-frame trace an unwalkable sample is charged to, named after its failure kind.
  unsigned unwalkable_trace(jint failure_kind, unsigned thread);

  const Options& options_;
  ClassTable& classes_;
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
