// SPDX-License-Identifier: Apache-2.0
#include "known_methods.h"

#include <jvmti.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "jvmti_access.h"

namespace jvmpi::known_methods {
namespace {

std::atomic<bool> g_retransformed{false};
std::mutex g_mutex;
// Obsolete method ID -> current method ID. An obsolete method's ID stays valid while its class
// is loaded; bounded by the methods that were active during one session's retransformations.
std::unordered_map<jmethodID, jmethodID> g_current;

jmethodID find_current(jmethodID obsolete) {
  JNIEnv* jni = current_jni_env();
  jclass klass = nullptr;
  if (jni == nullptr || jvmti()->GetMethodDeclaringClass(obsolete, &klass) != JVMTI_ERROR_NONE) {
    return obsolete;
  }
  LocalRef klass_ref(jni, klass);
  JvmtiPtr<char> name;
  JvmtiPtr<char> signature;
  jint count = 0;
  JvmtiPtr<jmethodID> methods;
  if (jvmti()->GetMethodName(obsolete, name.out(), signature.out(), nullptr) != JVMTI_ERROR_NONE ||
      jvmti()->GetClassMethods(klass, &count, methods.out()) != JVMTI_ERROR_NONE) {
    return obsolete;
  }
  for (jint i = 0; i < count; ++i) {
    JvmtiPtr<char> n;
    JvmtiPtr<char> s;
    if (jvmti()->GetMethodName(methods[i], n.out(), s.out(), nullptr) == JVMTI_ERROR_NONE &&
        std::strcmp(n.get(), name.get()) == 0 && std::strcmp(s.get(), signature.get()) == 0) {
      return methods[i];
    }
  }
  return obsolete;  // the method was removed (not by our retransformations, which keep methods)
}

}  // namespace

void note_retransformation() {
  g_retransformed.store(true);
}

jmethodID known_id(jmethodID method) {
  if (method == nullptr || !g_retransformed.load(std::memory_order_relaxed)) return method;
  {
    // Looked up first: an obsolete method that the VM has since freed (COMPILED_METHOD_UNLOAD of
    // its code) is no longer known to JVMTI as obsolete, and must map as its load did.
    std::lock_guard lock(g_mutex);
    if (auto it = g_current.find(method); it != g_current.end()) return it->second;
  }
  jboolean obsolete = JNI_FALSE;
  if (jvmti()->IsMethodObsolete(method, &obsolete) != JVMTI_ERROR_NONE || !obsolete) return method;
  const jmethodID current = find_current(method);
  std::lock_guard lock(g_mutex);
  g_current.emplace(method, current);
  return current;
}

void forget_session() {
  std::lock_guard lock(g_mutex);
  std::unordered_map<jmethodID, jmethodID>().swap(g_current);  // its buckets too
}

void after_retransformation(JNIEnv* jni) {
  if (jni == nullptr) return;
  constexpr jint kMaxFrames = 1024;
  jint count = 0;
  JvmtiPtr<jvmtiStackInfo> stacks;
  if (jvmti()->GetAllStackTraces(kMaxFrames, stacks.out(), &count) != JVMTI_ERROR_NONE) return;
  for (jint t = 0; t < count; ++t) {
    const jvmtiStackInfo& info = stacks[static_cast<size_t>(t)];
    for (jint f = 0; f < info.frame_count; ++f) known_id(info.frame_buffer[f].method);
    jni->DeleteLocalRef(info.thread);
  }
}

}  // namespace jvmpi::known_methods
