// SPDX-License-Identifier: Apache-2.0
#include "full_collection.h"

#include <dlfcn.h>
#include <jvmti.h>

#include <atomic>
#include <mutex>

#include "allocation_events.h"
#include "jvmti_access.h"
#include "log.h"

namespace jvmpi::full_collection {
namespace {

// HotSpot's management interface, the table libmanagement calls (JVM_GetManagement, jmm.h): the
// entries up to SetVMGlobal, whose order is the same from JMM_VERSION_3 (JDK 14) to JDK 25.
// MaxHeapFreeRatio is a manageable flag, which this interface may change while the VM runs (as
// HotSpotDiagnosticMXBean.setVMOption and `jcmd VM.set_flag` do) without running Java code.
constexpr jint kManagementVersion = 0x20030000;  // JMM_VERSION_3
constexpr jint kVmGlobalTypeLong = 3;            // JMM_VMGLOBAL_TYPE_JLONG

struct VmGlobal {  // jmmVMGlobal
  jstring name;
  jvalue value;
  jint type;
  jint origin;
  unsigned int writeable : 1;
  unsigned int external : 1;
  unsigned int reserved : 30;
  void* reserved1;
  void* reserved2;
};

struct ManagementInterface {
  void* reserved1;
  void* reserved2;
  jint(JNICALL* GetVersion)(JNIEnv*);
  void* get_optional_support_to_get_vm_global_names[16];
  jint(JNICALL* GetVMGlobals)(JNIEnv*, jobjectArray, VmGlobal*, jint);
  void* get_internal_thread_times_to_find_deadlocks[11];
  void(JNICALL* SetVMGlobal)(JNIEnv*, jstring, jvalue);
};

constexpr jlong kNoShrinking = 100;

std::mutex g_lock;  // one collection with the flag held at a time
std::atomic<bool> g_warned{false};

void warn_once(const char* why) {
  if (!g_warned.exchange(true)) {
    log_warning(
        "cannot hold MaxHeapFreeRatio during a forced collection (%s): the VM may shrink "
        "the heap",
        why);
  }
}

const ManagementInterface* management(JNIEnv* jni) {
  using GetManagement = void*(JNICALL*)(jint);
  auto get = reinterpret_cast<GetManagement>(dlsym(RTLD_DEFAULT, "JVM_GetManagement"));
  if (get == nullptr) return nullptr;
  auto* jmm = static_cast<const ManagementInterface*>(get(kManagementVersion));
  if (jmm == nullptr || jmm->GetVersion == nullptr || jmm->GetVersion(jni) != kManagementVersion) {
    return nullptr;
  }
  return jmm;
}

bool cleared(JNIEnv* jni) {
  if (!jni->ExceptionCheck()) return false;
  jni->ExceptionClear();
  return true;
}

// The flag's value, or -1 when it cannot be read or is not a writeable number.
jlong read_flag(JNIEnv* jni, const ManagementInterface* jmm, jstring name) {
  jobjectArray names = jni->NewObjectArray(1, jni->GetObjectClass(name), name);
  if (names == nullptr || cleared(jni)) return -1;
  VmGlobal global{};
  const jint found = jmm->GetVMGlobals(jni, names, &global, 1);
  const bool failed = cleared(jni);
  jni->DeleteLocalRef(names);
  if (global.name != nullptr) jni->DeleteLocalRef(global.name);
  if (failed || found != 1 || global.type != kVmGlobalTypeLong || !global.writeable) return -1;
  return global.value.j;
}

bool write_flag(JNIEnv* jni, const ManagementInterface* jmm, jstring name, jlong value) {
  jvalue v{};
  v.j = value;
  jmm->SetVMGlobal(jni, name, v);
  return !cleared(jni);
}

bool collect() {
  return jvmti_ok(jvmti()->ForceGarbageCollection(), "ForceGarbageCollection");
}

}  // namespace

bool run(JNIEnv* jni) {
  if (jni == nullptr) return collect();
  // The few objects made here (the flag's name) are the runtime's, not the program's.
  allocation_events::InternalAllocations internal;
  std::lock_guard<std::mutex> lock(g_lock);
  const ManagementInterface* jmm = management(jni);
  if (jmm == nullptr) {
    warn_once("the VM offers no management interface of JMM_VERSION_3");
    return collect();
  }
  jstring name = jni->NewStringUTF("MaxHeapFreeRatio");
  if (name == nullptr || cleared(jni)) {
    warn_once("out of memory");
    return collect();
  }
  const jlong before = read_flag(jni, jmm, name);
  const bool held =
      before >= 0 && (before == kNoShrinking || write_flag(jni, jmm, name, kNoShrinking));
  if (!held) warn_once("the flag is not writeable here");
  const bool ran = collect();
  if (held && before != kNoShrinking && !write_flag(jni, jmm, name, before)) {
    log_warning("could not restore MaxHeapFreeRatio to %lld", static_cast<long long>(before));
  }
  jni->DeleteLocalRef(name);
  return ran;
}

}  // namespace jvmpi::full_collection
