#include "object_ids.h"

#include <atomic>
#include <mutex>
#include <unordered_map>

#include "jni_reference_events.h"
#include "jvmti_access.h"

namespace jvmpi::object_ids {
namespace {

std::atomic<jlong> g_next_tag{8};
// Serialises the read-then-set of an untagged object so two threads cannot give it two IDs.
// SetTag may post ObjectFree events on this thread; that callback never takes this mutex.
std::mutex g_assign_mutex;

// IDs handed out before the live phase (the classes and objects of VM start-up) cannot be resolved
// through GetObjectsWithTags, which is live-phase only; agents resolve them inside the very
// CLASS_LOAD that carries them. They are kept here as weak references, a few hundred at most.
std::atomic<bool> g_before_live{true};
std::mutex g_early_mutex;
std::unordered_map<jlong, jweak> g_early_objects;

void remember_early(jobject object, jlong tag) {
  if (!g_before_live.load(std::memory_order_relaxed)) return;
  if (current_phase() == JVMTI_PHASE_LIVE) {
    g_before_live.store(false, std::memory_order_relaxed);
    return;
  }
  JNIEnv* env = current_jni_env();
  if (env == nullptr) return;
  {
    std::lock_guard lock(g_early_mutex);
    if (g_early_objects.count(tag) != 0) return;
  }
  jweak weak;
  {
    jni_reference_events::InternalScope internal;  // the runtime's own reference: not reported
    weak = env->NewWeakGlobalRef(object);
  }
  if (weak == nullptr) return;
  std::lock_guard lock(g_early_mutex);
  if (!g_early_objects.emplace(tag, weak).second) {
    jni_reference_events::InternalScope internal;
    env->DeleteWeakGlobalRef(weak);
  }
}

jobject early_object(JNIEnv* env, jlong tag) {
  std::lock_guard lock(g_early_mutex);
  auto it = g_early_objects.find(tag);
  if (it == g_early_objects.end() || env == nullptr) return nullptr;
  return env->NewLocalRef(it->second);  // null once the object was collected
}

}  // namespace

jobjectID existing_id_of(jobject object) {
  if (object == nullptr) return nullptr;
  jlong tag = 0;
  if (jvmti()->GetTag(object, &tag) != JVMTI_ERROR_NONE) return nullptr;
  return from_tag(tag);
}

jobjectID id_of(jobject object) {
  if (object == nullptr) return nullptr;
  jlong tag = 0;
  if (jvmti()->GetTag(object, &tag) != JVMTI_ERROR_NONE) return nullptr;
  if (tag != 0) {
    remember_early(object, tag);
    return from_tag(tag);
  }
  {
    std::lock_guard lock(g_assign_mutex);
    if (jvmti()->GetTag(object, &tag) != JVMTI_ERROR_NONE) return nullptr;
    if (tag == 0) {
      tag = new_tag();
      if (!jvmti_ok(jvmti()->SetTag(object, tag), "SetTag")) return nullptr;
    }
  }
  remember_early(object, tag);
  return from_tag(tag);
}

jlong new_tag() {
  return g_next_tag.fetch_add(8, std::memory_order_relaxed);
}

jobjectID tag_new_object(jobject object) {
  const jlong tag = new_tag();
  if (jvmti()->SetTag(object, tag) != JVMTI_ERROR_NONE) return nullptr;
  remember_early(object, tag);
  return from_tag(tag);
}

jobject object_of(JNIEnv* env, jobjectID id) {
  jlong tag = to_tag(id);
  if (tag == 0) return nullptr;
  jint count = 0;
  JvmtiPtr<jobject> objects;
  const jvmtiError error = jvmti()->GetObjectsWithTags(1, &tag, &count, objects.out(), nullptr);
  if (error == JVMTI_ERROR_WRONG_PHASE) return early_object(env, tag);
  if (error != JVMTI_ERROR_NONE || count == 0) return nullptr;
  for (jint i = 1; i < count; ++i) env->DeleteLocalRef(objects[i]);
  return objects[0];
}

}  // namespace jvmpi::object_ids
