// SPDX-License-Identifier: Apache-2.0
// A thread in the VM or in native code keeps its last Java frame in its frame anchor, but HotSpot
// fills the anchor's PC in lazily: code that calls into the VM from a stub or compiled code may
// leave it null until the VM needs a walkable stack (JavaFrameAnchor::make_walkable takes it from
// the word below the last Java SP). AsyncGetCallTrace then fails with unknown_not_Java. The CPU
// sampler's handler completes the anchor the way HotSpot does and walks again.
#pragma once

#include <jni.h>

#include <cstdint>

namespace jvmpi::frame_anchor {

// On a Java thread, outside the handler: learns from HotSpot's exported structure table and the
// thread's java.lang.Thread.eetop where a JNIEnv's thread keeps its anchor. False (and
// make_walkable does nothing) when this VM does not describe it.
bool init(JNIEnv* jni);

// Async-signal-safe, on the thread of `env` in its signal handler: when its anchor has a last Java
// SP but no PC, sets the PC to the word below that SP (read with `read_word`, which refuses words
// outside the thread's stack), as make_walkable would. Returns whether it did.
bool make_walkable(JNIEnv* env, bool (*read_word)(uintptr_t address, uintptr_t* value));

// Async-signal-safe: the address of HotSpot's JavaThread whose JNIEnv is `env` (the JNIEnv is one
// of its fields), or 0 before init() succeeded.
uintptr_t java_thread(JNIEnv* env);

}  // namespace jvmpi::frame_anchor
