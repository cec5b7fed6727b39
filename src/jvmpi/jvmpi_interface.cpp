// SPDX-License-Identifier: Apache-2.0
#include "jvmpi_interface.h"

#include <atomic>

#include "event_control.h"
#include "full_collection.h"
#include "jvmti_access.h"
#include "lifecycle.h"
#include "object_ids.h"
#include "raw_monitors.h"
#include "thread_control.h"

namespace jvmpi {
namespace {

// JVMPI's DisableGC/EnableGC nesting. Object IDs are tags that survive collections, so nothing an
// agent does with IDs needs the collector held off; the depth is kept for RunGC's contract.
std::atomic<int> g_gc_disabled_depth{0};

void disable_gc() {
  g_gc_disabled_depth.fetch_add(1);
}

void enable_gc() {
  int depth = g_gc_disabled_depth.load();
  while (depth > 0 && !g_gc_disabled_depth.compare_exchange_weak(depth, depth - 1)) {
  }
}

void run_gc() {
  full_collection::run();
}

jobjectID get_method_class(jmethodID method) {
  jclass klass = nullptr;
  if (method == nullptr || jvmti()->GetMethodDeclaringClass(method, &klass) != JVMTI_ERROR_NONE) {
    return nullptr;
  }
  jobjectID id = object_ids::id_of(klass);
  if (JNIEnv* jni = current_jni_env(); jni != nullptr) jni->DeleteLocalRef(klass);
  return id;
}

jobject id_to_object(jobjectID id) {
  JNIEnv* jni = current_jni_env();
  return jni != nullptr ? object_ids::object_of(jni, id) : nullptr;
}

jobjectID object_to_id(jobject object) {
  return object_ids::id_of(object);
}

JVMPI_Interface make_interface() {
  JVMPI_Interface t{};
  t.version = JVMPI_VERSION_1_2;
  t.NotifyEvent = nullptr;  // the agent's
  t.EnableEvent = event_control::enable;
  t.DisableEvent = event_control::disable;
  t.RequestEvent = event_control::request;
  t.GetCallTrace = thread_control::get_call_trace;
  t.ProfilerExit = lifecycle::profiler_exit;
  t.RawMonitorCreate = raw_monitors::create;
  t.RawMonitorEnter = raw_monitors::enter;
  t.RawMonitorExit = raw_monitors::exit;
  t.RawMonitorWait = raw_monitors::wait;
  t.RawMonitorNotifyAll = raw_monitors::notify_all;
  t.RawMonitorDestroy = raw_monitors::destroy;
  t.GetCurrentThreadCpuTime = thread_control::current_thread_cpu_time;
  t.SuspendThread = thread_control::suspend;
  t.ResumeThread = thread_control::resume;
  t.GetThreadStatus = thread_control::status;
  t.ThreadHasRun = thread_control::has_run;
  t.CreateSystemThread = thread_control::create_system_thread;
  t.SetThreadLocalStorage = thread_control::set_local_storage;
  t.GetThreadLocalStorage = thread_control::get_local_storage;
  t.DisableGC = disable_gc;
  t.EnableGC = enable_gc;
  t.RunGC = run_gc;
  t.GetThreadObject = thread_control::thread_object;
  t.GetMethodClass = get_method_class;
  t.jobjectID2jobject = id_to_object;
  t.jobject2jobjectID = object_to_id;
  t.SuspendThreadList = thread_control::suspend_list;
  t.ResumeThreadList = thread_control::resume_list;
  return t;
}

}  // namespace

JVMPI_Interface& jvmpi_interface() {
  static JVMPI_Interface table = make_interface();
  return table;
}

bool is_jvmpi_version(jint version) {
  return version == JVMPI_VERSION_1 || version == JVMPI_VERSION_1_1 || version == JVMPI_VERSION_1_2;
}

}  // namespace jvmpi
