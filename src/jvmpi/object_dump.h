// SPDX-License-Identifier: Apache-2.0
// The OBJECT_DUMP record (JVMPI specification, section 4, level 2) of one instance or array, read
// from the object itself through JNI: its class's cached field layout, Get<Type>Field and
// Get<Type>ArrayRegion, references turned into object IDs through the ID table. No heap walk and
// no safepoint, so a request costs microseconds whatever the size of the heap. Class objects are
// left to the heap walk: their record holds resolved constant-pool entries JNI cannot read.
#pragma once

#include <jni.h>

#include <vector>

namespace jvmpi::object_dump {

enum class Outcome {
  kWritten,        // `record` holds the object's record
  kFailed,         // the object's class cannot be read
  kNeedsHeapWalk,  // a class object, an object of a class that could not be linked, the
                   // runtime's own heap reserve: the heap walk describes those
};

// Writes the level-2 record of `object`, whose ID is `tag`, into `record`.
Outcome write_record(JNIEnv* jni, jobject object, jlong tag, std::vector<char>& record);

// Delivers the requested OBJECT_DUMP event carrying the record at `data` on the calling thread.
void deliver(JNIEnv* jni, char* data, size_t size);

}  // namespace jvmpi::object_dump
