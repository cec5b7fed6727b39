// SPDX-License-Identifier: Apache-2.0
#include "stub_recovery.h"

#include <pthread.h>
#include <ucontext.h>

#include <cstring>

#include "code_ranges.h"
#include "frame_anchor.h"
#include "vm_thread_stack.h"

namespace jvmpi::stub_recovery {
namespace {

// The calling thread's stack, [lo, hi): initial-exec thread-locals (the library is built with
// -ftls-model=initial-exec), so the handler reads them without calling the dynamic linker. Zero
// for a thread never noted: nothing is read from its stack.
thread_local uintptr_t t_stack_lo = 0;
thread_local uintptr_t t_stack_hi = 0;

// AsyncGetCallTrace's codes: a thread in the VM or native code whose anchor was not walkable, and
// walks that failed in Java code.
constexpr jint kUnknownNotJava = -3;
constexpr jint kUnknownJava = -5;
constexpr jint kNotWalkableJava = -6;
// A stub pushes at most a few registers before it calls nothing and computes: words above sp to
// probe for a return address after [sp] and the rbp chain.
constexpr int kProbeWords = 32;

#if defined(__x86_64__)

struct Regs {
  uintptr_t pc, sp, fp;
};

bool read_stack_word(uintptr_t addr, uintptr_t* out) {
  if (addr % sizeof(uintptr_t) != 0 || addr < t_stack_lo || addr + sizeof(uintptr_t) > t_stack_hi) {
    return false;
  }
  *out = *reinterpret_cast<const uintptr_t*>(addr);
  return true;
}

// Walks again from `caller` in a copy of the signal's context; the frames go to `frames`.
jint walk_from(AsyncGetCallTrace agct, JNIEnv* env, JVMPI_CallFrame* frames, jint depth,
               const ucontext_t* uc, const Regs& caller) {
  if (depth <= 0 || !code_ranges::is_java_code(caller.pc)) return 0;
  ucontext_t copy;
  std::memcpy(&copy, uc, sizeof copy);
  copy.uc_mcontext.gregs[REG_RIP] = static_cast<greg_t>(caller.pc);
  copy.uc_mcontext.gregs[REG_RSP] = static_cast<greg_t>(caller.sp);
  copy.uc_mcontext.gregs[REG_RBP] = static_cast<greg_t>(caller.fp);
  JVMPI_CallTrace trace{env, 0, frames};
  agct(&trace, depth, &copy);
  return trace.num_frames > 0 ? trace.num_frames : 0;
}

// The Java caller of the code at `at`, tried candidate by candidate.
jint walk_caller(AsyncGetCallTrace agct, JNIEnv* env, JVMPI_CallFrame* frames, jint depth,
                 const ucontext_t* uc, const Regs& at) {
  uintptr_t ret = 0;
  // The return address on top: a stub without a frame of its own, or at its entry or its ret.
  if (read_stack_word(at.sp, &ret)) {
    if (jint n = walk_from(agct, env, frames, depth, uc, {ret, at.sp + 8, at.fp}); n > 0) return n;
  }
  // A stub that pushed rbp and set it to its sp: the return address above the saved rbp.
  uintptr_t saved_fp = 0;
  if (at.fp > at.sp && read_stack_word(at.fp + 8, &ret) && read_stack_word(at.fp, &saved_fp)) {
    if (jint n = walk_from(agct, env, frames, depth, uc, {ret, at.fp + 16, saved_fp}); n > 0) {
      return n;
    }
  }
  // A stub that pushed registers and has no rbp frame.
  for (int i = 1; i <= kProbeWords; ++i) {
    const uintptr_t slot = at.sp + 8 * static_cast<uintptr_t>(i);
    if (!read_stack_word(slot, &ret)) break;
    if (jint n = walk_from(agct, env, frames, depth, uc, {ret, slot + 8, at.fp}); n > 0) return n;
  }
  return 0;
}

#endif

}  // namespace

void note_current_thread_stack() {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
  void* base = nullptr;
  size_t size = 0;
  if (pthread_attr_getstack(&attr, &base, &size) == 0 && base != nullptr) {
    t_stack_lo = reinterpret_cast<uintptr_t>(base);
    t_stack_hi = t_stack_lo + size;
  }
  pthread_attr_destroy(&attr);
}

jint recover(AsyncGetCallTrace agct, JVMPI_CallTrace* trace, jint depth, void* ucontext,
             jint failure) {
#if defined(__x86_64__)
  if (ucontext == nullptr || depth <= 0) return 0;
  // Only these walks read the stack; the others (a collection, a thread exiting, ...) are left.
  if (failure != kUnknownNotJava && failure != kUnknownJava && failure != kNotWalkableJava) {
    return 0;
  }
  if (t_stack_hi == 0) {
    // A thread that ran before the attach had no ThreadStart to note its stack: the VM's
    // structure for the thread says where it lies. Without it nothing could be recovered on the
    // threads a profiler attached to a running service cares most about (measured on javac
    // attached mid-run: a quarter of the samples unattributable instead of 2-3 %).
    const auto* uc = static_cast<const ucontext_t*>(ucontext);
    uintptr_t lo = 0, hi = 0;
    if (!vm_thread_stack::bounds(
            trace->env_id, static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]), &lo, &hi)) {
      return 0;
    }
    t_stack_lo = lo;
    t_stack_hi = hi;
  }
  if (failure == kUnknownNotJava) {
    // In the VM, called from a stub or compiled code that left the anchor's PC for later.
    if (!frame_anchor::make_walkable(trace->env_id, read_stack_word)) return 0;
    JVMPI_CallTrace again{trace->env_id, 0, trace->frames};
    agct(&again, depth, ucontext);
    return again.num_frames > 0 ? again.num_frames : 0;
  }
  if (failure != kUnknownJava && failure != kNotWalkableJava) return 0;
  const auto* uc = static_cast<const ucontext_t*>(ucontext);
  const Regs at{static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]),
                static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]),
                static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RBP])};
  if (at.sp < t_stack_lo || at.sp >= t_stack_hi) return 0;  // not on its own stack
  const code_ranges::Lookup here = code_ranges::find(at.pc);
  if (here.kind == code_ranges::Kind::kCompiled && here.method != nullptr) {
    // A compiled method the walker could not use (prologue, epilogue): that method, then its
    // caller if the return address is still on top.
    trace->frames[0].method_id = here.method;
    trace->frames[0].lineno = -1;  // no bytecode index known
    uintptr_t ret = 0;
    jint n = 0;
    if (depth > 1 && read_stack_word(at.sp, &ret)) {
      n = walk_from(agct, trace->env_id, trace->frames + 1, depth - 1, uc, {ret, at.sp + 8, at.fp});
    }
    return 1 + n;
  }
  // A stub, the interpreter between frames, or code the VM did not report.
  return walk_caller(agct, trace->env_id, trace->frames, depth, uc, at);
#else
  (void)agct, (void)trace, (void)depth, (void)ucontext, (void)failure;
  return 0;
#endif
}

}  // namespace jvmpi::stub_recovery
