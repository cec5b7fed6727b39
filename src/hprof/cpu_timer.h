// cpu=times (and cpu=old): exact call counts and times per trace from METHOD_ENTRY/METHOD_EXIT.
// Each thread keeps a shadow stack of the methods it is in, with the thread CPU time at entry, so
// time a thread spends off the CPU (blocked, sleeping, waiting) is not charged. A method's self
// time is its time minus its callees'. Costs are gathered per thread, without a shared lock, and
// merged when a report is written.
#pragma once

#include <jvmpi.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "cost_table.h"
#include "options.h"
#include "tables.h"

namespace hprof::agent {

class CpuTimer {
 public:
  CpuTimer(const Options& options, ThreadTable& threads, TraceTable& traces)
      : options_(options), threads_(threads), traces_(traces) {}

  void on_entry(JNIEnv* env, jmethodID method);
  void on_exit(JNIEnv* env, jmethodID method);
  void on_thread_end(JNIEnv* env);
  // Costs so far: self time per trace (cpu=times), or time including callees (cpu=old).
  std::vector<Cost> costs(bool inclusive);
  void clear();

 private:
  struct Activation {
    jmethodID method;
    uint64_t start_ns;
    uint64_t callee_ns = 0;
  };
  struct Totals {
    uint64_t calls = 0;
    uint64_t self_ns = 0;
    uint64_t inclusive_ns = 0;
  };
  struct ThreadCosts {
    std::vector<Activation> stack;
    std::mutex mutex;  // the costs, read by whoever writes a report
    std::unordered_map<unsigned, Totals> by_trace;
  };

  ThreadCosts* costs_of(JNIEnv* env);

  const Options& options_;
  ThreadTable& threads_;
  TraceTable& traces_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<ThreadCosts>> all_;  // every thread's, kept for reports
  std::unordered_map<unsigned, Totals> ended_;     // merged from threads that ended
};

}  // namespace hprof::agent
