// SPDX-License-Identifier: Apache-2.0
// Recovery of the CPU samples AsyncGetCallTrace cannot walk. HotSpot's walker gives up
// (unknown_Java, not_walkable_Java) when the interrupted PC is in code that has no Java frame it
// knows: a stub the compiled code or the interpreter called without setting the thread's frame
// anchor (the intrinsics of Math.sin/cos/log, System.arraycopy, Arrays.fill, CRC32, AES, String's
// compare and search), or a compiled method's prologue or epilogue. Without this, those samples are
// lost and the methods that spend their time in intrinsics are under-counted.
//
// What it tries, in a copy of the signal's context, and only with return addresses that lead back
// into Java code (code_ranges.h) and stack slots inside the thread's own stack:
//   - in a stub: the return address at [sp] (a stub without a frame, or at its first or last
//     instruction), then [rbp+8] with the rbp chain (a stub that set up rbp), then the next few
//     words above sp (a stub that pushed registers first); each time AsyncGetCallTrace walks again
//     from the caller, so the sample lands on the Java method that called the stub.
//   - in a compiled method the walker could not use, when the agent's CompiledMethodLoad events
//     named it: that method as the top frame, then its caller when the return address is still
//     at [sp]. A PC in the code cache outside every reported stub and named method is treated as
//     a stub (the candidates above): HotSpot generates some stubs it reports to no agent, and a
//     compiled method's prologue is the other case, where the sample lands one frame up.
// x86-64 only; elsewhere nothing is recovered (and the samples are counted as unattributable).
#pragma once

#include <jvmpi.h>

#include <cstdint>

namespace jvmpi::stub_recovery {

using AsyncGetCallTrace = void (*)(JVMPI_CallTrace* trace, jint depth, void* ucontext);

// Notes the calling thread's stack bounds (at thread start, on the thread; not async-signal-safe).
void note_current_thread_stack();

// In the signal handler: after `trace` came back with `failure` (AsyncGetCallTrace's code,
// num_frames <= 0), tries to walk from the stub's Java caller. Returns the number of frames
// recorded in trace->frames (> 0), or 0 when nothing was found. Async-signal-safe.
jint recover(AsyncGetCallTrace agct, JVMPI_CallTrace* trace, jint depth, void* ucontext,
             jint failure);

}  // namespace jvmpi::stub_recovery
