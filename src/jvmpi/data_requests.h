// SPDX-License-Identifier: Apache-2.0
// DATA_DUMP_REQUEST (SIGQUIT, through JVMTI's DataDumpRequest) and DATA_RESET_REQUEST (SIGUSR1,
// which the VM leaves unused; JVMTI has no reset request of its own).
#pragma once

#include <jni.h>
#include <jvmti.h>

namespace jvmpi::data_requests {

void JNICALL on_data_dump_request(jvmtiEnv* jvmti);

// Installs the SIGUSR1 handler and starts the thread that turns signals into DATA_RESET_REQUEST.
// Only done once the agent enables the event, so the signal keeps its default meaning otherwise.
void enable_reset_signal();

// Starts pending work that needs a live VM (at VM init).
void start(JNIEnv* jni);

// Ends the listener thread (at VM death). The VM's exit waits up to 300 ms for every Java thread
// that is still in native code, and a listener blocked in sem_wait is one.
void stop();

// stop(), and SIGUSR1 back to what it was before; a later attach starts afresh.
void detach();

}  // namespace jvmpi::data_requests
