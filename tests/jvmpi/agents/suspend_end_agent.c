// SPDX-License-Identifier: Apache-2.0
/*
 * SuspendThread/ResumeThread across a thread's removal from the runtime: a thread suspended inside
 * its own THREAD_END handler must still be resumable by its JNIEnv after the runtime has dropped
 * it (as happens when a sampler suspends a thread that is ending, or halting the VM).
 *
 * At JVM_INIT_DONE the agent creates the system thread "jvmpitest-suspender". In the THREAD_END of
 * "jvmpitest-ending" (named by its THREAD_START), the handler, on the ending thread, hands its env
 * to the system thread and waits until it has called SuspendThread(env); then it returns, and the
 * suspension takes hold as the thread leaves the event, after the runtime has dropped the thread's
 * record. The system thread polls GetThreadObject(env), which answers from that record, until it
 * answers NULL, then calls ResumeThread(env). The Java program's hook 1 waits for the system
 * thread to finish. With the option list=1 the system thread uses SuspendThreadList and
 * ResumeThreadList (one env) instead, and logs their results.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "agent_common.h"

#define WORKER "jvmpitest-ending"
#define REMOVAL_BOUND_MS 5000 /* how long the removal may take before the agent gives up */
#define POLL_MS 2

static JVMPI_Interface* jvmpi;
static JVMPI_RawMonitor control; /* '_': the agent's own lock, no contention events */
static JNIEnv* request_env;      /* under control: the worker's env, from its THREAD_END */
static volatile int done;        /* under control: the system thread has finished */
static int use_list;             /* option list=1: the List variants */

/* The ending thread waits for SuspendThread on these, not on a JVMPI raw monitor: once a
 * suspension is pending, HotSpot stops the thread at its next entry into the VM, which the
 * re-entry of a JVMTI raw monitor after a wait is. The handler would then never return, the
 * runtime would never drop the thread's record, and the case under test would not arise. A
 * pthread condition keeps the thread in native code until it is back in the runtime. */
static pthread_mutex_t handoff = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t handoff_cond = PTHREAD_COND_INITIALIZER;
static int suspend_called; /* under handoff */

static void finish(void) {
  jvmpi->RawMonitorEnter(control);
  done = 1;
  jvmpi->RawMonitorNotifyAll(control);
  jvmpi->RawMonitorExit(control);
}

static void suspender_main(void* arg) {
  (void)arg;
  jvmpi->RawMonitorEnter(control);
  long long deadline = now_ms() + 30000;
  while (request_env == NULL && now_ms() < deadline) jvmpi->RawMonitorWait(control, 1000);
  JNIEnv* env = request_env;
  jvmpi->RawMonitorExit(control);
  if (env == NULL) {
    tl_log("NO_REQUEST");
    finish();
    return;
  }

  JNIEnv* envs[1] = {env};
  jint suspend_result = -2, resume_result = -2; /* -2: not a List call */
  if (use_list) {
    jvmpi->SuspendThreadList(1, envs, &suspend_result);
  } else {
    jvmpi->SuspendThread(env);
  }
  tl_log("SUSPENDED\tenv=0x%llx\tlist=%d\tresult=%d", PTR(env), use_list, (int)suspend_result);
  pthread_mutex_lock(&handoff);
  suspend_called = 1;
  pthread_cond_broadcast(&handoff_cond);
  pthread_mutex_unlock(&handoff);

  /* The worker returns from its handler; the runtime then drops its record. */
  long long start = now_ms();
  int polls = 0;
  jobjectID obj;
  jvmpi->RawMonitorEnter(control);
  while ((obj = jvmpi->GetThreadObject(env)) != NULL && now_ms() - start < REMOVAL_BOUND_MS) {
    jvmpi->RawMonitorWait(control, POLL_MS);
    polls++;
  }
  jvmpi->RawMonitorExit(control);
  long long waited = now_ms() - start;
  if (obj != NULL) {
    tl_log("REMOVAL_NOT_SEEN\tenv=0x%llx\twaited_ms=%lld\tthread_object=0x%llx", PTR(env), waited,
           PTR(obj));
  }
  tl_log("RESUMING\tenv=0x%llx\tremoved=%d\tpolls=%d\twaited_ms=%lld", PTR(env), obj == NULL, polls,
         waited);
  if (use_list) {
    jvmpi->ResumeThreadList(1, envs, &resume_result);
  } else {
    jvmpi->ResumeThread(env);
  }
  tl_log("RESUMED\tenv=0x%llx\tlist=%d\tresult=%d", PTR(env), use_list, (int)resume_result);
  finish();
}

/* THREAD_END of the worker, on the worker. */
static void worker_ending(JNIEnv* env) {
  jobjectID obj = jvmpi->GetThreadObject(env); /* still known inside its THREAD_END */
  jvmpi->RawMonitorEnter(control);
  request_env = env;
  jvmpi->RawMonitorNotifyAll(control);
  jvmpi->RawMonitorExit(control);

  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 30;
  pthread_mutex_lock(&handoff);
  int rc = 0;
  while (!suspend_called && rc != ETIMEDOUT) {
    rc = pthread_cond_timedwait(&handoff_cond, &handoff, &deadline);
  }
  int called = suspend_called;
  pthread_mutex_unlock(&handoff);
  /* Plain C from here on (tl_log is stdio): nothing that enters the VM before the runtime's
   * THREAD_END handling is over. */
  tl_log("END_HANDLER\tenv=0x%llx\tthread_object=0x%llx\tsuspend_called=%d", PTR(env), PTR(obj),
         called);
}

static void notify_event(JVMPI_Event* ev) {
  switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_THREAD_START:
      threads_add(ev->u.thread_start.thread_env_id, ev->u.thread_start.thread_name);
      if (ev->u.thread_start.thread_name != NULL &&
          strcmp(ev->u.thread_start.thread_name, WORKER) == 0) {
        tl_log("WORKER_TS\tenv=0x%llx", PTR(ev->u.thread_start.thread_env_id));
      }
      break;
    case JVMPI_EVENT_THREAD_END: {
      char name[128];
      threads_name(ev->env_id, name, sizeof name);
      threads_remove(ev->env_id);
      if (strcmp(name, WORKER) == 0) worker_ending(ev->env_id);
      break;
    }
    case JVMPI_EVENT_JVM_INIT_DONE:
      tl_log("CREATE\trc=%d", (int)jvmpi->CreateSystemThread(
                                  "jvmpitest-suspender", JVMPI_NORMAL_PRIORITY, suspender_main));
      break;
    default:
      break;
  }
}

/* Hook 1: waits (bounded) for the system thread to finish; answers whether it did. */
JNIEXPORT jlong JNICALL Java_jvmpitest_Agent_hook(JNIEnv* env, jclass cls, jint code, jlong arg,
                                                  jobject obj) {
  (void)env;
  (void)cls;
  (void)arg;
  (void)obj;
  if (code != 1) return -1;
  jvmpi->RawMonitorEnter(control);
  long long deadline = now_ms() + 30000;
  while (!done && now_ms() < deadline) jvmpi->RawMonitorWait(control, 1000);
  int result = done;
  jvmpi->RawMonitorExit(control);
  return result;
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* jvm, char* options, void* reserved) {
  (void)reserved;
  if (!tl_open(options)) return JNI_ERR;
  if ((*jvm)->GetEnv(jvm, (void**)&jvmpi, JVMPI_VERSION_1) != JNI_OK) return JNI_ERR;
  char list[8];
  use_list = opt_value(options, "list", list, sizeof list) && strcmp(list, "1") == 0;
  control = jvmpi->RawMonitorCreate("_jvmpitest.suspend_end");
  jvmpi->NotifyEvent = notify_event;
  jvmpi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_THREAD_END, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL);
  return JNI_OK;
}
