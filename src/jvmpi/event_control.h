// EnableEvent, DisableEvent and RequestEvent: which JVMPI events this runtime can produce, and
// the JVMTI events each one needs switched on.
#pragma once

#include <jni.h>
#include <jvmpi.h>

namespace jvmpi::event_control {

jint enable(jint event_type, void* arg);
jint disable(jint event_type, void* arg);
jint request(jint event_type, void* arg);

// Applies JVMTI notification changes that had to wait for the live phase (JVMTI refuses them in
// the start phase). Called at VM init.
void apply_pending();

}  // namespace jvmpi::event_control
