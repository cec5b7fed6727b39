// SPDX-License-Identifier: Apache-2.0
// The VM's life as the agent sees it: JVM_INIT_DONE at VM init (after the classes and threads that
// predate it have been announced), JVM_SHUT_DOWN at VM death, and ProfilerExit.
#pragma once

#include <jni.h>
#include <jvmti.h>

namespace jvmpi::lifecycle {

void JNICALL on_vm_start(jvmtiEnv* jvmti, JNIEnv* jni);
void JNICALL on_vm_init(jvmtiEnv* jvmti, JNIEnv* jni, jthread thread);
void JNICALL on_vm_death(jvmtiEnv* jvmti, JNIEnv* jni);

// What VM init starts, on the calling thread `thread`, ending with JVM_INIT_DONE: at VM init, or
// at once after the agent's JVM_OnLoad when the runtime was attached to a running VM.
void begin_live(JNIEnv* jni, jthread thread);

void profiler_exit(jint code);

}  // namespace jvmpi::lifecycle
