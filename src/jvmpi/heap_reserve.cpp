// SPDX-License-Identifier: Apache-2.0
#include "heap_reserve.h"

#include <atomic>

#include "allocation_events.h"
#include "jni_reference_events.h"
#include "jvmti_access.h"
#include "object_ids.h"

namespace jvmpi::heap_reserve {
namespace {

// Enough for the DestroyJavaVM thread, the shutdown hooks of the JDK and what the agent's last
// reports need of the heap (the runtime links classes for a heap dump through reflection).
constexpr jsize kReserveBytes = 2 << 20;

std::atomic<jobject> g_reserve{nullptr};  // global reference
std::atomic<jlong> g_tag{0};              // the reserve's tag, which no ID handed to the agent has

}  // namespace

void start(JNIEnv* jni) {
  if (g_reserve.load() != nullptr) return;
  allocation_events::InternalAllocations internal;
  jni_reference_events::InternalScope internal_reference;
  jbyteArray array = jni->NewByteArray(kReserveBytes);
  if (array == nullptr) {
    jni->ExceptionClear();
    return;
  }
  const jlong tag = object_ids::new_tag();
  if (jvmti()->SetTag(array, tag) == JVMTI_ERROR_NONE) g_tag.store(tag);
  g_reserve.store(jni->NewGlobalRef(array));
  jni->DeleteLocalRef(array);
  if (g_reserve.load() != nullptr) {
    jvmti_ok(
        jvmti()->SetEventNotificationMode(JVMTI_ENABLE, JVMTI_EVENT_RESOURCE_EXHAUSTED, nullptr),
        "SetEventNotificationMode");
  }
}

void JNICALL on_resource_exhausted(jvmtiEnv*, JNIEnv* jni, jint flags, const void*, const char*) {
  if ((flags & JVMTI_RESOURCE_EXHAUSTED_JAVA_HEAP) == 0 || jni == nullptr) return;
  jobject reserve = g_reserve.exchange(nullptr);
  if (reserve == nullptr) return;
  // Untagged first: its collection is no OBJECT_FREE of anything the agent knew.
  jvmti()->SetTag(reserve, 0);
  g_tag.store(0);
  jni_reference_events::InternalScope internal_reference;
  jni->DeleteGlobalRef(reserve);
}

void stop(JNIEnv* jni) {
  jvmti()->SetEventNotificationMode(JVMTI_DISABLE, JVMTI_EVENT_RESOURCE_EXHAUSTED, nullptr);
  jobject reserve = g_reserve.exchange(nullptr);
  if (reserve == nullptr) return;
  jvmti()->SetTag(reserve, 0);
  g_tag.store(0);
  jni_reference_events::InternalScope internal_reference;
  jni->DeleteGlobalRef(reserve);
}

jlong object_tag() {
  return g_tag.load();
}

}  // namespace jvmpi::heap_reserve
