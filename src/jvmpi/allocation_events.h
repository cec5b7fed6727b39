// SPDX-License-Identifier: Apache-2.0
// OBJECT_ALLOC for every allocation, from JVMTI's allocation sampler set to sample each one
// (interval 0). The sampler sees allocations from bytecode, reflection, JNI and the VM itself,
// in interpreted and compiled code alike, which bytecode insertion alone would not.
// Each allocated object is tagged with its new ID before the agent hears of it.
#pragma once

#include <jni.h>
#include <jvmpi_ext.h>
#include <jvmti.h>

namespace jvmpi::allocation_events {

void JNICALL on_sampled_object_alloc(jvmtiEnv*, JNIEnv* jni, jthread thread, jobject object,
                                     jclass klass, jlong size);

// Marks the calling thread's allocations as the runtime's own (not reported) while in scope.
class InternalAllocations {
 public:
  InternalAllocations();
  ~InternalAllocations();
  InternalAllocations(const InternalAllocations&) = delete;
  InternalAllocations& operator=(const InternalAllocations&) = delete;
};

void JNICALL on_vm_object_alloc(jvmtiEnv*, JNIEnv* jni, jthread thread, jobject object,
                                jclass klass, jlong size);

// Switches per-allocation sampling on or off (follows EnableEvent(OBJECT_ALLOC)).
void set_tracking(bool on);

// Makes the calling thread's sampler take the per-allocation interval at once (see .cpp).
void prime_current_thread(JNIEnv* jni);

// Sampled allocations for the extension interface (jvmpi_ext.h).
jint JNICALL start_sampling(jint interval_bytes, JVMPIExt_AllocSampleHandler handler, void* arg);
jint JNICALL stop_sampling();
// Whether sampled allocations are on (JVMTI's SampledObjectAlloc must then stay enabled).
bool sampling_on();

// Drops what was cached about a class that was unloaded.
void forget_class(jlong class_tag);

}  // namespace jvmpi::allocation_events
