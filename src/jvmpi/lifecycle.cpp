#include "lifecycle.h"

#include <jvmpi.h>
#include <unistd.h>

#include <cstdio>

#include "class_events.h"
#include "data_requests.h"
#include "event_control.h"
#include "event_gate.h"
#include "gc_events.h"
#include "jvmti_access.h"
#include "thread_events.h"

namespace jvmpi::lifecycle {

void JNICALL on_vm_start(jvmtiEnv*, JNIEnv* jni) { thread_events::ensure_known(jni); }

void JNICALL on_vm_init(jvmtiEnv*, JNIEnv* jni, jthread thread) {
  event_control::apply_pending();
  thread_events::ensure_known(jni, thread);
  thread_events::announce_known_threads(jni);
  class_events::announce_loaded_classes(jni);
  gc_events::start(jni);
  data_requests::start(jni);
  JVMPI_Event event{};
  event.event_type = JVMPI_EVENT_JVM_INIT_DONE;
  event.env_id = jni;
  gate::deliver(&event);
}

void JNICALL on_vm_death(jvmtiEnv*, JNIEnv* jni) {
  gc_events::stop();
  gate::shut_down(jni);
}

void profiler_exit(jint code) {
  std::fflush(nullptr);
  JNIEnv* jni = current_jni_env();
  // System.exit runs the normal shutdown (the agent gets JVM_SHUT_DOWN). During start-up, or once
  // shutdown has begun (System.exit would block forever), the process ends directly.
  if (jni != nullptr && current_phase() == JVMTI_PHASE_LIVE && !gate::is_shut_down()) {
    jclass system = jni->FindClass("java/lang/System");
    jmethodID exit = system != nullptr ? jni->GetStaticMethodID(system, "exit", "(I)V") : nullptr;
    if (exit != nullptr) {
      jni->CallStaticVoidMethod(system, exit, code);
    }
    jni->ExceptionClear();
  }
  _exit(code);
}

}  // namespace jvmpi::lifecycle
