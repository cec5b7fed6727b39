// Object events that exist in this part of the runtime: requested OBJECT_ALLOC (the defining
// event of an object ID the agent has not seen).
#pragma once

#include <jni.h>
#include <jvmpi.h>

namespace jvmpi::object_events {

// The one heap arena: the VM's collectors manage their spaces themselves, so JVMPI sees one.
constexpr jint kHeapArena = 1;

// The JVMPI type code of an object's class: JVMPI_NORMAL_OBJECT, JVMPI_CLASS for arrays of
// references, or the primitive code of a primitive array. `element_signature` receives the
// element class signature of a reference array.
jint type_code(const char* class_signature, const char** element_signature);

// RequestEvent(OBJECT_ALLOC, obj_id).
jint request_object_alloc(JNIEnv* jni, jobjectID object_id);

}  // namespace jvmpi::object_events
