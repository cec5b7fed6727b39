// SPDX-License-Identifier: Apache-2.0
// The JVMPI functions that act on threads: call traces, suspension, status, ThreadHasRun, CPU
// time, system threads, thread-local storage and thread objects.
#pragma once

#include <jvmpi.h>

namespace jvmpi::thread_control {

void get_call_trace(JVMPI_CallTrace* trace, jint depth);
// `thread`'s stack (nullptr: the calling thread) into trace->frames, at most `depth` frames; each
// frame's lineno is its source line, or with `bytecode_indexes` its bytecode index (-1: native).
void fill_call_trace(jobject thread, jint depth, bool bytecode_indexes, JVMPI_CallTrace* trace);
jlong current_thread_cpu_time();
void suspend(JNIEnv* env);
void resume(JNIEnv* env);
void suspend_list(jint count, JNIEnv** envs, jint* results);
void resume_list(jint count, JNIEnv** envs, jint* results);
jint status(JNIEnv* env);
jboolean has_run(JNIEnv* env);

// From JVM_INIT_DONE on (the runtime calls this right before delivering it).
void allow_system_threads();
jint create_system_thread(char* name, jint priority, void (*f)(void*));
void set_local_storage(JNIEnv* env, void* ptr);
void* get_local_storage(JNIEnv* env);
jobjectID thread_object(JNIEnv* env);

}  // namespace jvmpi::thread_control
