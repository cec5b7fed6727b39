// SPDX-License-Identifier: Apache-2.0
#include "raw_monitors.h"

#include <jvmti.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <unordered_set>

#include "event_gate.h"
#include "jvmti_access.h"
#include "log.h"
#include "thread_registry.h"

namespace jvmpi::raw_monitors {
namespace {

struct RawMonitor {
  std::string name;
  jrawMonitorID id = nullptr;
  // Names beginning with '_' are the agent's private locks: no contention events for them.
  bool silent = false;
  // The owning thread, identified by an address unique to it (threads without a JNIEnv may use
  // raw monitors too); the JNIEnv is kept for events and dumps.
  std::atomic<const void*> owner{nullptr};
  std::atomic<JNIEnv*> owner_env{nullptr};
  std::atomic<int> entry_count{0};  // written only by the owner
  std::atomic<int> contenders{0};
  // Threads blocked entering, and threads in RawMonitorWait (for the monitor dump).
  std::mutex waiters_mutex;
  std::vector<JNIEnv*> entering;
  std::vector<JNIEnv*> waiting;
};

void add(std::mutex& m, std::vector<JNIEnv*>& list, JNIEnv* env) {
  std::lock_guard lock(m);
  list.push_back(env);
}

void drop(std::mutex& m, std::vector<JNIEnv*>& list, JNIEnv* env) {
  std::lock_guard lock(m);
  if (auto it = std::find(list.begin(), list.end(), env); it != list.end()) list.erase(it);
}

std::mutex g_registry_mutex;
std::unordered_set<RawMonitor*> g_monitors;

thread_local char t_identity;
const void* self() {
  return &t_identity;
}

RawMonitor* from_handle(JVMPI_RawMonitor handle) {
  return reinterpret_cast<RawMonitor*>(handle);
}

void send(jint type, const RawMonitor* monitor, JVMPI_RawMonitor handle) {
  if (monitor->silent || !gate::wants(type)) return;
  JVMPI_Event event{};
  event.event_type = type;
  event.env_id = current_jni_env();
  event.u.raw_monitor.name = monitor->name.c_str();
  event.u.raw_monitor.id = handle;
  gate::deliver(&event);
}

}  // namespace

JVMPI_RawMonitor create(char* name) {
  auto* monitor = new RawMonitor;
  monitor->name = name != nullptr ? name : "";
  monitor->silent = !monitor->name.empty() && monitor->name[0] == '_';
  if (!jvmti_ok(jvmti()->CreateRawMonitor(monitor->name.c_str(), &monitor->id),
                "CreateRawMonitor")) {
    delete monitor;
    return nullptr;
  }
  std::lock_guard lock(g_registry_mutex);
  g_monitors.insert(monitor);
  return reinterpret_cast<JVMPI_RawMonitor>(monitor);
}

void enter(JVMPI_RawMonitor handle) {
  RawMonitor* m = from_handle(handle);
  if (m == nullptr) return;
  if (m->owner.load(std::memory_order_acquire) == self()) {
    jvmti()->RawMonitorEnter(m->id);
    ++m->entry_count;
    return;
  }
  const bool contended = m->owner.load(std::memory_order_acquire) != nullptr;
  JNIEnv* env = current_jni_env();
  ThreadRecordPtr record = threads::find(env);
  if (contended) {
    m->contenders.fetch_add(1);
    add(m->waiters_mutex, m->entering, env);
    send(JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER, m, handle);
  }
  if (record != nullptr) record->raw_monitor_state.store(1);
  jvmti()->RawMonitorEnter(m->id);
  if (record != nullptr) record->raw_monitor_state.store(0);
  m->owner.store(self(), std::memory_order_release);
  m->owner_env.store(env, std::memory_order_release);
  m->entry_count = 1;
  if (contended) {
    drop(m->waiters_mutex, m->entering, env);
    m->contenders.fetch_sub(1);
    send(JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED, m, handle);
  }
}

void exit(JVMPI_RawMonitor handle) {
  RawMonitor* m = from_handle(handle);
  if (m == nullptr || m->owner.load(std::memory_order_acquire) != self()) return;
  if (--m->entry_count > 0) {
    jvmti()->RawMonitorExit(m->id);
    return;
  }
  const bool others_waiting = m->contenders.load() > 0;
  m->owner_env.store(nullptr, std::memory_order_release);
  m->owner.store(nullptr, std::memory_order_release);
  jvmti()->RawMonitorExit(m->id);
  if (others_waiting) send(JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT, m, handle);
}

void wait(JVMPI_RawMonitor handle, jlong ms) {
  RawMonitor* m = from_handle(handle);
  if (m == nullptr || m->owner.load(std::memory_order_acquire) != self()) return;
  // The wait releases the monitor completely; the bookkeeping follows.
  const int count = m->entry_count;
  JNIEnv* env = m->owner_env.load();
  m->owner_env.store(nullptr);
  m->owner.store(nullptr, std::memory_order_release);
  add(m->waiters_mutex, m->waiting, env);
  ThreadRecordPtr record = threads::find(env);
  if (record != nullptr) record->raw_monitor_state.store(2);
  jvmti()->RawMonitorWait(m->id, ms);
  if (record != nullptr) record->raw_monitor_state.store(0);
  drop(m->waiters_mutex, m->waiting, env);
  m->owner.store(self(), std::memory_order_release);
  m->owner_env.store(env);
  m->entry_count = count;
}

void notify_all(JVMPI_RawMonitor handle) {
  RawMonitor* m = from_handle(handle);
  if (m != nullptr) jvmti()->RawMonitorNotifyAll(m->id);
}

void destroy(JVMPI_RawMonitor handle) {
  RawMonitor* m = from_handle(handle);
  if (m == nullptr) return;
  {
    std::lock_guard lock(g_registry_mutex);
    if (g_monitors.erase(m) == 0) return;  // unknown or already destroyed
  }
  jvmti_ok(jvmti()->DestroyRawMonitor(m->id), "DestroyRawMonitor");
  delete m;
}

void for_each_in_use(const std::function<void(const RawMonitorState&)>& visit) {
  std::lock_guard registry_lock(g_registry_mutex);
  for (RawMonitor* m : g_monitors) {
    RawMonitorState state{
        m->name.c_str(), reinterpret_cast<JVMPI_RawMonitor>(m), m->owner_env.load(), 0, {}, {}};
    {
      std::lock_guard lock(m->waiters_mutex);
      state.entering = m->entering;
      state.waiting = m->waiting;
    }
    if (m->owner.load() == nullptr && state.entering.empty() && state.waiting.empty()) continue;
    state.entry_count = m->owner.load() != nullptr ? std::max(m->entry_count.load(), 1) : 0;
    visit(state);
  }
}

}  // namespace jvmpi::raw_monitors
