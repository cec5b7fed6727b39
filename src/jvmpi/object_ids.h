// SPDX-License-Identifier: Apache-2.0
// JVMPI object IDs. An object's ID is its JVMTI tag, so it stays the same while the collector
// moves the object, and stays valid until the object is freed (OBJECT_MOVE is never needed).
// Tags are multiples of 8 so the IDs look like aligned pointers to agents that hash them.
#pragma once

#include <jni.h>
#include <jvmpi.h>

#include <cstdint>

namespace jvmpi::object_ids {

inline jobjectID from_tag(jlong tag) {
  return reinterpret_cast<jobjectID>(static_cast<intptr_t>(tag));
}
inline jlong to_tag(jobjectID id) {
  return static_cast<jlong>(reinterpret_cast<intptr_t>(id));
}

// The ID of `object`, assigning one if it has none. Null for a null object.
jobjectID id_of(jobject object);

// A fresh tag (ID) for an object that has none; for heap walks, which set tags themselves.
// Every tag given out after it returns (by any function here, on any thread) is greater.
jlong new_tag();

// Gives a just-allocated object (which no other thread can have tagged) its ID.
jobjectID tag_new_object(jobject object);

// The ID of `object` if it has one, else null.
jobjectID existing_id_of(jobject object);

// A new local reference (in `env`) to the object with this ID, or null when no live object has it.
jobject object_of(JNIEnv* env, jobjectID id);

}  // namespace jvmpi::object_ids
