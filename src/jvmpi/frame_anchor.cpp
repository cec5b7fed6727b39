// SPDX-License-Identifier: Apache-2.0
#include "frame_anchor.h"

#include <atomic>

#include "hotspot_vm_structs.h"
#include "jvmti_access.h"

namespace jvmpi::frame_anchor {
namespace {

// JNIEnv* minus JavaThread* (the JNIEnv is a field of HotSpot's JavaThread), and the offsets of
// the anchor's last Java SP and PC from the JavaThread. Zero until init succeeded.
std::atomic<intptr_t> g_env_offset{0};
std::atomic<uint64_t> g_sp_offset{0};
std::atomic<uint64_t> g_pc_offset{0};

}  // namespace

bool init(JNIEnv* jni) {
  if (g_env_offset.load() != 0) return true;
  uint64_t anchor = 0, sp = 0, pc = 0;
  if (!hotspot_vm_structs::field_offset("JavaThread", "_anchor", &anchor) ||
      !hotspot_vm_structs::field_offset("JavaFrameAnchor", "_last_Java_sp", &sp) ||
      !hotspot_vm_structs::field_offset("JavaFrameAnchor", "_last_Java_pc", &pc)) {
    return false;
  }
  // java.lang.Thread.eetop holds the thread's JavaThread*.
  jthread self = nullptr;
  if (jvmti()->GetCurrentThread(&self) != JVMTI_ERROR_NONE || self == nullptr) return false;
  jclass thread_class = jni->FindClass("java/lang/Thread");
  jfieldID eetop = thread_class != nullptr ? jni->GetFieldID(thread_class, "eetop", "J") : nullptr;
  if (eetop == nullptr) {
    jni->ExceptionClear();
    return false;
  }
  const auto java_thread = static_cast<intptr_t>(jni->GetLongField(self, eetop));
  jni->DeleteLocalRef(self);
  jni->DeleteLocalRef(thread_class);
  const intptr_t env_offset = reinterpret_cast<intptr_t>(jni) - java_thread;
  // The JNIEnv lies inside the JavaThread, a few hundred bytes in; anything else is a layout this
  // code does not know.
  if (java_thread == 0 || env_offset <= 0 || env_offset > 4096) return false;
  g_sp_offset.store(anchor + sp);
  g_pc_offset.store(anchor + pc);
  g_env_offset.store(env_offset);
  return true;
}

bool make_walkable(JNIEnv* env, bool (*read_word)(uintptr_t address, uintptr_t* value)) {
  const intptr_t env_offset = g_env_offset.load(std::memory_order_acquire);
  if (env_offset == 0 || env == nullptr) return false;
  char* thread = reinterpret_cast<char*>(env) - env_offset;
  auto* sp_slot = reinterpret_cast<volatile uintptr_t*>(thread + g_sp_offset.load());
  auto* pc_slot = reinterpret_cast<volatile uintptr_t*>(thread + g_pc_offset.load());
  const uintptr_t sp = *sp_slot;
  if (sp == 0 || *pc_slot != 0) return false;
  uintptr_t pc = 0;
  if (!read_word(sp - sizeof(uintptr_t), &pc) || pc == 0) return false;
  *pc_slot = pc;
  return true;
}

uintptr_t java_thread(JNIEnv* env) {
  const intptr_t env_offset = g_env_offset.load(std::memory_order_acquire);
  if (env_offset == 0 || env == nullptr) return 0;
  return reinterpret_cast<uintptr_t>(env) - static_cast<uintptr_t>(env_offset);
}

}  // namespace jvmpi::frame_anchor
