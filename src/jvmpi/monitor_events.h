// SPDX-License-Identifier: Apache-2.0
// Java monitor events: MONITOR_CONTENDED_ENTER/ENTERED, MONITOR_WAIT/WAITED, and the Thread.sleep
// convention (WAIT/WAITED with a NULL object), which comes from wrapping the VM's sleep native.
#pragma once

#include <jni.h>
#include <jvmti.h>

namespace jvmpi::monitor_events {

void JNICALL on_contended_enter(jvmtiEnv*, JNIEnv* jni, jthread thread, jobject object);
void JNICALL on_contended_entered(jvmtiEnv*, JNIEnv* jni, jthread thread, jobject object);
void JNICALL on_wait(jvmtiEnv*, JNIEnv* jni, jthread thread, jobject object, jlong timeout);
void JNICALL on_waited(jvmtiEnv*, JNIEnv* jni, jthread thread, jobject object, jboolean timed_out);

// From VM initialisation on, monitor events are reported (see .cpp).
void start_reporting();

// Replaces the VM's sleep native (JVM_Sleep, or JVM_SleepNanos from JDK 21) with a wrapper that
// reports the sleep.
void JNICALL on_native_method_bind(jvmtiEnv*, JNIEnv* jni, jthread thread, jmethodID method,
                                   void* address, void** new_address);

}  // namespace jvmpi::monitor_events
