#include "object_events.h"

#include <jvmti.h>

#include "class_events.h"
#include "event_gate.h"
#include "jvmti_access.h"
#include "object_ids.h"

namespace jvmpi::object_events {

jint type_code(const char* sig, const char** element_signature) {
  if (element_signature != nullptr) *element_signature = nullptr;
  if (sig == nullptr || sig[0] != '[') return JVMPI_NORMAL_OBJECT;
  switch (sig[1]) {
    case 'Z': return JVMPI_BOOLEAN;
    case 'B': return JVMPI_BYTE;
    case 'C': return JVMPI_CHAR;
    case 'S': return JVMPI_SHORT;
    case 'I': return JVMPI_INT;
    case 'J': return JVMPI_LONG;
    case 'F': return JVMPI_FLOAT;
    case 'D': return JVMPI_DOUBLE;
    default:
      if (element_signature != nullptr) *element_signature = sig + 1;
      return JVMPI_CLASS;
  }
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
    e.class_id = class_events::ensure_announced(jni, static_cast<jclass>(klass.get()));
  } else if (code == JVMPI_CLASS) {
    // Arrays of references name their element class; primitive arrays name none.
    jmethodID get_component =
        jni->GetMethodID(jni->FindClass("java/lang/Class"), "getComponentType",
                         "()Ljava/lang/Class;");
    if (get_component != nullptr) {
      LocalRef component(jni, jni->CallObjectMethod(klass.get(), get_component));
      if (jni->ExceptionCheck()) jni->ExceptionClear();
      if (component.get() != nullptr) {
        e.class_id = class_events::ensure_announced(jni, static_cast<jclass>(component.get()));
      }
    } else {
      jni->ExceptionClear();
    }
  }
  gate::deliver_requested(&event);
  return JVMPI_SUCCESS;
}

}  // namespace jvmpi::object_events
