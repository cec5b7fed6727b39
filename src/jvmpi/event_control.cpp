// SPDX-License-Identifier: Apache-2.0
#include "event_control.h"

#include <jvmti.h>

#include <array>
#include <map>
#include <mutex>

#include "allocation_events.h"
#include "class_events.h"
#include "data_requests.h"
#include "dumped_objects.h"
#include "event_gate.h"
#include "heap_dump.h"
#include "jvmti_access.h"
#include "method_events.h"
#include "monitor_dump.h"
#include "monitor_exit_events.h"
#include "object_events.h"
#include "thread_events.h"

namespace jvmpi::event_control {
namespace {

enum class Support { kUnavailable, kAvailable, kRequestOnly };

constexpr jvmtiEvent kNone = static_cast<jvmtiEvent>(0);

struct EventInfo {
  Support support = Support::kUnavailable;
  // JVMTI events that must be enabled while the JVMPI event is (kNone for unused slots).
  std::array<jvmtiEvent, 3> needs{kNone, kNone, kNone};
};

// Events whose JVMTI source is always on (the runtime needs it for its own bookkeeping) need
// nothing here. See docs/jvmpi-conformance.md for why the unavailable ones are unavailable.
EventInfo info_of(jint type) {
  using S = Support;
  switch (type) {
    case JVMPI_EVENT_JVM_INIT_DONE:
    case JVMPI_EVENT_JVM_SHUT_DOWN:
    case JVMPI_EVENT_THREAD_START:
    case JVMPI_EVENT_THREAD_END:
    case JVMPI_EVENT_CLASS_LOAD:
    case JVMPI_EVENT_CLASS_UNLOAD:
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER:
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED:
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT:
    case JVMPI_EVENT_DATA_RESET_REQUEST:
    case JVMPI_EVENT_GC_START:  // the GC reporter delivers both once a collection has finished
    case JVMPI_EVENT_GC_FINISH:
    case JVMPI_EVENT_OBJECT_FREE:  // from ObjectFree, which is always on (tagged objects only)
    case JVMPI_EVENT_OBJECT_MOVE:  // never sent: IDs are tags and do not change when objects move
    case JVMPI_EVENT_ARENA_NEW:
    case JVMPI_EVENT_ARENA_DELETE:         // never sent: the one arena lives as long as the VM
    case JVMPI_EVENT_JNI_GLOBALREF_ALLOC:  // the JNI wrappers are always installed
    case JVMPI_EVENT_JNI_GLOBALREF_FREE:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE:
      return {S::kAvailable, {kNone, kNone}};
    case JVMPI_EVENT_OBJECT_ALLOC:
      return {S::kAvailable, {JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, JVMTI_EVENT_VM_OBJECT_ALLOC}};
    case JVMPI_EVENT_METHOD_ENTRY:  // bytecode insertion: classes go through the load hook
    case JVMPI_EVENT_METHOD_ENTRY2:
    case JVMPI_EVENT_METHOD_EXIT:
    case JVMPI_EVENT_INSTRUCTION_START:
      return {S::kAvailable, {JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, kNone}};
    case JVMPI_EVENT_CLASS_LOAD_HOOK:
      return {S::kAvailable, {JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, kNone}};
    case JVMPI_EVENT_COMPILED_METHOD_LOAD:
      return {S::kAvailable, {JVMTI_EVENT_COMPILED_METHOD_LOAD, kNone}};
    case JVMPI_EVENT_COMPILED_METHOD_UNLOAD:
      return {S::kAvailable, {JVMTI_EVENT_COMPILED_METHOD_UNLOAD, kNone}};
    case JVMPI_EVENT_DATA_DUMP_REQUEST:
      return {S::kAvailable, {JVMTI_EVENT_DATA_DUMP_REQUEST, kNone}};
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER:
      return {S::kAvailable, {JVMTI_EVENT_MONITOR_CONTENDED_ENTER, kNone}};
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
      return {S::kAvailable, {JVMTI_EVENT_MONITOR_CONTENDED_ENTERED, kNone}};
    case JVMPI_EVENT_MONITOR_CONTENDED_EXIT:  // bytecode insertion, plus who is blocked where
      return {S::kAvailable,
              {JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, JVMTI_EVENT_MONITOR_CONTENDED_ENTER,
               JVMTI_EVENT_MONITOR_CONTENDED_ENTERED}};
    case JVMPI_EVENT_MONITOR_WAIT:
      return {S::kAvailable, {JVMTI_EVENT_MONITOR_WAIT, kNone}};
    case JVMPI_EVENT_MONITOR_WAITED:
      // The wait's start time comes from the MonitorWait callback.
      return {S::kAvailable, {JVMTI_EVENT_MONITOR_WAIT, JVMTI_EVENT_MONITOR_WAITED}};
    case JVMPI_EVENT_HEAP_DUMP:
    case JVMPI_EVENT_MONITOR_DUMP:
    case JVMPI_EVENT_OBJECT_DUMP:
      return {S::kRequestOnly, {kNone, kNone}};
    default:
      return {S::kUnavailable, {kNone, kNone}};
  }
}

std::mutex g_mutex;
// Per JVMTI event: whether we asked the VM for it.
std::map<jvmtiEvent, bool> g_applied;

bool jvmti_event_needed(jvmtiEvent event) {
  if (event == JVMTI_EVENT_SAMPLED_OBJECT_ALLOC && allocation_events::sampling_on()) return true;
  for (jint type = 1; type <= JVMPI_MAX_EVENT_TYPE_VAL; ++type) {
    if (!gate::is_enabled(type)) continue;
    for (jvmtiEvent e : info_of(type).needs) {
      if (e != kNone && e == event) return true;
    }
  }
  return false;
}

// Brings the VM's notification mode for `event` in line with what the enabled events need.
// Caller holds g_mutex.
void apply(jvmtiEvent event) {
  const bool needed = jvmti_event_needed(event);
  auto it = g_applied.find(event);
  const bool applied = it != g_applied.end() && it->second;
  if (needed == applied) return;
  jvmtiError err =
      jvmti()->SetEventNotificationMode(needed ? JVMTI_ENABLE : JVMTI_DISABLE, event, nullptr);
  if (err == JVMTI_ERROR_NONE) {
    g_applied[event] = needed;
    // Methods compiled before the agent asked are reported too.
    if (needed && event == JVMTI_EVENT_COMPILED_METHOD_LOAD &&
        current_phase() == JVMTI_PHASE_LIVE) {
      jvmti()->GenerateEvents(JVMTI_EVENT_COMPILED_METHOD_LOAD);
    }
  } else {
    jvmti_ok(err, "SetEventNotificationMode");  // WRONG_PHASE is retried by apply_pending
  }
}

jint set(jint type, bool on) {
  const EventInfo info = info_of(type);
  if (info.support != Support::kAvailable) return JVMPI_NOT_AVAILABLE;
  bool needs_retransform = false;
  // Outside the lock: announcing delivers CLASS_LOAD events, whose handlers may call back.
  const bool class_load_closing = !on && type == JVMPI_EVENT_CLASS_LOAD &&
                                  class_events::announce_before_disable(current_jni_env());
  {
    std::lock_guard lock(g_mutex);
    gate::set_enabled(type, on);
    for (jvmtiEvent e : info.needs) {
      if (e != kNone) apply(e);
    }
    if (on && type == JVMPI_EVENT_DATA_RESET_REQUEST) data_requests::enable_reset_signal();
    if (type == JVMPI_EVENT_OBJECT_ALLOC) {
      allocation_events::set_tracking(on);
      JNIEnv* jni = current_jni_env();
      if (on && jni != nullptr && current_phase() == JVMTI_PHASE_LIVE) {
        allocation_events::prime_current_thread(jni);
      }
    }
    if (on && type == JVMPI_EVENT_ARENA_NEW) object_events::announce_heap_arena_when_live();
    if (!on && type == JVMPI_EVENT_MONITOR_CONTENDED_EXIT) {
      monitor_exit_events::reset(current_jni_env());
    }
    if (type == JVMPI_EVENT_METHOD_ENTRY || type == JVMPI_EVENT_METHOD_ENTRY2 ||
        type == JVMPI_EVENT_METHOD_EXIT || type == JVMPI_EVENT_INSTRUCTION_START ||
        type == JVMPI_EVENT_MONITOR_CONTENDED_EXIT) {
      needs_retransform = true;
    }
  }
  if (class_load_closing) class_events::announce_after_disable(current_jni_env());
  // Outside the lock: retransformation runs the class-file hook for every loaded class.
  if (needs_retransform) method_events::events_changed();
  return JVMPI_SUCCESS;
}

}  // namespace

jint enable(jint event_type, void*) {
  return set(event_type, true);
}

jint disable(jint event_type, void*) {
  return set(event_type, false);
}

jint request(jint event_type, void* arg) {
  JNIEnv* jni = current_jni_env();
  // Agents request from threads of their own that never return to Java: nothing a request makes
  // (or the agent's handler of the requested event) may stay behind on them.
  LocalFrame frame(jni);
  switch (event_type) {
    case JVMPI_EVENT_CLASS_LOAD:
      return class_events::request_class_load(jni, static_cast<jobjectID>(arg));
    case JVMPI_EVENT_THREAD_START:
      return thread_events::request_thread_start(jni, static_cast<jobjectID>(arg));
    case JVMPI_EVENT_OBJECT_ALLOC:
      // An object of the heap dump being delivered (the handler asking for each): from the dump.
      if (dumped_objects::request_object_alloc(jni, static_cast<jobjectID>(arg))) {
        return JVMPI_SUCCESS;
      }
      return object_events::request_object_alloc(jni, static_cast<jobjectID>(arg));
    case JVMPI_EVENT_HEAP_DUMP:
      return heap_dump::request_heap_dump(jni, static_cast<JVMPI_HeapDumpArg*>(arg));
    case JVMPI_EVENT_OBJECT_DUMP:
      return heap_dump::request_object_dump(jni, static_cast<jobjectID>(arg));
    case JVMPI_EVENT_MONITOR_DUMP:
      return monitor_dump::request_monitor_dump(jni);
    default:
      return JVMPI_NOT_AVAILABLE;
  }
}

void refresh(jvmtiEvent event) {
  std::lock_guard lock(g_mutex);
  apply(event);
}

void forget_applied() {
  std::lock_guard lock(g_mutex);
  g_applied.clear();
}

void apply_pending() {
  std::lock_guard lock(g_mutex);
  for (jint type = 1; type <= JVMPI_MAX_EVENT_TYPE_VAL; ++type) {
    for (jvmtiEvent e : info_of(type).needs) {
      if (e != kNone) apply(e);
    }
  }
}

}  // namespace jvmpi::event_control
