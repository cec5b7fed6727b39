// SPDX-License-Identifier: Apache-2.0
#include "lifecycle.h"

#include <jvmpi.h>
#include <unistd.h>

#include <cstdio>

#include "allocation_events.h"
#include "class_events.h"
#include "cpu_sampling.h"
#include "data_requests.h"
#include "event_control.h"
#include "event_gate.h"
#include "gc_events.h"
#include "heap_reserve.h"
#include "jni_reference_events.h"
#include "jvmti_access.h"
#include "method_events.h"
#include "monitor_events.h"
#include "object_events.h"
#include "thread_control.h"
#include "thread_events.h"

namespace jvmpi::lifecycle {

void JNICALL on_vm_start(jvmtiEnv*, JNIEnv*) {
  // References the VM and libraries create from here on are known to the heap dump.
  jni_reference_events::install();
}

void JNICALL on_vm_init(jvmtiEnv*, JNIEnv* jni, jthread thread) {
  begin_live(jni, thread);
}

void begin_live(JNIEnv* jni, jthread thread) {
  object_events::start();  // ARENA_NEW precedes the first OBJECT_ALLOC, which can come any time now
  {
    // What the runtime allocates while it sets up here is not the program's.
    allocation_events::InternalAllocations internal;
    // The start-up batch's classes come before its threads: an agent that takes a thread's stack
    // in THREAD_START (Finalizer, Reference Handler are inside JDK methods) can name every frame.
    class_events::announce_loaded_classes(jni, /*link=*/false);
    (void)thread_events::ensure_known(jni, thread);
    thread_events::announce_known_threads(jni);
    event_control::apply_pending();
    // The main thread existed before allocation tracking could begin.
    if (gate::is_enabled(JVMPI_EVENT_OBJECT_ALLOC)) allocation_events::prime_current_thread(jni);
    monitor_events::start_reporting();
    jni_reference_events::install();  // if the start phase was too early for it
    gc_events::start(jni);
    method_events::start(jni);
    data_requests::start(jni);
    heap_reserve::start(jni);
  }
  thread_control::allow_system_threads();
  JVMPI_Event event{};
  event.event_type = JVMPI_EVENT_JVM_INIT_DONE;
  event.env_id = jni;
  gate::deliver(&event);
}

void JNICALL on_vm_death(jvmtiEnv*, JNIEnv* jni) {
  // No sampling signal may reach a thread once the VM starts tearing down.
  cpu_sampling::on_vm_death();
  gc_events::stop();
  data_requests::stop();
  method_events::vm_dying();
  gate::shut_down(jni);
  cpu_sampling::report_stats();
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
