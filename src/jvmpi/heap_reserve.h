// SPDX-License-Identifier: Apache-2.0
// A little Java heap held back for the VM's own shutdown.
//
// When a program dies of OutOfMemoryError with its heap still full, HotSpot cannot allocate the
// java.lang.Thread of the thread that destroys the VM: DestroyJavaVM fails, the launcher returns,
// and no JVMTI agent gets VMDeath — the agent would never see JVM_SHUT_DOWN and lose its profile
// (JDK 8's HPROF did). The runtime keeps a small array alive from VM init and lets it go the
// first time JVMTI reports the Java heap exhausted, so that the shutdown that follows has the
// room it needs.
#pragma once

#include <jni.h>
#include <jvmti.h>

namespace jvmpi::heap_reserve {

// VM init: allocates the reserve (not reported to the agent).
void start(JNIEnv* jni);

// JVMTI ResourceExhausted: frees the reserve when the Java heap ran out.
void JNICALL on_resource_exhausted(jvmtiEnv*, JNIEnv* jni, jint flags, const void*,
                                   const char* description);

// The reserve's tag while it is held (0 otherwise): heap dumps leave it out, since nothing the
// runtime does for itself belongs in the program's profile.
jlong object_tag();

// Releases the reserve (a detach); start() makes a new one.
void stop(JNIEnv* jni);

}  // namespace jvmpi::heap_reserve
