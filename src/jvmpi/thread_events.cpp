// SPDX-License-Identifier: Apache-2.0
#include "thread_events.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "cpu_sampling.h"
#include "event_gate.h"
#include "jni_reference_events.h"
#include "jvmti_access.h"
#include "log.h"
#include "object_ids.h"
#include "thread_registry.h"

namespace jvmpi::thread_events {
namespace {

std::mutex g_mutex;
// Global references to the runtime's own threads, recorded before they start.
std::vector<jobject> g_internal_threads;

bool is_internal(JNIEnv* jni, jthread thread) {
  std::lock_guard lock(g_mutex);
  for (jobject t : g_internal_threads) {
    if (jni->IsSameObject(t, thread)) return true;
  }
  return false;
}

// Builds and delivers THREAD_START for `record` on the calling thread (`caller`). Fails before the
// live phase, when JVMTI cannot describe threads yet.
bool send_thread_start(JNIEnv* caller, const ThreadRecord& record, bool requested) {
  jvmtiThreadInfo info{};
  if (jvmti()->GetThreadInfo(record.thread, &info) != JVMTI_ERROR_NONE) return false;
  JvmtiPtr<char> thread_name;
  *thread_name.out() = info.name;
  LocalRef group_ref(caller, info.thread_group);
  LocalRef loader_ref(caller, info.context_class_loader);

  JvmtiPtr<char> group_name;
  JvmtiPtr<char> parent_name;
  if (info.thread_group != nullptr) {
    jvmtiThreadGroupInfo group{};
    if (jvmti()->GetThreadGroupInfo(info.thread_group, &group) == JVMTI_ERROR_NONE) {
      *group_name.out() = group.name;
      LocalRef parent_ref(caller, group.parent);
      jvmtiThreadGroupInfo parent{};
      if (group.parent != nullptr &&
          jvmti()->GetThreadGroupInfo(group.parent, &parent) == JVMTI_ERROR_NONE) {
        *parent_name.out() = parent.name;
        caller->DeleteLocalRef(parent.parent);
      }
    }
  }

  JVMPI_Event event{};
  event.event_type = JVMPI_EVENT_THREAD_START;
  event.env_id = caller;
  auto& e = event.u.thread_start;
  e.thread_name = thread_name.get();
  e.group_name = group_name.get();
  e.parent_name = parent_name.get();
  e.thread_id = object_ids::id_of(record.thread);
  e.thread_env_id = record.env;
  if (requested) {
    gate::deliver_requested(&event);
  } else {
    gate::deliver(&event);
  }
  return true;
}

// What ensure_known already established for the calling thread. A JNIEnv address can come back
// for a later attachment of the same OS thread, so the thread's end clears it.
struct KnownThread {
  JNIEnv* registered = nullptr;
  JNIEnv* settled = nullptr;
  // Set at the thread's end: what it still does afterwards (joining threads are notified under the
  // Thread object's monitor, which may be contended) must not register it, and announce it, anew.
  JNIEnv* ended = nullptr;
  bool deliverable = false;  // with settled: whether the thread's events go to the agent
  unsigned session = 0;      // with settled: the profiling session it was settled in
};
thread_local KnownThread t_known;
// Counts attaches: what a thread settled for an earlier session's agent does not hold for the next.
std::atomic<unsigned> g_session{0};

void announce(JNIEnv* caller, const ThreadRecordPtr& record) {
  if (record == nullptr || record->internal || record->announced.load() ||
      !gate::wants(JVMPI_EVENT_THREAD_START)) {
    return;
  }
  // Claimed first, so concurrent announcers (VM init's sweep, the thread's own event) send once.
  if (record->announced.exchange(true)) return;
  // Threads seen in JVMTI's start phase are announced at VM init (announce_known_threads).
  if (!send_thread_start(caller, *record, false)) record->announced.store(false);
}

}  // namespace

void JNICALL on_thread_start(jvmtiEnv*, JNIEnv* jni, jthread thread) {
  t_known = {};  // a new attachment of this OS thread may reuse an ended one's JNIEnv
  bool created = false;
  ThreadRecordPtr record = threads::current(jni, thread, &created);
  if (record == nullptr) return;
  if (created && is_internal(jni, thread)) record->internal = true;
  announce(jni, record);
  cpu_sampling::on_thread_start(jni);
}

void JNICALL on_thread_end(jvmtiEnv*, JNIEnv* jni, jthread) {
  cpu_sampling::on_thread_end(jni);  // its timer goes before anything of the thread does
  ThreadRecordPtr record = threads::find(jni);
  // The runtime's own threads end unreported, but for the one the agent was told about.
  if (record != nullptr && (!record->internal || record->announced.load()) &&
      gate::wants(JVMPI_EVENT_THREAD_END)) {
    JVMPI_Event event{};
    event.event_type = JVMPI_EVENT_THREAD_END;
    event.env_id = jni;
    gate::deliver(&event);
  }
  threads::remove(jni);
  t_known = {};
  t_known.ended = jni;
}

bool ensure_known(JNIEnv* jni, jthread thread) {
  if (jni == nullptr) return true;
  // Every method event comes through here: once the thread is registered and announced (or needs
  // no announcement now), the check costs one thread-local read.
  KnownThread& known = t_known;
  if (known.settled == jni && known.session == g_session.load(std::memory_order_relaxed)) {
    return known.deliverable;
  }
  // After its THREAD_END a thread's events go to no agent: neither what it still does while it
  // ends, nor what a new attachment of the same OS thread (the launcher's DestroyJavaVM thread
  // reuses main's JNIEnv) does before JVMTI's ThreadStart for it, which clears this.
  if (const unsigned session = g_session.load(std::memory_order_relaxed);
      known.session != session) {
    JNIEnv* const ended = known.ended;
    known = {};
    known.ended = ended;
    known.session = session;
  }
  if (known.ended == jni) return false;
  if (known.registered == jni && !gate::wants(JVMPI_EVENT_THREAD_START)) return true;
  ThreadRecordPtr record = threads::current(jni, thread);
  if (record == nullptr) return true;
  known.registered = jni;
  // A thread first seen in the start phase, when it could not be described, is announced at
  // the first event it causes afterwards.
  if (!record->announced.load(std::memory_order_relaxed)) announce(jni, record);
  // The runtime's own threads are never announced, so nothing they do is delivered either.
  const bool deliverable = !record->internal && record->announced.load();
  if (record->internal || record->announced.load()) {
    known.settled = jni;
    known.deliverable = deliverable;
  }
  return deliverable || (!record->internal && !gate::wants(JVMPI_EVENT_THREAD_START));
}

void begin_session() {
  g_session.fetch_add(1);
}

void forget_internal_threads(JNIEnv* jni) {
  std::lock_guard lock(g_mutex);
  jni_reference_events::InternalScope internal_ref;
  for (jobject t : g_internal_threads) jni->DeleteGlobalRef(t);
  g_internal_threads.clear();
}

void announce_known_threads(JNIEnv* jni) {
  for (const auto& record : threads::all()) announce(jni, record);
}

bool announce_reporter_thread(JNIEnv* jni) {
  ThreadRecordPtr record = threads::find(jni);
  if (record == nullptr) return false;
  if (record->announced.load()) return true;
  if (!gate::wants(JVMPI_EVENT_THREAD_START) || record->announced.exchange(true)) {
    return record->announced.load();
  }
  if (!send_thread_start(jni, *record, false)) {
    record->announced.store(false);
    return false;
  }
  return true;
}

void end_reporter_thread(JNIEnv* jni) {
  ThreadRecordPtr record = threads::find(jni);
  // Cleared first, so JVMTI's ThreadEnd for it, should it still be delivered, sends nothing.
  if (record == nullptr || !record->announced.exchange(false) ||
      !gate::wants(JVMPI_EVENT_THREAD_END)) {
    return;
  }
  JVMPI_Event event{};
  event.event_type = JVMPI_EVENT_THREAD_END;
  event.env_id = jni;
  gate::deliver(&event);
}

jint request_thread_start(JNIEnv* jni, jobjectID thread_id) {
  if (jni == nullptr || thread_id == nullptr) return JVMPI_FAIL;
  jobject object = object_ids::object_of(jni, thread_id);
  if (object == nullptr) return JVMPI_FAIL;
  LocalRef ref(jni, object);
  ThreadRecordPtr record = threads::find_by_object(jni, object);
  if (record == nullptr) return JVMPI_FAIL;  // not started, or already ended
  return send_thread_start(jni, *record, true) ? JVMPI_SUCCESS : JVMPI_FAIL;
}

bool start_thread(JNIEnv* jni, const char* name, jint priority, jvmtiStartFunction body, void* arg,
                  bool internal) {
  if (jni == nullptr) return false;
  jclass thread_class = jni->FindClass("java/lang/Thread");
  if (thread_class == nullptr) {
    jni->ExceptionClear();
    return false;
  }
  LocalRef class_ref(jni, thread_class);
  jmethodID ctor = jni->GetMethodID(thread_class, "<init>", "(Ljava/lang/String;)V");
  jstring jname = jni->NewStringUTF(name != nullptr ? name : "JVMPI agent thread");
  if (ctor == nullptr || jname == nullptr) {
    jni->ExceptionClear();
    return false;
  }
  LocalRef name_ref(jni, jname);
  jobject thread = jni->NewObject(thread_class, ctor, jname);
  if (thread == nullptr) {
    jni->ExceptionClear();
    return false;
  }
  LocalRef thread_ref(jni, thread);
  if (internal) {
    jni_reference_events::InternalScope internal_ref;
    std::lock_guard lock(g_mutex);
    g_internal_threads.push_back(jni->NewGlobalRef(thread));
  }
  priority = std::clamp(priority, static_cast<jint>(JVMTI_THREAD_MIN_PRIORITY),
                        static_cast<jint>(JVMTI_THREAD_MAX_PRIORITY));
  return jvmti_ok(jvmti()->RunAgentThread(thread, body, arg, priority), "RunAgentThread");
}

}  // namespace jvmpi::thread_events
