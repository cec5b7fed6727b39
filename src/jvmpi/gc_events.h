// SPDX-License-Identifier: Apache-2.0
// GC_START/GC_FINISH, and everything the collector frees (class unloading).
//
// JVMTI reports collections on a VM thread with every Java thread stopped, where an agent handler
// that takes a lock could deadlock the VM, and ObjectFree events where only a few JVMTI functions
// may be used. So the callbacks just record what happened, and a runtime thread ("JVMPI GC
// reporter") delivers GC_START, what was freed, and GC_FINISH to the agent in that order right
// after each collection, with the heap figures measured then.
#pragma once

#include <jni.h>
#include <jvmti.h>

namespace jvmpi::gc_events {

// Prepares what the callbacks use; called during start-up before any callback can run.
bool initialize();

void JNICALL on_gc_finish(jvmtiEnv* jvmti);
void JNICALL on_object_free(jvmtiEnv* jvmti, jlong tag);

// Starts the reporter thread (at VM init).
void start(JNIEnv* jni);

// Delivers whatever is pending and stops the reporter (at VM death, before JVM_SHUT_DOWN).
void stop();

}  // namespace jvmpi::gc_events
