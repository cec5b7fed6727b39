// SPDX-License-Identifier: Apache-2.0
#include "cpu_timer.h"

#include <algorithm>
#include <cstddef>

#include "jvmpi_client.h"

namespace hprof::agent {
namespace {

uint64_t thread_cpu_ns() {
  const jlong ns = jvmpi()->GetCurrentThreadCpuTime();
  return ns > 0 ? static_cast<uint64_t>(ns) : 0;
}

// The calling thread's costs, remembered without asking the runtime at every event. A cached
// pointer is used only while no thread has ended since it was taken (an ending thread's costs
// are freed) and for the same timer and JNIEnv.
std::atomic<uint64_t> g_thread_ends{0};
std::atomic<uint64_t> g_timers{0};
struct CachedCosts {
  JNIEnv* env = nullptr;
  uint64_t timer = 0;
  uint64_t thread_ends = 0;
  void* costs = nullptr;
};
thread_local CachedCosts t_cached;

// Relaxed read-modify-write by the only writer: a plain load and store, no locked instruction.
void bump(std::atomic<uint64_t>& counter, uint64_t by) {
  counter.store(counter.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

size_t move_hash(const void* from, jmethodID method) {
  const auto a = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(from));
  const auto b = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(method));
  return static_cast<size_t>(((a >> 4) ^ (b * 0x9e3779b97f4a7c15ULL)) * 0xff51afd7ed558ccdULL >>
                             20);
}

}  // namespace

size_t CpuTimer::MethodsHash::operator()(const std::vector<jmethodID>& v) const {
  uint64_t h = v.size();
  for (jmethodID m : v) h = (h ^ reinterpret_cast<uintptr_t>(m)) * 0x9e3779b97f4a7c15ULL;
  return static_cast<size_t>(h ^ (h >> 29));
}

CpuTimer::Totals CpuTimer::Node::since_clear() const {
  // An exit touches the first line of its node, an entry the first two of its caller's.
  static_assert(offsetof(Node, callee_hot) + sizeof(callee_hot) <= 64);
  static_assert(offsetof(Node, callee_method_warm) == 64);
  static_assert(sizeof(Node) == 128);
  const uint64_t c = calls.load(std::memory_order_relaxed);
  const uint64_t s = self_ns.load(std::memory_order_relaxed);
  const uint64_t i = inclusive_ns.load(std::memory_order_relaxed);
  const Totals& cleared = cold().cleared;
  return {c - std::min(c, cleared.calls), s - std::min(s, cleared.self_ns),
          i - std::min(i, cleared.inclusive_ns)};
}

CpuTimer::NodeCold& CpuTimer::Node::cold() const {
  static_assert(sizeof(NodeChunk) == kChunkBytes);
  auto* chunk =
      reinterpret_cast<NodeChunk*>(reinterpret_cast<uintptr_t>(this) & ~(kChunkBytes - 1));
  return chunk->cold[this - chunk->hot];
}

template <typename F>
void CpuTimer::for_each_node(const ThreadCosts& t, F f) {
  for (const auto& chunk : t.chunks) {
    for (size_t i = 0; i < chunk->used; ++i) f(chunk->hot[i]);
  }
}

CpuTimer::ThreadCosts::ThreadCosts(CpuClock::Clock wall) : clock(wall, thread_cpu_ns) {}

inline uint64_t CpuTimer::cpu_now(ThreadCosts& t) {
  const uint64_t now = t.clock.now();
  bump(t.events, 1);
  return now;
}

CpuTimer::CpuTimer(const Options& options, ThreadTable& threads, TraceTable& traces,
                   CpuClock::Clock wall)
    : options_(options),
      threads_(threads),
      traces_(traces),
      wall_(wall),
      id_(g_timers.fetch_add(1) + 1) {}

inline CpuTimer::ThreadCosts* CpuTimer::costs_of(JNIEnv* env) {
  const uint64_t ends = g_thread_ends.load(std::memory_order_acquire);
  if (t_cached.env == env && t_cached.timer == id_ && t_cached.thread_ends == ends) [[likely]] {
    return static_cast<ThreadCosts*>(t_cached.costs);
  }
  return costs_of_slow(env, ends);
}

// The thread's first event for this timer, or the first since some thread ended.
CpuTimer::ThreadCosts* CpuTimer::costs_of_slow(JNIEnv* env, uint64_t ends) {
  auto* costs = static_cast<ThreadCosts*>(jvmpi()->GetThreadLocalStorage(env));
  if (costs == nullptr) {
    auto owned = std::make_unique<ThreadCosts>(wall_);
    costs = owned.get();
    {
      std::lock_guard lock(mutex_);
      all_.push_back(std::move(owned));
    }
    jvmpi()->SetThreadLocalStorage(env, costs);
  }
  t_cached = {env, id_, ends, costs};
  return costs;
}

unsigned CpuTimer::thread_serial(ThreadCosts& t, JNIEnv* env) {
  // A known serial is kept: it cannot change while the thread has costs, since THREAD_END
  // removes them before the thread table forgets the thread.
  if (t.thread_serial != 0) return t.thread_serial;
  const unsigned serial = threads_.serial_of(env);
  if (serial != kUnknownThreadSerial) t.thread_serial = serial;
  return serial;
}

unsigned CpuTimer::trace_thread(ThreadCosts& t, JNIEnv* env) {
  return options_.thread_in_traces ? thread_serial(t, env) : 0;
}

// The thread's node for a trace of these methods, made (and its trace interned) the first time.
CpuTimer::Node* CpuTimer::node_for(ThreadCosts& t, JNIEnv* env, std::vector<jmethodID> methods) {
  if (auto it = t.by_methods.find(methods); it != t.by_methods.end()) return it->second;
  std::vector<JVMPI_CallFrame> frames;
  frames.reserve(methods.size());
  for (jmethodID m : methods) frames.push_back({-1, m});
  const unsigned thread = trace_thread(t, env);
  const unsigned trace = traces_.intern(frames.data(), static_cast<int>(frames.size()), thread);
  std::lock_guard lock(t.mutex);
  if (t.chunks.empty() || t.chunks.back()->used == NodeChunk::kNodes) {
    t.chunks.push_back(std::make_unique<NodeChunk>());
  }
  NodeChunk& chunk = *t.chunks.back();
  Node& n = chunk.hot[chunk.used];
  chunk.cold[chunk.used].methods = methods;
  ++chunk.used;
  n.trace = trace;
  n.thread = thread;
  t.by_methods.emplace(std::move(methods), &n);
  return &n;
}

void CpuTimer::add_move(ThreadCosts& t, Move m) {
  if ((t.move_count + 1) * 2 > t.moves.size()) {
    // At most half full, so probe runs stay short.
    std::vector<Move> old(std::max<size_t>(t.moves.size() * 2, 1024));
    old.swap(t.moves);
    t.move_count = 0;
    for (const Move& o : old) {
      if (o.from != nullptr) add_move(t, o);
    }
  }
  const size_t mask = t.moves.size() - 1;
  size_t i = move_hash(m.from, m.method) & mask;
  while (t.moves[i].from != nullptr) i = (i + 1) & mask;
  t.moves[i] = m;
  ++t.move_count;
}

// The node of the trace `method` is in when entered from the trace of `from`.
CpuTimer::Node* CpuTimer::move(ThreadCosts& t, JNIEnv* env, Node* from, jmethodID method) {
  // Most calls are of a callee the caller's trace entered shortly before: the caller's own lines.
  if (from->callee_method_hot[0] == method) return from->callee_hot[0];
  size_t k = 1;
  while (k < kCallees && from->callee_method(k) != method) ++k;
  Node* to = k < kCallees ? from->callee(k) : find_move(t, env, from, method);
  if (k == kCallees) k = kCallees - 1;  // the least recent is dropped
  for (; k > 0; --k) {
    from->callee_method(k) = from->callee_method(k - 1);
    from->callee(k) = from->callee(k - 1);
  }
  from->callee_method_hot[0] = method;
  from->callee_hot[0] = to;
  return to;
}

CpuTimer::Node* CpuTimer::find_move(ThreadCosts& t, JNIEnv* env, Node* from, jmethodID method) {
  // The node's other callees, few for most nodes, are kept together (a scan of a line or two);
  // a node with many is looked up in the thread's table of moves (a probe at a random place).
  auto& more_callees = from->cold().more_callees;
  for (const auto& [m, to] : more_callees) {
    if (m == method) return to;
  }
  if (more_callees.size() < kMoreCallees) {
    Node* to = node_for(t, env, callee_methods(from, method));
    more_callees.emplace_back(method, to);
    return to;
  }
  if (!t.moves.empty()) {
    const size_t mask = t.moves.size() - 1;
    for (size_t i = move_hash(from, method) & mask; t.moves[i].from != nullptr;
         i = (i + 1) & mask) {
      if (t.moves[i].from == from && t.moves[i].method == method) return t.moves[i].to;
    }
  }
  Node* to = node_for(t, env, callee_methods(from, method));
  add_move(t, {from, method, to});
  return to;
}

// The methods of the trace `method` is in when entered from the trace of `from`.
std::vector<jmethodID> CpuTimer::callee_methods(const Node* from, jmethodID method) const {
  const size_t depth = static_cast<size_t>(std::max(options_.depth, 0));
  std::vector<jmethodID> methods;
  if (depth > 0) {
    methods.push_back(method);
    const std::vector<jmethodID>& from_methods = from->cold().methods;
    const size_t kept = std::min(from_methods.size(), depth - 1);
    methods.insert(methods.end(), from_methods.begin(),
                   from_methods.begin() + static_cast<ptrdiff_t>(kept));
  }
  return methods;
}

void CpuTimer::on_entry(JNIEnv* env, jmethodID method) {
  ThreadCosts* t = costs_of(env);
  const uint64_t now = cpu_now(*t);
  if (t->root == nullptr) t->root = node_for(*t, env, {});
  Node* from = t->stack.empty() ? t->root : t->stack.back().node;
  Node* to = move(*t, env, from, method);
  // Its exit writes the first line, its callees' entries read both: ask for them now.
  __builtin_prefetch(to, 1, 3);
  __builtin_prefetch(reinterpret_cast<const char*>(to) + 64, 0, 3);
  t->stack.push_back({method, to, now});
}

// The node's trace was interned before the thread had a serial (thread=y): what it has so far
// stays with that trace, and it goes on under the thread's own.
void CpuTimer::retarget(ThreadCosts& t, Node& n, unsigned thread) {
  std::vector<JVMPI_CallFrame> frames;
  for (jmethodID m : n.cold().methods) frames.push_back({-1, m});
  const unsigned trace = traces_.intern(frames.data(), static_cast<int>(frames.size()), thread);
  std::lock_guard lock(t.mutex);
  add(t.retired, n.trace, n.since_clear());
  n.cold().cleared = {n.calls.load(std::memory_order_relaxed),
                      n.self_ns.load(std::memory_order_relaxed),
                      n.inclusive_ns.load(std::memory_order_relaxed)};
  n.trace = trace;
  n.thread = thread;
}

void CpuTimer::on_exit(JNIEnv* env, jmethodID method) {
  ThreadCosts* t = costs_of(env);
  const uint64_t now = cpu_now(*t);
  // An exit without its entry (the method was entered before timing began) is skipped; an
  // unmatched entry above it (an exit that was never reported) is popped along.
  size_t i = t->stack.size();
  while (i > 0 && t->stack[i - 1].method != method) --i;
  if (i == 0) return;
  const Activation a = t->stack[i - 1];
  t->stack.resize(i - 1);
  const uint64_t elapsed = now > a.start_ns ? now - a.start_ns : 0;
  if (!t->stack.empty()) t->stack.back().callee_ns += elapsed;

  Node& n = *a.node;
  if (options_.thread_in_traces) {
    const unsigned thread = thread_serial(*t, env);
    if (thread != n.thread) retarget(*t, n, thread);
  }
  bump(n.calls, 1);
  bump(n.self_ns, elapsed > a.callee_ns ? elapsed - a.callee_ns : 0);
  bump(n.inclusive_ns, elapsed);
}

void CpuTimer::add(std::unordered_map<unsigned, Totals>& to, unsigned trace, const Totals& v) {
  if (v.calls == 0 && v.self_ns == 0 && v.inclusive_ns == 0) return;
  Totals& sum = to[trace];
  sum.calls += v.calls;
  sum.self_ns += v.self_ns;
  sum.inclusive_ns += v.inclusive_ns;
}

void CpuTimer::collect(const ThreadCosts& t, std::unordered_map<unsigned, Totals>& to) {
  for_each_node(t, [&to](const Node& n) { add(to, n.trace, n.since_clear()); });
  for (const auto& [trace, totals] : t.retired) add(to, trace, totals);
}

void CpuTimer::on_thread_end(JNIEnv* env) {
  auto* t = static_cast<ThreadCosts*>(jvmpi()->GetThreadLocalStorage(env));
  if (t == nullptr) return;
  std::lock_guard lock(mutex_);
  {
    std::lock_guard thread_lock(t->mutex);
    collect(*t, ended_);
  }
  ended_clock_use_.events += t->events.load(std::memory_order_relaxed);
  ended_clock_use_.cpu_clock_reads += t->clock.reads();
  jvmpi()->SetThreadLocalStorage(env, nullptr);
  // Every thread's cached pointer is checked against this before its next use.
  g_thread_ends.fetch_add(1, std::memory_order_acq_rel);
  if (t_cached.costs == t) t_cached = {};
  std::erase_if(all_, [t](const auto& owned) { return owned.get() == t; });
}

std::vector<Cost> CpuTimer::costs(bool inclusive) {
  std::unordered_map<unsigned, Totals> merged;
  {
    std::lock_guard lock(mutex_);
    merged = ended_;
    for (const auto& t : all_) {
      std::lock_guard thread_lock(t->mutex);
      collect(*t, merged);
    }
  }
  CostTable table;
  for (const auto& [trace, totals] : merged) {
    if (totals.calls == 0) continue;
    table.add(trace, totals.calls, inclusive ? totals.inclusive_ns : totals.self_ns);
  }
  return table.sorted_by_time();
}

CpuTimer::ClockUse CpuTimer::clock_use() {
  std::lock_guard lock(mutex_);
  ClockUse use = ended_clock_use_;
  for (const auto& t : all_) {
    use.events += t->events.load(std::memory_order_relaxed);
    use.cpu_clock_reads += t->clock.reads();
  }
  return use;
}

void CpuTimer::clear() {
  std::lock_guard lock(mutex_);
  ended_.clear();
  for (const auto& t : all_) {
    std::lock_guard thread_lock(t->mutex);
    for_each_node(*t, [](const Node& n) {
      n.cold().cleared = {n.calls.load(std::memory_order_relaxed),
                          n.self_ns.load(std::memory_order_relaxed),
                          n.inclusive_ns.load(std::memory_order_relaxed)};
    });
    t->retired.clear();
  }
}

}  // namespace hprof::agent
