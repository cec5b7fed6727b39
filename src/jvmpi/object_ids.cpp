#include "object_ids.h"

#include <atomic>
#include <mutex>

#include "jvmti_access.h"

namespace jvmpi::object_ids {
namespace {

std::atomic<jlong> g_next_tag{8};
// Serialises the read-then-set of an untagged object so two threads cannot give it two IDs.
// SetTag may post ObjectFree events on this thread; that callback never takes this mutex.
std::mutex g_assign_mutex;

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
  if (tag != 0) return from_tag(tag);
  std::lock_guard lock(g_assign_mutex);
  if (jvmti()->GetTag(object, &tag) != JVMTI_ERROR_NONE) return nullptr;
  if (tag == 0) {
    tag = new_tag();
    if (!jvmti_ok(jvmti()->SetTag(object, tag), "SetTag")) return nullptr;
  }
  return from_tag(tag);
}

jlong new_tag() {
  return g_next_tag.fetch_add(8, std::memory_order_relaxed);
}

jobjectID tag_new_object(jobject object) {
  const jlong tag = new_tag();
  return jvmti()->SetTag(object, tag) == JVMTI_ERROR_NONE ? from_tag(tag) : nullptr;
}

jobject object_of(JNIEnv* env, jobjectID id) {
  (void)env;
  jlong tag = to_tag(id);
  if (tag == 0) return nullptr;
  jint count = 0;
  JvmtiPtr<jobject> objects;
  if (jvmti()->GetObjectsWithTags(1, &tag, &count, objects.out(), nullptr) != JVMTI_ERROR_NONE ||
      count == 0) {
    return nullptr;
  }
  for (jint i = 1; i < count; ++i) env->DeleteLocalRef(objects[i]);
  return objects[0];
}

}  // namespace jvmpi::object_ids
