// SPDX-License-Identifier: Apache-2.0
// The stack of a Java thread as HotSpot keeps it in the thread's own structure
// (Thread::_stack_base, the high end, and Thread::_stack_size, guard zones included: what
// pthread_getattr_np gives for the same thread), read through the VM's exported structure table. A
// thread noted its stack at its ThreadStart; a thread that ran before an attach never did, and the
// CPU sampler's stub recovery (stub_recovery.h) learns its stack from here, in the signal handler,
// the first time it needs it.
#pragma once

#include <jni.h>

#include <cstdint>

namespace jvmpi::vm_thread_stack {

// Outside the handler: learns where a thread structure keeps its stack. False (and bounds() finds
// nothing) when this VM does not describe it, or frame_anchor::init has not found the JavaThread
// of a JNIEnv.
bool init();

// Async-signal-safe, on the thread of `env`: its stack [*lo, *hi) when the VM describes it and
// `sp` (the interrupted stack pointer) lies inside it; false otherwise.
bool bounds(JNIEnv* env, uintptr_t sp, uintptr_t* lo, uintptr_t* hi);

}  // namespace jvmpi::vm_thread_stack
