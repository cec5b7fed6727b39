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
  // Interned trace serials remembered per thread: a two-way set-associative memo keyed by the
  // trace's frames and thread. Slot i's frames are methods[i * width .. i * width + count).
  static constexpr size_t kMemoDepth = 8;  // deeper traces are interned every time
  static constexpr unsigned kMemoBits = 11;
  struct MemoSlot {
    unsigned count;
    unsigned thread;
    unsigned trace;  // 0 (never a serial): empty
  };
  struct Memo {
    size_t width = 0;
    std::unique_ptr<MemoSlot[]> slots;
    std::unique_ptr<jmethodID[]> methods;
  };
  struct ThreadCosts {
    std::vector<Activation> stack;
    Memo memo;                            // made at the thread's first exit
    std::vector<JVMPI_CallFrame> frames;  // scratch for traces deeper than kMemoDepth
    unsigned thread_serial = 0;           // once known (0 is never a thread serial)
    std::mutex mutex;                     // the costs, read by whoever writes a report
    std::unordered_map<unsigned, Totals> by_trace;
  };
  ThreadCosts* costs_of(JNIEnv* env);
  unsigned thread_serial(ThreadCosts& t, JNIEnv* env);
  unsigned trace_of(ThreadCosts& t, JNIEnv* env, size_t size);

  const Options& options_;
  ThreadTable& threads_;
  TraceTable& traces_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<ThreadCosts>> all_;  // every thread's, kept for reports
  std::unordered_map<unsigned, Totals> ended_;     // merged from threads that ended
};

}  // namespace hprof::agent
