// SPDX-License-Identifier: Apache-2.0
// A JVMPI agent in a VM that is already running (JVMTI Agent_OnAttach) and taken out again
// (detach): the threads that ran before the attach made known to the runtime, and every event,
// instrumented class, thread and table of a session undone at its end, so that the next attach
// of the same library (HotSpot never unloads an agent library) starts afresh.
#pragma once

#include <jni.h>

namespace jvmpi::attach {

// Whether a JVMPI agent runs now (from JVM_OnLoad's success to its detach or the VM's death).
bool session_running();
// Marks the session running (JVM_OnLoad succeeded) or not.
void set_session_running(bool running);

// Registers every live thread of the VM that the runtime has not seen start, so that the CPU-time
// sampler can arm their timers and the agent hears of them (THREAD_START) like of the threads
// that ran at VM init. Returns how many threads were adopted; -1 when this VM does not say where
// a thread's JNIEnv lies (its threads are then registered at their first event only).
int adopt_running_threads(JNIEnv* jni);

// Ends the session: the agent gets JVM_SHUT_DOWN (its report), then every event is disabled, every
// class the bytecode instrumenter changed gets its original bytes back, the runtime's threads end
// and its per-session tables are freed. Returns JNI_OK, or JNI_ERR (one line on stderr) when no
// session runs.
jint detach(JNIEnv* jni);

}  // namespace jvmpi::attach
