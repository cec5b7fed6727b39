// SPDX-License-Identifier: Apache-2.0
#include "monitor_exit_events.h"

#include <jvmpi.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "event_gate.h"
#include "hook_scope.h"
#include "jni_reference_events.h"
#include "object_ids.h"
#include "thread_events.h"

namespace jvmpi::monitor_exit_events {
namespace {

// Monitors (by object ID) with threads blocked entering them, and how many threads each.
std::mutex g_mutex;
std::unordered_map<jobjectID, int> g_contended;
int g_contenders = 0;  // the sum of g_contended's counts; under g_mutex

// The Tracker class and its `contenders` field, which instrumented code reads before calling in.
std::atomic<jclass> g_tracker{nullptr};  // global reference
std::atomic<jfieldID> g_contenders_field{nullptr};

// The monitor the current thread is blocked entering (between Enter and Entered), and the
// bookkeeping generation it was counted in (reset() starts a new one).
thread_local jobjectID t_contending = nullptr;
thread_local uint64_t t_generation = 0;
uint64_t g_generation = 1;  // under g_mutex

// Publishes the count; called with g_mutex held so that writes reach the field in order.
void publish(JNIEnv* jni, int contenders) {
  jclass tracker = g_tracker.load();
  jfieldID field = g_contenders_field.load();
  if (tracker != nullptr && field != nullptr) jni->SetStaticIntField(tracker, field, contenders);
}

}  // namespace

void contention_began(JNIEnv* jni, jobject monitor) {
  if (g_tracker.load() == nullptr || monitor == nullptr) return;
  const jobjectID id = object_ids::id_of(monitor);
  if (id == nullptr) return;
  std::lock_guard lock(g_mutex);
  // A thread blocks on one monitor at a time; one counted before a reset() is stale.
  if (t_contending != nullptr && t_generation == g_generation) return;
  t_contending = id;
  t_generation = g_generation;
  ++g_contended[id];
  publish(jni, ++g_contenders);
}

void contention_ended(JNIEnv* jni) {
  if (t_contending == nullptr) return;  // its contention began before the runtime counted
  std::lock_guard lock(g_mutex);
  const jobjectID id = t_contending;
  t_contending = nullptr;
  if (t_generation != g_generation) return;  // counted before a reset
  auto it = g_contended.find(id);
  if (it == g_contended.end()) return;
  if (--it->second == 0) g_contended.erase(it);
  publish(jni, --g_contenders);
}

void reset(JNIEnv* jni) {
  std::lock_guard lock(g_mutex);
  g_contended.clear();
  g_contenders = 0;
  ++g_generation;
  if (jni != nullptr) publish(jni, 0);
}

void JNICALL hook_monitor_exit(JNIEnv* env, jclass, jobject monitor) {
  if (!gate::wants(JVMPI_EVENT_MONITOR_CONTENDED_EXIT) || monitor == nullptr) return;
  // An object that was never contended for has no ID yet, and none is given to it here.
  const jobjectID id = object_ids::existing_id_of(monitor);
  if (id == nullptr) return;
  {
    std::lock_guard lock(g_mutex);
    if (g_contended.find(id) == g_contended.end()) return;
  }
  HookScope scope;
  if (!scope.entered()) return;  // the agent's own code releasing a monitor
  if (!thread_events::ensure_known(env)) return;
  JVMPI_Event event{};
  event.event_type = JVMPI_EVENT_MONITOR_CONTENDED_EXIT;
  event.env_id = env;
  event.u.monitor.object = id;
  gate::deliver(&event);
}

void start(JNIEnv* jni, jclass tracker) {
  jfieldID field = jni->GetStaticFieldID(tracker, "contenders", "I");
  if (field == nullptr) {
    jni->ExceptionClear();
    return;
  }
  jni_reference_events::InternalScope internal;
  g_contenders_field.store(field);
  g_tracker.store(static_cast<jclass>(jni->NewGlobalRef(tracker)));
}

}  // namespace jvmpi::monitor_exit_events
