// SPDX-License-Identifier: Apache-2.0
#include "jni_reference_events.h"

#include <jvmpi.h>

#include <atomic>
#include <mutex>

#include "event_gate.h"
#include "jvmti_access.h"
#include "log.h"
#include "object_ids.h"

namespace jvmpi::jni_reference_events {
namespace {

JNINativeInterface_ g_original;  // the VM's functions, called by the wrappers
std::atomic<bool> g_installed{false};
thread_local int t_internal_depth = 0;

std::mutex g_mutex;
// Live references created while the wrappers were in place, and their object's tag.
std::unordered_map<jobject, jlong> g_strong;
std::unordered_map<jobject, jlong> g_weak;

void send_alloc(JNIEnv* env, jint type, jobjectID id, jobject ref) {
  if (!gate::wants(type)) return;
  JVMPI_Event event{};
  event.event_type = type;
  event.env_id = env;
  event.u.jni_globalref_alloc.obj_id = id;
  event.u.jni_globalref_alloc.ref_id = ref;
  gate::deliver(&event);
}

void send_free(JNIEnv* env, jint type, jobject ref) {
  if (!gate::wants(type)) return;
  JVMPI_Event event{};
  event.event_type = type;
  event.env_id = env;
  event.u.jni_globalref_free.ref_id = ref;
  gate::deliver(&event);
}

jobject created(JNIEnv* env, jobject object, jobject ref, bool weak) {
  if (ref == nullptr || object == nullptr || t_internal_depth > 0) return ref;
  const jobjectID id = object_ids::id_of(object);
  {
    std::lock_guard lock(g_mutex);
    (weak ? g_weak : g_strong)[ref] = object_ids::to_tag(id);
  }
  send_alloc(env, weak ? JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC : JVMPI_EVENT_JNI_GLOBALREF_ALLOC, id,
             ref);
  return ref;
}

// Whether `ref` was one we reported (so its deletion is reported too).
bool forget(jobject ref, bool weak) {
  if (ref == nullptr || t_internal_depth > 0) return false;
  std::lock_guard lock(g_mutex);
  return (weak ? g_weak : g_strong).erase(ref) > 0;
}

jobject JNICALL new_global_ref(JNIEnv* env, jobject object) {
  return created(env, object, g_original.NewGlobalRef(env, object), false);
}

void JNICALL delete_global_ref(JNIEnv* env, jobject ref) {
  const bool known = forget(ref, false);
  g_original.DeleteGlobalRef(env, ref);
  if (known) send_free(env, JVMPI_EVENT_JNI_GLOBALREF_FREE, ref);
}

jweak JNICALL new_weak_global_ref(JNIEnv* env, jobject object) {
  return created(env, object, g_original.NewWeakGlobalRef(env, object), true);
}

void JNICALL delete_weak_global_ref(JNIEnv* env, jweak ref) {
  const bool known = forget(ref, true);
  g_original.DeleteWeakGlobalRef(env, ref);
  if (known) send_free(env, JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE, ref);
}

}  // namespace

InternalScope::InternalScope() {
  ++t_internal_depth;
}
InternalScope::~InternalScope() {
  --t_internal_depth;
}

bool install() {
  if (g_installed.load()) return true;
  jniNativeInterface* table = nullptr;
  if (!jvmti_ok(jvmti()->GetJNIFunctionTable(&table), "GetJNIFunctionTable")) return false;
  g_original = *table;
  table->NewGlobalRef = new_global_ref;
  table->DeleteGlobalRef = delete_global_ref;
  table->NewWeakGlobalRef = new_weak_global_ref;
  table->DeleteWeakGlobalRef = delete_weak_global_ref;
  const bool ok = jvmti_ok(jvmti()->SetJNIFunctionTable(table), "SetJNIFunctionTable");
  jvmti()->Deallocate(reinterpret_cast<unsigned char*>(table));
  g_installed.store(ok);
  return ok;
}

void uninstall() {
  if (!g_installed.load()) return;
  // The VM's own functions again. A call already inside a wrapper finishes through g_original,
  // which stays as it is.
  if (!jvmti_ok(jvmti()->SetJNIFunctionTable(&g_original), "SetJNIFunctionTable")) return;
  g_installed.store(false);
  std::lock_guard lock(g_mutex);
  std::unordered_map<jobject, jlong>().swap(g_strong);
  std::unordered_map<jobject, jlong>().swap(g_weak);
}

std::unordered_map<jlong, jobject> global_refs_by_tag() {
  std::unordered_map<jlong, jobject> out;
  std::lock_guard lock(g_mutex);
  for (const auto& [ref, tag] : g_strong) out.emplace(tag, ref);
  return out;
}

}  // namespace jvmpi::jni_reference_events
