// SPDX-License-Identifier: Apache-2.0
// Method IDs as the agent knows them. A frame still running the old version of a method whose
// class was retransformed (for METHOD_ENTRY, MONITOR_CONTENDED_EXIT ...) while the frame was
// active is named by JVMTI with an ID of its own, for the obsolete method, which no CLASS_LOAD
// lists; such IDs are mapped to the ID of the method's current version, the one CLASS_LOAD gave.
#pragma once

#include <jni.h>

namespace jvmpi::known_methods {

// Called before classes are retransformed: only then can stacks hold obsolete methods.
void note_retransformation();

// Called after classes were retransformed: gives every obsolete method on a thread's stack its
// method ID now and maps it. HotSpot's AsyncGetCallTrace (the CPU sampler's walker) can only name
// methods that already have an ID, and only outside the signal handler can an ID be mapped.
void after_retransformation(JNIEnv* jni);

// At the end of an attached session: the mapping is dropped, so that it holds only what one
// session's retransformations put on stacks. A later session maps its obsolete methods afresh.
void forget_session();

// `method`, or for an obsolete method the current version's ID (same class, name and signature).
jmethodID known_id(jmethodID method);

}  // namespace jvmpi::known_methods
