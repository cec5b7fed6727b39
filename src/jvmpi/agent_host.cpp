// SPDX-License-Identifier: Apache-2.0
// The JVMTI agent entry points: java -agentpath:libjvmpi.so=<agent>[:<agent options>] App, and the
// same option string given to a running VM (Agent_OnAttach, e.g. jcmd PID JVMTI.agent_load), where
// the option string `stop` ends the attached session (docs/attach.md).
// Sets up JVMTI, loads the JVMPI agent library, and calls its JVM_OnLoad with a JavaVM whose
// GetEnv hands out the JVMPI interface.

#include <jni.h>
#include <jvmti.h>

#include <string>
#include <string_view>
#include <vector>

#include "agent_library.h"
#include "allocation_events.h"
#include "attach.h"
#include "class_events.h"
#include "code_ranges.h"
#include "compiled_method_events.h"
#include "cpu_sampling.h"
#include "data_requests.h"
#include "event_gate.h"
#include "full_collection.h"
#include "gc_events.h"
#include "heap_reserve.h"
#include "jvmti_access.h"
#include "lifecycle.h"
#include "log.h"
#include "method_events.h"
#include "monitor_events.h"
#include "thread_events.h"
#include "vm_interception.h"

namespace jvmpi {
namespace {

bool add_capabilities() {
  jvmtiCapabilities potential{};
  if (!jvmti_ok(jvmti()->GetPotentialCapabilities(&potential), "GetPotentialCapabilities")) {
    return false;
  }
  jvmtiCapabilities wanted{};
  wanted.can_tag_objects = 1;
  wanted.can_generate_object_free_events = 1;
  wanted.can_get_source_file_name = 1;
  wanted.can_get_line_numbers = 1;
  wanted.can_generate_all_class_hook_events = 1;
  wanted.can_generate_early_class_hook_events = 1;
  wanted.can_generate_early_vmstart = 1;
  wanted.can_generate_compiled_method_load_events = 1;
  wanted.can_generate_garbage_collection_events = 1;
  wanted.can_generate_monitor_events = 1;
  wanted.can_generate_native_method_bind_events = 1;
  wanted.can_get_current_thread_cpu_time = 1;
  wanted.can_get_thread_cpu_time = 1;
  wanted.can_suspend = 1;
  wanted.can_get_monitor_info = 1;
  wanted.can_get_owned_monitor_info = 1;
  wanted.can_get_current_contended_monitor = 1;
  wanted.can_generate_sampled_object_alloc_events = 1;
  wanted.can_retransform_classes = 1;
  wanted.can_get_constant_pool = 1;  // classes with NaN constants, see method_events.h
  wanted.can_generate_vm_object_alloc_events = 1;
  wanted.can_generate_resource_exhaustion_heap_events = 1;

  // Take what this VM offers; what is missing only disables the events that need it.
  jvmtiCapabilities granted{};
  const auto* w = reinterpret_cast<const unsigned char*>(&wanted);
  const auto* p = reinterpret_cast<const unsigned char*>(&potential);
  auto* g = reinterpret_cast<unsigned char*>(&granted);
  for (size_t i = 0; i < sizeof granted; ++i) g[i] = w[i] & p[i];
  if (!granted.can_tag_objects || !granted.can_suspend || !granted.can_get_line_numbers) {
    log_error("this VM lacks JVMTI capabilities JVMPI needs (object tags, suspension, lines)");
    return false;
  }
  return jvmti_ok(jvmti()->AddCapabilities(&granted), "AddCapabilities");
}

bool set_callbacks() {
  jvmtiEventCallbacks cb{};
  cb.VMStart = lifecycle::on_vm_start;
  cb.VMInit = lifecycle::on_vm_init;
  cb.VMDeath = lifecycle::on_vm_death;
  cb.ThreadStart = thread_events::on_thread_start;
  cb.ThreadEnd = thread_events::on_thread_end;
  cb.ClassPrepare = class_events::on_class_prepare;
  cb.ClassLoad = cpu_sampling::on_class_load;  // enabled only while CPU-time sampling needs it
  cb.ClassFileLoadHook = class_events::on_class_file_load_hook;
  cb.NativeMethodBind = monitor_events::on_native_method_bind;
  cb.MonitorContendedEnter = monitor_events::on_contended_enter;
  cb.MonitorContendedEntered = monitor_events::on_contended_entered;
  cb.MonitorWait = monitor_events::on_wait;
  cb.MonitorWaited = monitor_events::on_waited;
  cb.CompiledMethodLoad = compiled_method_events::on_load;
  cb.CompiledMethodUnload = compiled_method_events::on_unload;
  cb.DynamicCodeGenerated = code_ranges::on_dynamic_code_generated;  // for the CPU sampler
  cb.GarbageCollectionFinish = gc_events::on_gc_finish;
  cb.ObjectFree = gc_events::on_object_free;
  cb.DataDumpRequest = data_requests::on_data_dump_request;
  cb.SampledObjectAlloc = allocation_events::on_sampled_object_alloc;
  cb.VMObjectAlloc = allocation_events::on_vm_object_alloc;
  cb.ResourceExhausted = heap_reserve::on_resource_exhausted;
  if (!jvmti_ok(jvmti()->SetEventCallbacks(&cb, sizeof cb), "SetEventCallbacks")) return false;

  // What the runtime needs whatever the agent enables; the rest follows EnableEvent.
  for (jvmtiEvent e : {JVMTI_EVENT_VM_START, JVMTI_EVENT_VM_INIT, JVMTI_EVENT_VM_DEATH,
                       JVMTI_EVENT_THREAD_START, JVMTI_EVENT_THREAD_END, JVMTI_EVENT_CLASS_PREPARE,
                       JVMTI_EVENT_OBJECT_FREE, JVMTI_EVENT_NATIVE_METHOD_BIND,
                       // Frees and class unloads are delivered per collection, so collections
                       // are counted whether or not the agent wants GC_START/GC_FINISH.
                       JVMTI_EVENT_GARBAGE_COLLECTION_FINISH,
                       // The monitor dump needs to know what each waiting thread waits on.
                       JVMTI_EVENT_MONITOR_WAIT, JVMTI_EVENT_MONITOR_WAITED}) {
    if (!jvmti_ok(jvmti()->SetEventNotificationMode(JVMTI_ENABLE, e, nullptr),
                  "SetEventNotificationMode")) {
      return false;
    }
  }
  return true;
}

}  // namespace
}  // namespace jvmpi

namespace jvmpi {
namespace {

// What one JVMTI environment needs once per process: an attach after a detach reuses it.
bool g_environment_ready = false;
JavaVM* g_agent_vm = nullptr;

bool prepare_environment(JavaVM* vm) {
  if (g_environment_ready) return set_callbacks();
  jvmtiEnv* env = jvmti();
  if (env == nullptr &&
      (vm->GetEnv(reinterpret_cast<void**>(&env), JVMTI_VERSION_11) != JNI_OK || env == nullptr)) {
    log_error("this VM offers no JVMTI 11 environment");
    return false;
  }
  set_vm(vm, env);
  if (!add_capabilities() || !gc_events::initialize() || !set_callbacks()) {
    log_error("could not set up the JVMTI environment");
    return false;
  }
  std::string tracker_error;
  if (!method_events::prepare(tracker_error)) {
    log_warning("%s; method and instruction events will not be delivered", tracker_error.c_str());
  }
  bool patched = false;
  g_agent_vm = vm_interception::install(vm, &patched);
  if (!patched) {
    log_warning("the VM's JavaVM is read-only; only JVM_OnLoad's JavaVM answers JVMPI GetEnv");
  }
  g_environment_ready = true;
  return true;
}

// Sets up JVMTI and runs the agent's JVM_OnLoad with a JavaVM that answers JVMPI's GetEnv. In a
// running VM (an attach) what VM init would start follows at once, with JVM_INIT_DONE.
jint start(JavaVM* vm, const std::string& agent_name, agent_library::OnLoadFunction on_load,
           const std::string& agent_options) {
  if (attach::session_running()) {
    log_error("a JVMPI agent is already attached to this VM; stop it first (option string 'stop')");
    return JNI_ERR;
  }
  if (!prepare_environment(vm)) return JNI_ERR;
  const bool live = current_phase() == JVMTI_PHASE_LIVE;
  JNIEnv* jni = live ? current_jni_env() : nullptr;
  if (live) {
    if (jni == nullptr) {
      log_error("the attaching thread has no JNI environment");
      return JNI_ERR;
    }
    thread_events::begin_session();
    method_events::keep_nan_classes_out();
    // Before JVM_OnLoad: the threads it may ask about (GetThreadObject, RequestEvent) are known.
    attach::adopt_running_threads(jni);
  }

  std::vector<char> options(agent_options.begin(), agent_options.end());
  options.push_back('\0');
  const jint result = on_load(g_agent_vm, options.data(), nullptr);
  if (result != JNI_OK) {
    log_error("JVM_OnLoad of JVMPI agent library '%s' failed (returned %d)", agent_name.c_str(),
              static_cast<int>(result));
    if (live) {
      // What the failed JVM_OnLoad enabled is undone; delivery never opened.
      attach::set_session_running(true);
      (void)attach::detach(jni);
    }
    return JNI_ERR;
  }
  attach::set_session_running(true);
  gate::open();
  if (live) {
    jthread self = nullptr;
    if (jvmti()->GetCurrentThread(&self) == JVMTI_ERROR_NONE && self != nullptr) {
      lifecycle::begin_live(jni, self);
      jni->DeleteLocalRef(self);
    }
    // A thread that was running allocates in a buffer it took before allocation sampling was on,
    // and the VM looks at its allocations again only when it takes the next: one collection
    // retires every thread's buffer, so each thread's allocations are seen from here on.
    if (gate::is_enabled(JVMPI_EVENT_OBJECT_ALLOC) || allocation_events::sampling_on()) {
      full_collection::run();
    }
  }
  return JNI_OK;
}

// Agent_OnLoad and Agent_OnAttach: the library named by `options`, started with its options.
jint load_and_start(JavaVM* vm, const char* options) {
  agent_library::AgentSpec spec;
  std::string error;
  if (!agent_library::parse(options, spec, error)) {
    log_error("%s", error.c_str());
    return JNI_ERR;
  }
  // JVMTI first: the library search uses the VM's system properties.
  if (jvmti() == nullptr) {
    jvmtiEnv* env = nullptr;
    if (vm->GetEnv(reinterpret_cast<void**>(&env), JVMTI_VERSION_11) == JNI_OK) set_vm(vm, env);
  }
  auto on_load = agent_library::load(spec, error);
  if (on_load == nullptr) {
    log_error("%s", error.c_str());
    return JNI_ERR;
  }
  return start(vm, spec.library, on_load, spec.options);
}

jint stop_session() {
  JNIEnv* jni = current_jni_env();
  if (jni == nullptr || current_phase() != JVMTI_PHASE_LIVE) {
    log_error("'stop' needs a running VM");
    return JNI_ERR;
  }
  return attach::detach(jni);
}

}  // namespace
}  // namespace jvmpi

extern "C" JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM* vm, char* options, void*) {
  return jvmpi::load_and_start(vm, options);
}

// jcmd PID JVMTI.agent_load /path/libjvmpi.so '<agent>[:<options>]', or '... stop'.
extern "C" JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM* vm, char* options, void*) {
  if (options != nullptr && std::string_view(options) == "stop") return jvmpi::stop_session();
  return jvmpi::load_and_start(vm, options);
}

// For agents that bring the runtime along (HPROF): ends their attached session.
extern "C" JNIEXPORT jint JNICALL JVMPI_StopAgent() {
  return jvmpi::stop_session();
}

// For agents that bring the runtime along (HPROF): started by their own Agent_OnLoad with their
// JVMPI entry point, which must not be exported as JVM_OnLoad (the VM would then treat
// -Xrun<agent> as an old JVMPI library and call it directly).
extern "C" JNIEXPORT jint JNICALL JVMPI_StartAgent(JavaVM* vm, const char* agent_name,
                                                   jint(JNICALL* on_load)(JavaVM*, char*, void*),
                                                   const char* options) {
  if (on_load == nullptr) return JNI_ERR;
  return jvmpi::start(vm, agent_name != nullptr ? agent_name : "?", on_load,
                      options != nullptr ? options : "");
}

extern "C" JNIEXPORT void JNICALL Agent_OnUnload(JavaVM*) {}
