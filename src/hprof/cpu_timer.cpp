#include "cpu_timer.h"

#include <algorithm>
#include <array>

#include "jvmpi_client.h"

namespace hprof::agent {
namespace {

uint64_t thread_cpu_ns() {
  const jlong ns = jvmpi()->GetCurrentThreadCpuTime();
  return ns > 0 ? static_cast<uint64_t>(ns) : 0;
}

}  // namespace

CpuTimer::ThreadCosts::ThreadCosts(CpuClock::Clock wall) : clock(wall, thread_cpu_ns) {}

uint64_t CpuTimer::cpu_now(ThreadCosts& t) {
  const uint64_t now = t.clock.now();
  t.events.store(t.events.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  t.reads.store(t.clock.reads(), std::memory_order_relaxed);
  return now;
}

CpuTimer::ThreadCosts* CpuTimer::costs_of(JNIEnv* env) {
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
  return costs;
}

void CpuTimer::on_entry(JNIEnv* env, jmethodID method) {
  ThreadCosts* t = costs_of(env);
  t->stack.push_back({method, cpu_now(*t)});
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
  const unsigned trace = trace_of(*t, env, i);
  t->stack.resize(i - 1);
  const uint64_t elapsed = now > a.start_ns ? now - a.start_ns : 0;
  if (!t->stack.empty()) t->stack.back().callee_ns += elapsed;

  std::lock_guard lock(t->mutex);
  Totals& totals = t->by_trace[trace];
  totals.calls += 1;
  totals.self_ns += elapsed > a.callee_ns ? elapsed - a.callee_ns : 0;
  totals.inclusive_ns += elapsed;
}

unsigned CpuTimer::thread_serial(ThreadCosts& t, JNIEnv* env) {
  // A known serial is kept: it cannot change while the thread has costs, since THREAD_END
  // removes them before the thread table forgets the thread.
  if (t.thread_serial != 0) return t.thread_serial;
  const unsigned serial = threads_.serial_of(env);
  if (serial != kUnknownThreadSerial) t.thread_serial = serial;
  return serial;
}

// The trace of the method at stack[size - 1]: it and its callers, top first, at most `depth`
// frames, no line numbers. Interning takes a lock and allocates, so serials are remembered per
// thread; the trace table never forgets a trace, so a remembered serial stays right.
unsigned CpuTimer::trace_of(ThreadCosts& t, JNIEnv* env, size_t size) {
  const size_t count = std::min<size_t>(static_cast<size_t>(options_.depth), size);
  const unsigned thread = options_.thread_in_traces ? thread_serial(t, env) : 0;
  const Activation* top = &t.stack[size - 1];  // frame k is top[-k]
  const auto frame = [top](size_t k) { return (top - k)->method; };
  if (count > kMemoDepth) {
    t.frames.resize(count);
    for (size_t k = 0; k < count; ++k) t.frames[k] = {-1, frame(k)};
    return traces_.intern(t.frames.data(), static_cast<int>(count), thread);
  }

  Memo& memo = t.memo;
  if (!memo.slots) {
    memo.width = std::min<size_t>(static_cast<size_t>(options_.depth), kMemoDepth);
    memo.slots = std::make_unique<MemoSlot[]>(size_t{1} << kMemoBits);
    memo.methods = std::make_unique<jmethodID[]>((size_t{1} << kMemoBits) * memo.width);
  }
  uint64_t h = (uint64_t{thread} << 8) | count;
  for (size_t k = 0; k < count; ++k) {
    h = (h ^ reinterpret_cast<uintptr_t>(frame(k))) * 0x9e3779b97f4a7c15ULL;
  }
  const size_t first = (h >> (64 - kMemoBits)) & ~size_t{1};  // the set: slots first, first + 1
  const auto matches = [&](size_t i) {
    const MemoSlot& slot = memo.slots[i];
    if (slot.trace == 0 || slot.count != count || slot.thread != thread) return false;
    const jmethodID* methods = memo.methods.get() + i * memo.width;
    for (size_t k = 0; k < count; ++k) {
      if (methods[k] != frame(k)) return false;
    }
    return true;
  };
  // The most recently used way is kept first.
  const auto swap_ways = [&] {
    std::swap(memo.slots[first], memo.slots[first + 1]);
    jmethodID* way = memo.methods.get() + first * memo.width;
    std::swap_ranges(way, way + memo.width, way + memo.width);
  };
  if (matches(first)) return memo.slots[first].trace;
  swap_ways();
  if (matches(first)) return memo.slots[first].trace;

  // A miss: the older way (now first) is replaced.
  std::array<JVMPI_CallFrame, kMemoDepth> frames;
  jmethodID* methods = memo.methods.get() + first * memo.width;
  for (size_t k = 0; k < count; ++k) {
    frames[k] = {-1, frame(k)};
    methods[k] = frame(k);
  }
  MemoSlot& slot = memo.slots[first];
  slot = {static_cast<unsigned>(count), thread,
          traces_.intern(frames.data(), static_cast<int>(count), thread)};
  return slot.trace;
}

void CpuTimer::on_thread_end(JNIEnv* env) {
  auto* t = static_cast<ThreadCosts*>(jvmpi()->GetThreadLocalStorage(env));
  if (t == nullptr) return;
  std::lock_guard lock(mutex_);
  std::unique_lock thread_lock(t->mutex);
  for (const auto& [trace, totals] : t->by_trace) {
    Totals& e = ended_[trace];
    e.calls += totals.calls;
    e.self_ns += totals.self_ns;
    e.inclusive_ns += totals.inclusive_ns;
  }
  t->by_trace.clear();
  thread_lock.unlock();
  ended_clock_use_.events += t->events.load(std::memory_order_relaxed);
  ended_clock_use_.cpu_clock_reads += t->reads.load(std::memory_order_relaxed);
  jvmpi()->SetThreadLocalStorage(env, nullptr);
  std::erase_if(all_, [t](const auto& owned) { return owned.get() == t; });
}

std::vector<Cost> CpuTimer::costs(bool inclusive) {
  std::unordered_map<unsigned, Totals> merged;
  {
    std::lock_guard lock(mutex_);
    merged = ended_;
    for (const auto& t : all_) {
      std::lock_guard thread_lock(t->mutex);
      for (const auto& [trace, totals] : t->by_trace) {
        Totals& m = merged[trace];
        m.calls += totals.calls;
        m.self_ns += totals.self_ns;
        m.inclusive_ns += totals.inclusive_ns;
      }
    }
  }
  CostTable table;
  for (const auto& [trace, totals] : merged) {
    table.add(trace, totals.calls, inclusive ? totals.inclusive_ns : totals.self_ns);
  }
  return table.sorted_by_time();
}

CpuTimer::ClockUse CpuTimer::clock_use() {
  std::lock_guard lock(mutex_);
  ClockUse use = ended_clock_use_;
  for (const auto& t : all_) {
    use.events += t->events.load(std::memory_order_relaxed);
    use.cpu_clock_reads += t->reads.load(std::memory_order_relaxed);
  }
  return use;
}

void CpuTimer::clear() {
  std::lock_guard lock(mutex_);
  ended_.clear();
  for (const auto& t : all_) {
    std::lock_guard thread_lock(t->mutex);
    t->by_trace.clear();
  }
}

}  // namespace hprof::agent
