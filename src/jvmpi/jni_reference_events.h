// SPDX-License-Identifier: Apache-2.0
// JNI_GLOBALREF_ALLOC/FREE and JNI_WEAK_GLOBALREF_ALLOC/FREE, from JVMTI's JNI function-table
// interception: NewGlobalRef, DeleteGlobalRef, NewWeakGlobalRef and DeleteWeakGlobalRef are
// wrapped for every thread. The runtime's own references are not reported.
#pragma once

#include <jni.h>
#include <jvmti.h>

#include <unordered_map>

namespace jvmpi::jni_reference_events {

// Installs the wrappers (start or live phase). Returns whether they are in place.
bool install();

// Puts the VM's own functions back and forgets the references seen (a detach).
void uninstall();

// Marks the calling thread's JNI reference calls as the runtime's own while in scope.
class InternalScope {
 public:
  InternalScope();
  ~InternalScope();
  InternalScope(const InternalScope&) = delete;
  InternalScope& operator=(const InternalScope&) = delete;
};

// Strong global references the program holds now, by the tag (ID) of the object each refers to,
// for the heap dump's JNI-global roots. Only references created since install() are known.
std::unordered_map<jlong, jobject> global_refs_by_tag();

}  // namespace jvmpi::jni_reference_events
