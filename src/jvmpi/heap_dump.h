// SPDX-License-Identifier: Apache-2.0
// HEAP_DUMP (levels 0, 1 and 2) and OBJECT_DUMP, in the record formats of the JVMPI
// specification (section 4), built from a JVMTI heap walk (FollowReferences) that starts at the
// GC roots, so the dump holds exactly the live objects.
#pragma once

#include <jni.h>
#include <jvmpi.h>
#include <jvmpi_ext.h>

namespace jvmpi::heap_dump {

// RequestEvent(HEAP_DUMP, arg): arg NULL means level 2.
jint request_heap_dump(JNIEnv* jni, const JVMPI_HeapDumpArg* arg);

// The extension table's StreamHeapDump: the same dump, handed to `sink` in chunks while the heap
// is walked (include/jvmpi_ext.h).
jint JNICALL stream_heap_dump(jint level, jint chunk_bytes, const JVMPIExt_HeapDumpSink* sink);

// RequestEvent(OBJECT_DUMP, obj_id): one record at level 2; instances and arrays read through JNI
// (object_dump.h), class objects from a walk that starts at the object.
jint request_object_dump(JNIEnv* jni, jobjectID object_id);

}  // namespace jvmpi::heap_dump
