// SPDX-License-Identifier: Apache-2.0
#include "monitor_events.h"

#include <dlfcn.h>
#include <jvmpi.h>

#include <atomic>
#include <chrono>
#include <optional>

#include "event_gate.h"
#include "jni_reference_events.h"
#include "jvmti_access.h"
#include "monitor_exit_events.h"
#include "object_ids.h"
#include "thread_events.h"
#include "thread_registry.h"

namespace jvmpi::monitor_events {
namespace {

using SleepFunction = void(JNICALL*)(JNIEnv*, jclass, jlong);
std::atomic<SleepFunction> g_vm_sleep{nullptr};
// JDK 17's Thread.sleep(long) is bound to JVM_Sleep and takes milliseconds; from JDK 21 the native
// is Thread.sleepNanos0(long), bound to JVM_SleepNanos, and takes nanoseconds.
std::atomic<bool> g_sleep_takes_nanos{false};

// When the current thread's Object.wait began, for the time MONITOR_WAITED reports (unset: the
// wait began before the runtime saw it, and its end is not reported either).
thread_local std::optional<std::chrono::steady_clock::time_point> t_wait_start;

// HotSpot already reports monitor events while the VM is starting, but the agent can neither
// name those threads nor resolve those objects then (JVMTI specifies the events, and the functions
// to describe them, for the live phase). They are reported from VM initialisation on.
std::atomic<bool> g_reporting{false};

jlong elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               since)
      .count();
}

void send_monitor(jint type, JNIEnv* jni, jthread thread, jobject object) {
  if (!g_reporting.load() || !gate::wants(type)) return;
  if (!thread_events::ensure_known(jni, thread)) return;
  JVMPI_Event event{};
  event.event_type = type;
  event.env_id = jni;
  event.u.monitor.object = object_ids::id_of(object);
  gate::deliver(&event);
}

void send_wait(jint type, JNIEnv* jni, jthread thread, jobjectID object, jlong timeout) {
  if (!g_reporting.load() || !gate::wants(type)) return;
  if (!thread_events::ensure_known(jni, thread)) return;
  JVMPI_Event event{};
  event.event_type = type;
  event.env_id = jni;
  event.u.monitor_wait.object = object;
  event.u.monitor_wait.timeout = timeout;
  gate::deliver(&event);
}

void remember_wait(JNIEnv* jni, jobject object) {
  ThreadRecordPtr record = threads::find(jni);
  if (record == nullptr) return;
  jni_reference_events::InternalScope internal;
  jobject weak = object != nullptr ? jni->NewWeakGlobalRef(object) : nullptr;
  std::lock_guard lock(record->waiting_mutex);
  if (record->waiting_on != nullptr) jni->DeleteWeakGlobalRef(record->waiting_on);
  record->waiting_on = weak;
}

// Stands in for the VM's sleep native.
void JNICALL sleep_wrapper(JNIEnv* jni, jclass cls, jlong amount) {
  const jlong ms = g_sleep_takes_nanos.load() ? amount / 1000000 : amount;
  send_wait(JVMPI_EVENT_MONITOR_WAIT, jni, nullptr, nullptr, ms);
  const auto start = std::chrono::steady_clock::now();
  g_vm_sleep.load()(jni, cls, amount);
  send_wait(JVMPI_EVENT_MONITOR_WAITED, jni, nullptr, nullptr, elapsed_ms(start));
}

}  // namespace

void JNICALL on_contended_enter(jvmtiEnv*, JNIEnv* jni, jthread thread, jobject object) {
  // Counted before the agent hears of it, so that the owner's release after the agent saw this
  // event is reported.
  if (g_reporting.load() && gate::is_enabled(JVMPI_EVENT_MONITOR_CONTENDED_EXIT)) {
    monitor_exit_events::contention_began(jni, object);
  }
  send_monitor(JVMPI_EVENT_MONITOR_CONTENDED_ENTER, jni, thread, object);
}

void JNICALL on_contended_entered(jvmtiEnv*, JNIEnv* jni, jthread thread, jobject object) {
  monitor_exit_events::contention_ended(jni);
  send_monitor(JVMPI_EVENT_MONITOR_CONTENDED_ENTERED, jni, thread, object);
}

void JNICALL on_wait(jvmtiEnv*, JNIEnv* jni, jthread thread, jobject object, jlong timeout) {
  remember_wait(jni, object);
  if (!g_reporting.load()) return;
  t_wait_start = std::chrono::steady_clock::now();
  if (gate::wants(JVMPI_EVENT_MONITOR_WAIT)) {
    send_wait(JVMPI_EVENT_MONITOR_WAIT, jni, thread, object_ids::id_of(object), timeout);
  }
}

void JNICALL on_waited(jvmtiEnv*, JNIEnv* jni, jthread thread, jobject object, jboolean) {
  remember_wait(jni, nullptr);
  if (!t_wait_start.has_value()) return;
  const auto start = *t_wait_start;
  t_wait_start.reset();
  if (gate::wants(JVMPI_EVENT_MONITOR_WAITED)) {
    send_wait(JVMPI_EVENT_MONITOR_WAITED, jni, thread, object_ids::id_of(object),
              elapsed_ms(start));
  }
}

void start_reporting() {
  g_reporting.store(true);
}

void JNICALL on_native_method_bind(jvmtiEnv*, JNIEnv*, jthread, jmethodID, void* address,
                                   void** new_address) {
  // The sleep native is bound while java.lang.Thread initialises, before method names can be
  // read; compare with the VM's exported implementation instead.
  static void* const vm_sleep_ms = dlsym(RTLD_DEFAULT, "JVM_Sleep");
  static void* const vm_sleep_nanos = dlsym(RTLD_DEFAULT, "JVM_SleepNanos");
  if (address == nullptr || (address != vm_sleep_ms && address != vm_sleep_nanos)) return;
  g_sleep_takes_nanos.store(address == vm_sleep_nanos);
  g_vm_sleep.store(reinterpret_cast<SleepFunction>(address));
  *new_address = reinterpret_cast<void*>(&sleep_wrapper);
}

}  // namespace jvmpi::monitor_events
