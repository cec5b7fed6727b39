// SPDX-License-Identifier: Apache-2.0
// cpu=times (and cpu=old): exact call counts and times per trace from METHOD_ENTRY/METHOD_EXIT.
// Each thread keeps a shadow stack of the methods it is in, with the thread's CPU time at entry
// (estimated without a system call per event, see cpu_clock.h), so time a thread spends off the
// CPU (blocked, sleeping, waiting) is not charged. A method's self time is its time minus its
// callees'.
//
// Every event is on the hot path of the profiled program, so the per-event work is a few loads
// and stores: each thread keeps one node per trace it has been in (the trace's methods, its
// serial, and its calls and times), and a table of moves "from the node of the caller's trace,
// entering method m, to the node of the callee's trace". An entry finds its node with one probe of
// that table, an exit charges the node its activation recorded; the trace table's lock is taken
// only when a thread meets a trace for the first time. Nodes are per thread and written by their
// thread only; reports read them under the thread's lock.
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
  // `wall`: the clock intervals are timed with (tests pass their own).
  CpuTimer(const Options& options, ThreadTable& threads, TraceTable& traces,
           CpuClock::Clock wall = interval_ns);

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
  struct Totals {
    uint64_t calls = 0;
    uint64_t self_ns = 0;
    uint64_t inclusive_ns = 0;
  };
  // One trace a thread has been in. The counters are written by the thread only (relaxed atomics:
  // plain stores on x86) and read by reports; what the last clear() saw is subtracted. What events
  // touch fills the node's first two cache lines: the counters and the two callees entered last
  // in the first (an exit, and most entries, touch only it), four earlier callees in the second.
  // An entry prefetches both lines of the callee's node, so its exit (or its own first callee's
  // entry) finds them in the cache instead of paying a miss on a node first touched there.
  static constexpr size_t kHotCallees = 2;
  static constexpr size_t kCallees = 6;
  static constexpr size_t kMoreCallees = 16;
  struct Node;
  // What no event touches: used when a node is made, on a miss of its cached callees, by reports.
  struct NodeCold {
    std::vector<jmethodID> methods;                         // top first, at most `depth`
    std::vector<std::pair<jmethodID, Node*>> more_callees;  // the thread's only
    Totals cleared;  // the counters at the last clear(); under the thread's mutex
  };
  struct alignas(64) Node {
    std::atomic<uint64_t> calls{0};
    std::atomic<uint64_t> self_ns{0};
    std::atomic<uint64_t> inclusive_ns{0};
    unsigned trace = 0;  // interned with `thread`
    unsigned thread = 0;
    // The last callees entered from here, most recent first (the thread's only): [0, kHotCallees)
    // in the first line, the rest in the second.
    jmethodID callee_method_hot[kHotCallees] = {};
    Node* callee_hot[kHotCallees] = {};
    jmethodID callee_method_warm[kCallees - kHotCallees] = {};
    Node* callee_warm[kCallees - kHotCallees] = {};
    Totals since_clear() const;
    NodeCold& cold() const;
    jmethodID& callee_method(size_t k) {
      return k < kHotCallees ? callee_method_hot[k] : callee_method_warm[k - kHotCallees];
    }
    Node*& callee(size_t k) {
      return k < kHotCallees ? callee_hot[k] : callee_warm[k - kHotCallees];
    }
  };
  // A thread's nodes, in the order it first entered their traces (a callee soon after its
  // caller): the hot parts side by side, the cold parts after them, in chunks aligned to their
  // size so a node finds its cold part from its own address.
  static constexpr size_t kChunkBytes = 16 * 1024;
  struct alignas(kChunkBytes) NodeChunk {
    static constexpr size_t kNodes = (kChunkBytes - 64) / (sizeof(Node) + sizeof(NodeCold));
    Node hot[kNodes];
    NodeCold cold[kNodes];
    size_t used = 0;  // under the thread's mutex
  };
  struct Activation {
    jmethodID method;
    Node* node;
    uint64_t start_ns;
    uint64_t callee_ns = 0;
  };
  // The move from a caller's node into `method`: open addressing, linear probing.
  struct Move {
    const Node* from = nullptr;  // nullptr: empty
    jmethodID method = nullptr;
    Node* to = nullptr;
  };
  struct MethodsHash {
    size_t operator()(const std::vector<jmethodID>& v) const;
  };
  struct ThreadCosts {
    explicit ThreadCosts(CpuClock::Clock wall);
    CpuClock clock;
    std::atomic<uint64_t> events{0};  // written by the thread only, read by reports
    std::vector<Activation> stack;
    std::vector<Move> moves;
    size_t move_count = 0;
    Node* root = nullptr;        // the empty stack's node
    unsigned thread_serial = 0;  // once known (0 is never a thread serial)
    std::mutex mutex;            // nodes (their addition), their traces, cleared and retired
    std::vector<std::unique_ptr<NodeChunk>> chunks;  // nodes never move
    std::unordered_map<std::vector<jmethodID>, Node*, MethodsHash> by_methods;
    std::unordered_map<unsigned, Totals> retired;  // of nodes whose thread serial changed
  };
  ThreadCosts* costs_of(JNIEnv* env);
  [[gnu::noinline]] ThreadCosts* costs_of_slow(JNIEnv* env, uint64_t thread_ends);
  unsigned thread_serial(ThreadCosts& t, JNIEnv* env);
  unsigned trace_thread(ThreadCosts& t, JNIEnv* env);
  Node* node_for(ThreadCosts& t, JNIEnv* env, std::vector<jmethodID> methods);
  Node* move(ThreadCosts& t, JNIEnv* env, Node* from, jmethodID method);
  Node* find_move(ThreadCosts& t, JNIEnv* env, Node* from, jmethodID method);
  std::vector<jmethodID> callee_methods(const Node* from, jmethodID method) const;
  void add_move(ThreadCosts& t, Move m);
  void retarget(ThreadCosts& t, Node& n, unsigned thread);
  static uint64_t cpu_now(ThreadCosts& t);
  // Calls `f` on each of the thread's nodes; caller holds t.mutex.
  template <typename F>
  static void for_each_node(const ThreadCosts& t, F f);
  static void add(std::unordered_map<unsigned, Totals>& to, unsigned trace, const Totals& v);
  // Adds a thread's costs since the last clear to `to`; caller holds t.mutex.
  static void collect(const ThreadCosts& t, std::unordered_map<unsigned, Totals>& to);

  const Options& options_;
  ThreadTable& threads_;
  TraceTable& traces_;
  CpuClock::Clock wall_;
  const uint64_t id_;  // tells timers apart in the per-thread cache of costs_of
  std::mutex mutex_;
  std::vector<std::unique_ptr<ThreadCosts>> all_;  // every thread's, kept for reports
  std::unordered_map<unsigned, Totals> ended_;     // merged from threads that ended
  ClockUse ended_clock_use_;
};

}  // namespace hprof::agent
