// SPDX-License-Identifier: Apache-2.0
// The loaded classes whose current code is the bytecode instrumenter's: the ones that must be
// retransformed to take hooks out or change them. Every other class already runs its original
// code, and retransforming it anyway still makes HotSpot build a new version of it (new methods,
// a merged constant pool, the method-ID cache updated): class metadata the VM keeps.
#pragma once

#include <jni.h>

#include <string>

namespace jvmpi::instrumented_classes {

// The class-file hook instrumented the class `name` (internal form, "java/lang/String") of
// `loader` (nullptr: the bootstrap loader).
void note(JNIEnv* jni, const std::string& name, jobject loader);

// The same for a loaded class.
void note_loaded(JNIEnv* jni, jclass klass);

// Whether the code of the loaded class `klass` was instrumented and not retransformed since.
bool contains(JNIEnv* jni, jclass klass);

// `klass` is about to be retransformed: it is forgotten, and noted again if the class-file hook
// instruments it.
void forget(JNIEnv* jni, jclass klass);

// After a pass over the loaded classes that asked contains() of each: forgets the classes that
// are gone (their loader was collected, or no longer loaded and not instrumented), so that a
// program that keeps loading and dropping classes does not grow the list.
void sweep(JNIEnv* jni);

}  // namespace jvmpi::instrumented_classes
