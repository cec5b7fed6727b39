// SPDX-License-Identifier: Apache-2.0
// CPU-time sampling for the extension interface (jvmpi_ext.h): a per-thread timer on each Java
// thread's CPU clock sends that thread SIGPROF; the handler records the thread's Java stack with
// HotSpot's AsyncGetCallTrace into a fixed ring, and DrainCpuSamples later resolves lines and
// hands the samples to the agent. Samples therefore follow CPU time and land where the thread
// really was, not at its next safepoint poll.
#pragma once

#include <jni.h>
#include <jvmpi_ext.h>
#include <jvmti.h>

namespace jvmpi::cpu_sampling {

jint JNICALL start(jlong interval_ns, jint max_depth);
jint JNICALL stop();
jint JNICALL drain(JVMPIExt_CpuSampleHandler handler, void* arg);
jint JNICALL stats(JVMPIExt_CpuSamplingStats* out, jint size);
const char* JNICALL failure_name(jint kind);
jint JNICALL set_options(jint options);
jint JNICALL set_depth(jint max_depth);

// Runtime hooks: a Java thread started (on that thread) or is ending (on that thread, before its
// record goes), a class was prepared (its methods get jmethodIDs for the stack walker), and the VM
// is dying (every timer goes before anything is torn down).
void on_thread_start(JNIEnv* jni);
void on_thread_end(JNIEnv* jni);
void on_class_prepare(jclass klass);
void JNICALL on_class_load(jvmtiEnv*, JNIEnv*, jthread, jclass);
void on_vm_death();
// After stop(), at a detach: every thread's timer deleted and its perf event closed.
void release_timers();
// With JVMPI_SAMPLER_STATS=1 in the environment, prints the counters on one stderr line (after the
// agent's JVM_SHUT_DOWN, so its last drain is counted).
void report_stats();

}  // namespace jvmpi::cpu_sampling
