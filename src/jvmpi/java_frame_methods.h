// SPDX-License-Identifier: Apache-2.0
// Which methods on the threads' stacks run as Java code (bytecode, interpreted or compiled), not
// native code: the heap dump needs this to tell a JNI local reference from a constant of compiled
// code, which JVMTI's FollowReferences reports under the same kind.
//
// HotSpot's FollowReferences reports, for every compiled frame on a stack, each object its
// compiled code embeds (classes, strings, static final objects it names) as a
// JVMTI_HEAP_REFERENCE_JNI_LOCAL root of that frame, and again for every method inlined into it
// that is on the stack. A deeply inlined server thread thus "holds" hundreds of JNI local
// references that no JNI code made. JNI locals proper belong only to native frames (and to a
// thread with no Java frame at all). The heap reference callback may not call JVMTI, so the
// methods are looked up before the walk.
#pragma once

#include <jni.h>

#include <unordered_set>

namespace jvmpi::java_frame_methods {

// The methods that are not native among those on every live thread's stack now. A method that
// appears on a stack only after this call is not in it (its frames keep JVMTI's kind).
std::unordered_set<jmethodID> on_stacks_now();

}  // namespace jvmpi::java_frame_methods
