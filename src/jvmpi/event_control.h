// SPDX-License-Identifier: Apache-2.0
// EnableEvent, DisableEvent and RequestEvent: which JVMPI events this runtime can produce, and
// the JVMTI events each one needs switched on.
#pragma once

#include <jni.h>
#include <jvmpi.h>
#include <jvmti.h>

namespace jvmpi::event_control {

jint enable(jint event_type, void* arg);
jint disable(jint event_type, void* arg);
jint request(jint event_type, void* arg);

// Applies JVMTI notification changes that had to wait for the live phase (JVMTI refuses them in
// the start phase). Called at VM init.
void apply_pending();

// Forgets which JVMTI events were asked for (a detach turned every one off).
void forget_applied();

// Brings one JVMTI event's notification mode in line with what is enabled now (for the
// extensions, which need JVMTI events outside EnableEvent).
void refresh(jvmtiEvent event);

}  // namespace jvmpi::event_control
