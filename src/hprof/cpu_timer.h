// cpu=times (and cpu=old): exact call counts and times per trace from METHOD_ENTRY/METHOD_EXIT.
// Each thread keeps a shadow stack of the methods it is in, with the thread's CPU time at entry
// (estimated without a system call per event, see cpu_clock.h), so time a thread spends off the
// CPU (blocked, sleeping, waiting) is not charged. A method's self
// time is its time minus its callees'. Costs are gathered per thread, without a shared lock, and
// merged when a report is written.
#pragma once

#include <jvmpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "cost_table.h"
#include "cpu_clock.h"
#include "options.h"
#include "tables.h"

namespace hprof::agent {

class CpuTimer {
 public:
  // `wall`: the monotonic clock intervals are timed with (tests pass their own).
  CpuTimer(const Options& options, ThreadTable& threads, TraceTable& traces,
           CpuClock::Clock wall = monotonic_ns)
      : options_(options), threads_(threads), traces_(traces), wall_(wall) {}

  void on_entry(JNIEnv* env, jmethodID method);
  void on_exit(JNIEnv* env, jmethodID method);
  void on_thread_end(JNIEnv* env);
  // Costs so far: self time per trace (cpu=times), or time including callees (cpu=old).
  std::vector<Cost> costs(bool inclusive);
  void clear();

  // Method events timed, and how often the thread CPU clock was read for them.
  struct ClockUse {
    uint64_t events = 0;
    uint64_t cpu_clock_reads = 0;
  };
  ClockUse clock_use();

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
    explicit ThreadCosts(CpuClock::Clock wall);
    CpuClock clock;
    std::atomic<uint64_t> events{0};  // written by the thread only, read by reports
    std::atomic<uint64_t> reads{0};
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
  static uint64_t cpu_now(ThreadCosts& t);

  const Options& options_;
  ThreadTable& threads_;
  TraceTable& traces_;
  CpuClock::Clock wall_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<ThreadCosts>> all_;  // every thread's, kept for reports
  std::unordered_map<unsigned, Totals> ended_;     // merged from threads that ended
  ClockUse ended_clock_use_;
};

}  // namespace hprof::agent
