// SPDX-License-Identifier: Apache-2.0
// THREAD_START and THREAD_END, requested THREAD_START, and the runtime's own threads.
#pragma once

#include <jni.h>
#include <jvmpi.h>
#include <jvmti.h>

namespace jvmpi::thread_events {

void JNICALL on_thread_start(jvmtiEnv* jvmti, JNIEnv* jni, jthread thread);
void JNICALL on_thread_end(jvmtiEnv* jvmti, JNIEnv* jni, jthread thread);

// Makes sure the calling thread is registered, and that the agent got its THREAD_START before an
// event carrying its env_id (threads that started before our events could be delivered, such as
// the main thread, are announced on first sight). Cheap after the first call on a thread.
[[nodiscard]] bool ensure_known(JNIEnv* jni, jthread thread = nullptr);

// Announces every registered thread the agent has not yet been told about (at VM init).
void announce_known_threads(JNIEnv* jni);

// A new profiling session (an attach): what each thread's ensure_known settled for the previous
// one is asked again.
void begin_session();

// Drops the references to the runtime's own threads (a detach, once they have ended).
void forget_internal_threads(JNIEnv* jni);

// The GC reporter, a thread of the runtime's own, delivers GC_START and GC_FINISH. Agents of the
// HPROF lineage look up per-thread state for those events' env_id (their CPU-time accounting
// charges the collection to it, under a lock taken in GC_START and released in GC_FINISH), so
// the reporter is announced, with THREAD_START, before the first pair it delivers; nothing else it
// does is delivered. Returns whether the agent now knows the calling thread (THREAD_START on).
bool announce_reporter_thread(JNIEnv* jni);

// THREAD_END for the calling reporter thread if it was announced, delivered by the thread itself
// as its work ends: JVMTI's ThreadEnd comes only once the thread is gone, after VMDeath when the VM
// exits, too late for the agent, which would keep the thread in its tables with no state behind it.
void end_reporter_thread(JNIEnv* jni);

// RequestEvent(THREAD_START, thread_object_id).
jint request_thread_start(JNIEnv* jni, jobjectID thread_id);

// Starts a daemon thread that runs `body(arg)`. `internal` threads belong to the runtime and are
// never reported to the agent. Returns whether the thread started.
bool start_thread(JNIEnv* jni, const char* name, jint priority, jvmtiStartFunction body, void* arg,
                  bool internal);

}  // namespace jvmpi::thread_events
