// SPDX-License-Identifier: Apache-2.0
// MONITOR_CONTENDED_EXIT: a thread releases a Java monitor that other threads are blocked on.
//
// JVMTI reports no monitor exit. While the agent has the event enabled, classes are instrumented
// (libbci's monitor_exits) to call jvmpi.Tracker.monitorExit(monitor) before every monitorexit and
// at every exit of a synchronized method. That Java method returns at once while the runtime
// counts no blocked contender (a static field this file keeps up to date from JVMTI's
// MonitorContendedEnter/Entered), and otherwise calls the native here, which delivers the event
// when the monitor being released is one that a thread is blocked on.
#pragma once

#include <jni.h>

namespace jvmpi::monitor_exit_events {

// From JVMTI MonitorContendedEnter / MonitorContendedEntered, on the contending thread.
void contention_began(JNIEnv* jni, jobject monitor);
void contention_ended(JNIEnv* jni);

// The event was disabled: JVMTI stops reporting contention, so what is counted would go stale.
// Contention that began before is forgotten; counting starts afresh when it is enabled again.
void reset(JNIEnv* jni);

// The tracker's native monitorExitContended(Object), registered with the other tracker natives.
void JNICALL hook_monitor_exit(JNIEnv* env, jclass tracker, jobject monitor);

// VM init, once the tracker's natives are registered: finds the contender count it publishes.
void start(JNIEnv* jni, jclass tracker);

}  // namespace jvmpi::monitor_exit_events
