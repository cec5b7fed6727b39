// SPDX-License-Identifier: Apache-2.0
#include "vm_thread_stack.h"

#include <atomic>

#include "frame_anchor.h"
#include "hotspot_vm_structs.h"

namespace jvmpi::vm_thread_stack {
namespace {

// Offsets in the thread structure; 0 until init() found both.
std::atomic<uint64_t> g_base_offset{0};
std::atomic<uint64_t> g_size_offset{0};

}  // namespace

bool init() {
  if (g_base_offset.load() != 0) return true;
  uint64_t base = 0, size = 0;
  // Described under JavaThread in JDK 17's table, under Thread in later ones.
  auto described = [&](const char* type) {
    return hotspot_vm_structs::field_offset(type, "_stack_base", &base) &&
           hotspot_vm_structs::field_offset(type, "_stack_size", &size);
  };
  if ((!described("JavaThread") && !described("Thread")) || base == 0 || size == 0) return false;
  g_size_offset.store(size);
  g_base_offset.store(base, std::memory_order_release);
  return true;
}

bool bounds(JNIEnv* env, uintptr_t sp, uintptr_t* lo, uintptr_t* hi) {
  const uint64_t base_offset = g_base_offset.load(std::memory_order_acquire);
  const uintptr_t thread = frame_anchor::java_thread(env);
  if (base_offset == 0 || thread == 0) return false;
  // The calling thread's own structure: alive while the thread runs this handler.
  const uintptr_t base = *reinterpret_cast<const volatile uintptr_t*>(thread + base_offset);
  const uintptr_t size =
      *reinterpret_cast<const volatile uintptr_t*>(thread + g_size_offset.load());
  // A structure not laid out as assumed, or a stack not set yet, gives bounds that do not hold
  // the interrupted stack pointer: then nothing is read from the stack.
  if (base == 0 || size == 0 || size > base || sp < base - size || sp >= base) return false;
  *lo = base - size;
  *hi = base;
  return true;
}

}  // namespace jvmpi::vm_thread_stack
