// SPDX-License-Identifier: Apache-2.0
/*
 * GetCallTrace and GetCurrentThreadCpuTime, called at known points of the Java program.
 *
 * Hook 1: the call trace of the calling thread (depth 16 and depth 2), and of the thread named
 * "jvmpitest-trace-target" while it is suspended with SuspendThread. Method IDs are resolved to
 * names through CLASS_LOAD data, the way a profiler front end would.
 * Hook 2: returns GetCurrentThreadCpuTime().
 * Hook 3: GetCallTrace of the trace target after its THREAD_END (must give no frames).
 * Hooks 4 and 5: enable and disable METHOD_ENTRY (the loaded classes are retransformed).
 * Hook 6: the call trace of the calling thread, logged with who=call<arg>.
 */
#include <stdio.h>
#include <string.h>

#include "agent_common.h"

static JVMPI_Interface* jvmpi;
static JNIEnv* volatile ended_target; /* the env the target thread had, after its THREAD_END */

static void log_trace(const char* who, JVMPI_CallTrace* trace) {
  tl_log("TRACE\twho=%s\tnum_frames=%d\tenv=0x%llx", who, (int)trace->num_frames,
         PTR(trace->env_id));
  for (int i = 0; i < trace->num_frames; i++) {
    const char* name = names_method(trace->frames[i].method_id);
    tl_log("FRAME\twho=%s\tidx=%d\tmethod=%s\tline=%d\tmid=0x%llx", who, i, name ? name : "?",
           (int)trace->frames[i].lineno, PTR(trace->frames[i].method_id));
  }
}

/* The calling thread's call trace, up to `depth` (at most 16) frames, logged as `who`. */
static void trace_self(JNIEnv* self, const char* who, jint depth) {
  JVMPI_CallFrame frames[16];
  JVMPI_CallTrace trace;
  memset(frames, 0, sizeof frames);
  trace.env_id = self;
  trace.frames = frames;
  trace.num_frames = -1;
  jvmpi->GetCallTrace(&trace, depth);
  log_trace(who, &trace);
}

static void traces(JNIEnv* self) {
  JVMPI_CallFrame frames[16];
  JVMPI_CallTrace trace;

  trace_self(self, "self", 16);
  trace_self(self, "self_depth2", 2);

  JNIEnv* target = threads_find("jvmpitest-trace-target");
  if (target == NULL) {
    tl_log("NO_TARGET");
    return;
  }
  memset(frames, 0, sizeof frames);
  trace.env_id = target;
  trace.frames = frames;
  trace.num_frames = -1;
  /* Nothing that may take a C library lock while the other thread is suspended: log after. */
  jvmpi->DisableGC();
  jvmpi->SuspendThread(target);
  jvmpi->GetCallTrace(&trace, 16);
  jvmpi->ResumeThread(target);
  jvmpi->EnableGC();
  log_trace("other", &trace);
}

static void notify_event(JVMPI_Event* ev) {
  switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
      names_add_class(ev);
      break;
    case JVMPI_EVENT_THREAD_START:
      threads_add(ev->u.thread_start.thread_env_id, ev->u.thread_start.thread_name);
      break;
    case JVMPI_EVENT_THREAD_END: {
      char name[128];
      threads_name(ev->env_id, name, sizeof name);
      if (strcmp(name, "jvmpitest-trace-target") == 0) ended_target = ev->env_id;
      threads_remove(ev->env_id);
      break;
    }
    default:
      break;
  }
}

JNIEXPORT jlong JNICALL Java_jvmpitest_Agent_hook(JNIEnv* env, jclass cls, jint code, jlong arg,
                                                  jobject obj) {
  (void)cls;
  (void)obj;
  if (code == 1) {
    traces(env);
    return 0;
  }
  if (code == 2) return jvmpi->GetCurrentThreadCpuTime();
  if (code == 3) {
    JVMPI_CallFrame frames[16];
    JVMPI_CallTrace trace;
    trace.env_id = ended_target;
    trace.frames = frames;
    trace.num_frames = -1;
    if (ended_target != NULL) jvmpi->GetCallTrace(&trace, 16);
    tl_log("ENDED_TRACE\tknown=%d\tnum_frames=%d", ended_target != NULL, (int)trace.num_frames);
    return 0;
  }
  if (code == 4) return jvmpi->EnableEvent(JVMPI_EVENT_METHOD_ENTRY, NULL);
  if (code == 5) return jvmpi->DisableEvent(JVMPI_EVENT_METHOD_ENTRY, NULL);
  if (code == 6) {
    char who[32];
    snprintf(who, sizeof who, "call%lld", (long long)arg);
    trace_self(env, who, 16);
    return 0;
  }
  return -1;
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* jvm, char* options, void* reserved) {
  (void)reserved;
  if (!tl_open(options)) return JNI_ERR;
  if ((*jvm)->GetEnv(jvm, (void**)&jvmpi, JVMPI_VERSION_1) != JNI_OK) return JNI_ERR;
  jvmpi->NotifyEvent = notify_event;
  jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_THREAD_END, NULL);
  return JNI_OK;
}
