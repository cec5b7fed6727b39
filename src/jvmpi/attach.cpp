// SPDX-License-Identifier: Apache-2.0
#include "attach.h"

#include <jvmpi.h>
#include <jvmti.h>
#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "allocation_events.h"
#include "class_events.h"
#include "cpu_sampling.h"
#include "data_requests.h"
#include "event_control.h"
#include "event_gate.h"
#include "gc_events.h"
#include "heap_reserve.h"
#include "hotspot_vm_structs.h"
#include "jni_reference_events.h"
#include "jvmti_access.h"
#include "known_methods.h"
#include "log.h"
#include "method_events.h"
#include "monitor_exit_events.h"
#include "object_events.h"
#include "thread_events.h"
#include "thread_registry.h"

namespace jvmpi::attach {
namespace {

std::atomic<bool> g_running{false};

// Where HotSpot keeps what a thread that never told us about itself has: java.lang.Thread.eetop
// holds the address of the VM's thread structure, at a fixed distance from the thread's JNIEnv
// (measured on the calling thread), and the structure's OSThread names the kernel thread
// (Thread::_osthread, OSThread::_thread_id, from the VM's own description of its structures).
struct ThreadLayout {
  jfieldID eetop = nullptr;
  intptr_t env_offset = 0;
  bool tids = false;  // whether the two offsets below were found and checked
  uint64_t osthread_offset = 0;
  uint64_t thread_id_offset = 0;
};

pid_t read_tid(const ThreadLayout& layout, jlong eetop) {
  if (!layout.tids || eetop == 0) return 0;
  const auto* os_thread = *reinterpret_cast<const uintptr_t* const*>(static_cast<uintptr_t>(eetop) +
                                                                     layout.osthread_offset);
  if (os_thread == nullptr) return 0;
  return *reinterpret_cast<const pid_t*>(reinterpret_cast<uintptr_t>(os_thread) +
                                         layout.thread_id_offset);
}

bool find_layout(JNIEnv* jni, jthread self, ThreadLayout& layout) {
  jclass thread_class = jni->FindClass("java/lang/Thread");
  if (thread_class == nullptr) {
    jni->ExceptionClear();
    return false;
  }
  LocalRef class_ref(jni, thread_class);
  layout.eetop = jni->GetFieldID(thread_class, "eetop", "J");
  if (layout.eetop == nullptr) {
    jni->ExceptionClear();
    return false;
  }
  const jlong own = jni->GetLongField(self, layout.eetop);
  layout.env_offset = reinterpret_cast<intptr_t>(jni) - static_cast<intptr_t>(own);
  // The JNIEnv is a field of the thread structure: anything else is not the layout assumed here.
  if (own == 0 || layout.env_offset <= 0 || layout.env_offset > (1 << 16)) return false;
  // Described under JavaThread in JDK 17's table, under Thread in later ones.
  layout.tids =
      (hotspot_vm_structs::field_offset("JavaThread", "_osthread", &layout.osthread_offset) ||
       hotspot_vm_structs::field_offset("Thread", "_osthread", &layout.osthread_offset)) &&
      hotspot_vm_structs::field_offset("OSThread", "_thread_id", &layout.thread_id_offset);
  if (layout.tids) layout.tids = read_tid(layout, own) == static_cast<pid_t>(gettid());
  return true;
}

}  // namespace

bool session_running() {
  return g_running.load();
}

void set_session_running(bool running) {
  g_running.store(running);
}

int adopt_running_threads(JNIEnv* jni) {
  jthread self = nullptr;
  if (jvmti()->GetCurrentThread(&self) != JVMTI_ERROR_NONE || self == nullptr) return -1;
  LocalRef self_ref(jni, self);
  ThreadLayout layout;
  if (!find_layout(jni, self, layout)) return -1;
  if (!layout.tids) {
    log_warning(
        "this VM does not say which kernel thread runs a Java thread; threads that ran "
        "before the attach are not CPU-sampled");
  }
  jint count = 0;
  JvmtiPtr<jthread> threads;
  if (!jvmti_ok(jvmti()->GetAllThreads(&count, threads.out()), "GetAllThreads")) return -1;
  int adopted = 0;
  for (jint i = 0; i < count; ++i) {
    LocalRef ref(jni, threads[i]);
    jint state = 0;
    if (jvmti()->GetThreadState(threads[i], &state) != JVMTI_ERROR_NONE ||
        (state & JVMTI_THREAD_STATE_ALIVE) == 0) {
      continue;
    }
    const jlong eetop = jni->GetLongField(threads[i], layout.eetop);
    if (eetop == 0) continue;  // it ended meanwhile
    auto* env = reinterpret_cast<JNIEnv*>(static_cast<intptr_t>(eetop) + layout.env_offset);
    if (threads::adopt(jni, threads[i], env, read_tid(layout, eetop)) != nullptr) ++adopted;
  }
  return adopted;
}

jint detach(JNIEnv* jni) {
  if (!g_running.exchange(false)) {
    log_error("no JVMPI agent is attached to this VM; nothing to stop");
    return JNI_ERR;
  }
  // As at VM death: no sampling signal after this, the last collections and frees reported, then
  // the agent's JVM_SHUT_DOWN (its report) once every delivery in progress has returned.
  cpu_sampling::stop();
  gc_events::stop();
  data_requests::detach();
  gate::shut_down(jni);
  cpu_sampling::report_stats();  // JVMPI_SAMPLER_STATS: the counters so far, at every detach too

  // Every event off. With no hook wanted, retransformation gives every class the instrumenter
  // changed its original bytes back (the class-file hook leaves them as they are).
  for (jint type = 1; type <= JVMPI_MAX_EVENT_TYPE_VAL; ++type) gate::set_enabled(type, false);
  allocation_events::stop_sampling();
  allocation_events::set_tracking(false);
  monitor_exit_events::reset(jni);
  event_control::apply_pending();
  method_events::events_changed();
  method_events::release_instrumented_classes();
  for (int e = JVMTI_MIN_EVENT_TYPE_VAL; e <= JVMTI_MAX_EVENT_TYPE_VAL; ++e) {
    (void)jvmti()->SetEventNotificationMode(JVMTI_DISABLE, static_cast<jvmtiEvent>(e), nullptr);
  }
  event_control::forget_applied();
  jni_reference_events::uninstall();
  heap_reserve::stop(jni);

  // The session's tables. Object IDs are tags and stay on the objects that carry them (the VM
  // drops them as the objects die), so an object keeps its ID in a later session.
  cpu_sampling::release_timers();
  threads::retire_all();
  thread_events::forget_internal_threads(jni);
  class_events::forget_announcements();
  known_methods::forget_session();
  object_events::forget_arena_announcement();
  gate::reopen();
  // What the session's tables and the retransformations' class bytes used goes back to the
  // system, not only to the allocator's free lists.
  malloc_trim(0);
  return JNI_OK;
}

}  // namespace jvmpi::attach
