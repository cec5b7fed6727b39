#include "cpu_timer.h"

#include "jvmpi_client.h"

namespace hprof::agent {

CpuTimer::ThreadCosts* CpuTimer::costs_of(JNIEnv* env) {
  auto* costs = static_cast<ThreadCosts*>(jvmpi()->GetThreadLocalStorage(env));
  if (costs != nullptr) return costs;
  auto owned = std::make_unique<ThreadCosts>();
  costs = owned.get();
  {
    std::lock_guard lock(mutex_);
    all_.push_back(std::move(owned));
  }
  jvmpi()->SetThreadLocalStorage(env, costs);
  return costs;
}

void CpuTimer::on_entry(JNIEnv* env, jmethodID method) {
  ThreadCosts* t = costs_of(env);
  t->stack.push_back({method, static_cast<uint64_t>(jvmpi()->GetCurrentThreadCpuTime())});
}

void CpuTimer::on_exit(JNIEnv* env, jmethodID method) {
  const auto now = static_cast<uint64_t>(jvmpi()->GetCurrentThreadCpuTime());
  ThreadCosts* t = costs_of(env);
  // An exit without its entry (the method was entered before timing began) is skipped; an
  // unmatched entry above it (an exit that was never reported) is popped along.
  size_t i = t->stack.size();
  while (i > 0 && t->stack[i - 1].method != method) --i;
  if (i == 0) return;
  const Activation a = t->stack[i - 1];
  t->stack.resize(i - 1);
  const uint64_t elapsed = now > a.start_ns ? now - a.start_ns : 0;
  if (!t->stack.empty()) t->stack.back().callee_ns += elapsed;

  // The trace: this method and its callers, from the shadow stack (no line numbers).
  const size_t depth = std::min<size_t>(static_cast<size_t>(options_.depth), t->stack.size() + 1);
  std::vector<JVMPI_CallFrame> frames(depth);
  if (depth > 0) frames[0] = {-1, method};
  for (size_t k = 1; k < depth; ++k) frames[k] = {-1, t->stack[t->stack.size() - k].method};
  const unsigned thread = options_.thread_in_traces ? threads_.serial_of(env) : 0;
  const unsigned trace = traces_.intern(frames.data(), static_cast<int>(depth), thread);

  std::lock_guard lock(t->mutex);
  Totals& totals = t->by_trace[trace];
  totals.calls += 1;
  totals.self_ns += elapsed > a.callee_ns ? elapsed - a.callee_ns : 0;
  totals.inclusive_ns += elapsed;
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

void CpuTimer::clear() {
  std::lock_guard lock(mutex_);
  ended_.clear();
  for (const auto& t : all_) {
    std::lock_guard thread_lock(t->mutex);
    t->by_trace.clear();
  }
}

}  // namespace hprof::agent
