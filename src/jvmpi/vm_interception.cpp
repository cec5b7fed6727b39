// SPDX-License-Identifier: Apache-2.0
#include "vm_interception.h"

#include <cstdint>
#include <cstdio>

#include "extension_interface.h"
#include "jvmpi_interface.h"

namespace jvmpi::vm_interception {
namespace {

JavaVM* g_real_vm = nullptr;
JNIInvokeInterface_ g_real;   // the VM's own functions
JNIInvokeInterface_ g_table;  // what agents see
JavaVM g_proxy;               // used only when the VM's structure cannot be written

// Every entry passes the VM's own JavaVM on, so the table works whether it was installed in
// place or behind the proxy.
jint JNICALL destroy_java_vm(JavaVM*) {
  return g_real.DestroyJavaVM(g_real_vm);
}
jint JNICALL attach_current_thread(JavaVM*, void** env, void* args) {
  return g_real.AttachCurrentThread(g_real_vm, env, args);
}
jint JNICALL detach_current_thread(JavaVM*) {
  return g_real.DetachCurrentThread(g_real_vm);
}
jint JNICALL attach_current_thread_as_daemon(JavaVM*, void** env, void* args) {
  return g_real.AttachCurrentThreadAsDaemon(g_real_vm, env, args);
}
jint JNICALL get_env(JavaVM*, void** env, jint version) {
  if (is_jvmpi_version(version)) {
    if (env == nullptr) return JNI_ERR;
    *env = &jvmpi_interface();
    return JNI_OK;
  }
  if (version == JVMPI_EXT_VERSION_1) {
    if (env == nullptr) return JNI_ERR;
    *env = &extension_interface();
    return JNI_OK;
  }
  // Versions no interface of this VM has (neither JNI, JVMTI nor JVMPI) are refused as such even
  // during JVM_OnLoad, when the VM itself would answer that the thread is not attached.
  const bool jni_version = (version & 0xffff0000) == 0x00010000;
  const bool jvmti_version = (version & 0x70000000) == 0x30000000;
  if (!jni_version && !jvmti_version) {
    if (env != nullptr) *env = nullptr;
    return JNI_EVERSION;
  }
  return g_real.GetEnv(g_real_vm, env, version);
}

// Whether the memory at `address` is mapped writable in this process.
bool is_writable(const void* address) {
  FILE* maps = std::fopen("/proc/self/maps", "r");
  if (maps == nullptr) return false;
  const auto target = reinterpret_cast<uintptr_t>(address);
  bool writable = false;
  char line[512];
  while (std::fgets(line, sizeof line, maps) != nullptr) {
    unsigned long start = 0;
    unsigned long end = 0;
    char perms[5] = {};
    if (std::sscanf(line, "%lx-%lx %4s", &start, &end, perms) == 3 && target >= start &&
        target < end) {
      writable = perms[1] == 'w';
      break;
    }
  }
  std::fclose(maps);
  return writable;
}

}  // namespace

JavaVM* install(JavaVM* vm, bool* patched_in_place) {
  g_real_vm = vm;
  g_real = *vm->functions;
  g_table = g_real;
  g_table.DestroyJavaVM = destroy_java_vm;
  g_table.AttachCurrentThread = attach_current_thread;
  g_table.DetachCurrentThread = detach_current_thread;
  g_table.GetEnv = get_env;
  g_table.AttachCurrentThreadAsDaemon = attach_current_thread_as_daemon;
  if (is_writable(&vm->functions)) {
    vm->functions = &g_table;
    *patched_in_place = true;
    return vm;
  }
  g_proxy.functions = &g_table;
  *patched_in_place = false;
  return &g_proxy;
}

}  // namespace jvmpi::vm_interception
