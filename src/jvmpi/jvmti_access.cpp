// SPDX-License-Identifier: Apache-2.0
#include "jvmti_access.h"

#include <atomic>

#include "log.h"

namespace jvmpi {
namespace {
std::atomic<JavaVM*> g_vm{nullptr};
std::atomic<jvmtiEnv*> g_jvmti{nullptr};
}  // namespace

JavaVM* java_vm() {
  return g_vm.load(std::memory_order_acquire);
}
jvmtiEnv* jvmti() {
  return g_jvmti.load(std::memory_order_acquire);
}

void set_vm(JavaVM* vm, jvmtiEnv* env) {
  g_vm.store(vm, std::memory_order_release);
  g_jvmti.store(env, std::memory_order_release);
}

JNIEnv* current_jni_env() {
  JavaVM* vm = java_vm();
  if (vm == nullptr) return nullptr;
  void* env = nullptr;
  if (vm->GetEnv(&env, JNI_VERSION_1_6) != JNI_OK) return nullptr;
  return static_cast<JNIEnv*>(env);
}

jvmtiPhase current_phase() {
  jvmtiPhase phase = JVMTI_PHASE_DEAD;
  if (jvmti() == nullptr || jvmti()->GetPhase(&phase) != JVMTI_ERROR_NONE) return JVMTI_PHASE_DEAD;
  return phase;
}

bool jvmti_ok(jvmtiError err, const char* what, jvmtiError quiet) {
  if (err == JVMTI_ERROR_NONE) return true;
  if (err != quiet && err != JVMTI_ERROR_WRONG_PHASE) {
    char* name = nullptr;
    jvmti()->GetErrorName(err, &name);
    log_warning("%s failed: %s (%d)", what, name != nullptr ? name : "?", static_cast<int>(err));
    if (name != nullptr) jvmti()->Deallocate(reinterpret_cast<unsigned char*>(name));
  }
  return false;
}

}  // namespace jvmpi
