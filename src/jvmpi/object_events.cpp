// SPDX-License-Identifier: Apache-2.0
#include "object_events.h"

#include <jvmti.h>

#include <atomic>

#include "class_events.h"
#include "class_layouts.h"
#include "event_gate.h"
#include "jvmti_access.h"
#include "object_ids.h"

namespace jvmpi::object_events {

jint type_code(const char* sig, const char** element_signature) {
  if (element_signature != nullptr) *element_signature = nullptr;
  if (sig == nullptr || sig[0] != '[') return JVMPI_NORMAL_OBJECT;
  const jint code = class_layouts::type_code_of_signature(sig[1]);
  if (code == JVMPI_CLASS && element_signature != nullptr) *element_signature = sig + 1;
  return code;
}

namespace {
std::atomic<bool> g_live{false};
std::atomic<bool> g_arena_announced{false};

void send_arena_new() {
  if (!gate::wants(JVMPI_EVENT_ARENA_NEW) || g_arena_announced.exchange(true)) return;
  JVMPI_Event event{};
  event.event_type = JVMPI_EVENT_ARENA_NEW;
  event.env_id = current_jni_env();
  event.u.new_arena.arena_id = kHeapArena;
  event.u.new_arena.arena_name = "Java heap";
  gate::deliver(&event);
}
}  // namespace

void announce_heap_arena_when_live() {
  if (g_live.load()) send_arena_new();
}

void ensure_heap_arena_announced() {
  if (!g_arena_announced.load(std::memory_order_relaxed)) send_arena_new();
}

void start() {
  g_live.store(true);
  send_arena_new();
}

void forget_arena_announcement() {
  g_arena_announced.store(false);
}

jclass component_class(JNIEnv* jni, jclass array_class) {
  static jfieldID component_field = [jni] {
    LocalRef class_class(jni, jni->FindClass("java/lang/Class"));
    jfieldID f = class_class.get() != nullptr
                     ? jni->GetFieldID(static_cast<jclass>(class_class.get()), "componentType",
                                       "Ljava/lang/Class;")
                     : nullptr;
    if (f == nullptr) jni->ExceptionClear();
    return f;
  }();
  if (component_field == nullptr) return nullptr;
  return static_cast<jclass>(jni->GetObjectField(array_class, component_field));
}

jobjectID element_class_id(JNIEnv* jni, jclass array_class) {
  LocalRef component(jni, component_class(jni, array_class));
  if (component.get() == nullptr) return nullptr;
  return class_events::ensure_announced(jni, static_cast<jclass>(component.get()));
}

jint request_object_alloc(JNIEnv* jni, jobjectID object_id) {
  if (jni == nullptr || object_id == nullptr) return JVMPI_FAIL;
  jobject object = object_ids::object_of(jni, object_id);
  if (object == nullptr) return JVMPI_FAIL;
  LocalRef object_ref(jni, object);
  LocalRef klass(jni, jni->GetObjectClass(object));
  JvmtiPtr<char> signature;
  jlong size = 0;
  if (jvmti()->GetClassSignature(static_cast<jclass>(klass.get()), signature.out(), nullptr) !=
          JVMTI_ERROR_NONE ||
      jvmti()->GetObjectSize(object, &size) != JVMTI_ERROR_NONE) {
    return JVMPI_FAIL;
  }
  const char* element = nullptr;
  const jint code = type_code(signature.get(), &element);

  JVMPI_Event event{};
  event.event_type = JVMPI_EVENT_OBJECT_ALLOC;
  event.env_id = jni;
  auto& e = event.u.obj_alloc;
  e.arena_id = kHeapArena;
  e.is_array = code;
  e.size = static_cast<jint>(size);
  e.obj_id = object_id;
  if (code == JVMPI_NORMAL_OBJECT) {
    // java.lang.Class's own class object is an instance of itself. The JVMs that shipped JVMPI
    // gave it a NULL class_id, so agents that request the class of every object they meet end
    // their chase there instead of recursing forever.
    e.class_id = jni->IsSameObject(klass.get(), object)
                     ? nullptr
                     : class_events::ensure_announced(jni, static_cast<jclass>(klass.get()));
  } else if (code == JVMPI_CLASS) {
    // Arrays of references name their element class; primitive arrays name none.
    e.class_id = element_class_id(jni, static_cast<jclass>(klass.get()));
  }
  gate::deliver_requested(&event);
  return JVMPI_SUCCESS;
}

}  // namespace jvmpi::object_events
