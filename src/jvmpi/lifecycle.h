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

void profiler_exit(jint code);

}  // namespace jvmpi::lifecycle
