// SPDX-License-Identifier: Apache-2.0
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

// A local reference to the element class of an array class (null if none). Reads
// java.lang.Class's componentType field, so no Java code runs.
jclass component_class(JNIEnv* jni, jclass array_class);

// The ID of the element class of an array class (null for primitive arrays or on failure).
// Reads java.lang.Class's componentType field, so no Java code runs.
jobjectID element_class_id(JNIEnv* jni, jclass array_class);

// Sends ARENA_NEW for the heap arena once: now if the VM is live, else at VM init.
void announce_heap_arena_when_live();
// Sends ARENA_NEW now if it has not been sent (allocation events come only in the live phase,
// possibly on other threads before VM init has run).
void ensure_heap_arena_announced();
// Called at VM init.
void start();
// At a detach: the next session's agent hears of the arena again.
void forget_arena_announcement();

// RequestEvent(OBJECT_ALLOC, obj_id).
jint request_object_alloc(JNIEnv* jni, jobjectID object_id);

}  // namespace jvmpi::object_events
