// SPDX-License-Identifier: Apache-2.0
#include "java_frame_methods.h"

#include <jvmti.h>

#include <unordered_map>

#include "jvmti_access.h"

namespace jvmpi::java_frame_methods {

std::unordered_set<jmethodID> on_stacks_now() {
  // Deep enough for a server's frames; JNI locals reported deeper keep their kind.
  constexpr jint kMaxFrames = 2048;
  std::unordered_set<jmethodID> java;
  jvmtiStackInfo* stacks = nullptr;
  jint count = 0;
  if (jvmti()->GetAllStackTraces(kMaxFrames, &stacks, &count) != JVMTI_ERROR_NONE) return java;
  std::unordered_map<jmethodID, bool> native;
  for (jint t = 0; t < count; ++t) {
    const jvmtiStackInfo& s = stacks[t];
    for (jint f = 0; f < s.frame_count; ++f) {
      const jmethodID method = s.frame_buffer[f].method;
      auto [it, inserted] = native.try_emplace(method, true);
      if (!inserted) continue;
      jboolean is_native = JNI_TRUE;  // unknown: keep the reference's kind as JVMTI gave it
      if (jvmti()->IsMethodNative(method, &is_native) != JVMTI_ERROR_NONE) is_native = JNI_TRUE;
      it->second = is_native != JNI_FALSE;
      if (!it->second) java.insert(method);
    }
  }
  // GetAllStackTraces allocates the thread references in the stack infos as JNI locals of this
  // thread: an agent thread or a request on an application thread; freed here either way.
  JNIEnv* jni = current_jni_env();
  if (jni != nullptr) {
    for (jint t = 0; t < count; ++t) jni->DeleteLocalRef(stacks[t].thread);
  }
  jvmti()->Deallocate(reinterpret_cast<unsigned char*>(stacks));
  return java;
}

}  // namespace jvmpi::java_frame_methods
