// SPDX-License-Identifier: Apache-2.0
/*
 * CreateSystemThread, SuspendThread/ResumeThread, ThreadHasRun and GetThreadStatus, the way a
 * sampling profiler uses them. At JVM_INIT_DONE the agent creates the system thread
 * "jvmpitest-sampler"; when the Java program has put its threads in place it calls hook 1, and the
 * sampler runs ROUNDS rounds: wait INTERVAL ms, suspend the spinner and the sleeper, ask
 * ThreadHasRun and GetThreadStatus of both, resume them. It also asks GetThreadStatus of every
 * named thread while they are not suspended, and repeats the rounds with SuspendThreadList and
 * ResumeThreadList. Results are logged after all threads are resumed.
 */
#include <pthread.h>
#include <string.h>

#include "agent_common.h"

#define ROUNDS 8
#define INTERVAL_MS 40
#define LIST_ROUNDS 4

static JVMPI_Interface* jvmpi;
static JVMPI_RawMonitor control; /* '_': the agent's own lock, no contention events */
static volatile int go, done;
static pthread_t creator, ts_thread;
static volatile int ts_seen;

static const char* const status_threads[] = {"jvmpitest-spinner", "jvmpitest-sleeper",
                                             "jvmpitest-blocked", "jvmpitest-waiter",
                                             "jvmpitest-interrupted"};
#define NUM_STATUS (sizeof status_threads / sizeof status_threads[0])

static void sample(void) {
  JNIEnv* spinner = threads_find("jvmpitest-spinner");
  JNIEnv* sleeper = threads_find("jvmpitest-sleeper");
  JNIEnv* status_envs[NUM_STATUS];
  jint status[NUM_STATUS];
  jboolean spinner_ran[ROUNDS], sleeper_ran[ROUNDS];
  jint spinner_status[ROUNDS], sleeper_status[ROUNDS];
  jint list_suspend[LIST_ROUNDS][2], list_resume[LIST_ROUNDS][2];
  jboolean list_spinner_ran[LIST_ROUNDS], list_sleeper_ran[LIST_ROUNDS];

  if (spinner == NULL || sleeper == NULL) {
    tl_log("MISSING_THREADS\tspinner=0x%llx\tsleeper=0x%llx", PTR(spinner), PTR(sleeper));
    return;
  }
  for (size_t i = 0; i < NUM_STATUS; i++) {
    status_envs[i] = threads_find(status_threads[i]);
    status[i] = status_envs[i] != NULL ? jvmpi->GetThreadStatus(status_envs[i]) : -1;
  }
  for (int r = 0; r < ROUNDS; r++) {
    jvmpi->RawMonitorEnter(control);
    jvmpi->RawMonitorWait(control, INTERVAL_MS); /* the sampling interval */
    jvmpi->RawMonitorExit(control);
    jvmpi->DisableGC();
    jvmpi->SuspendThread(spinner);
    jvmpi->SuspendThread(sleeper);
    spinner_ran[r] = jvmpi->ThreadHasRun(spinner);
    sleeper_ran[r] = jvmpi->ThreadHasRun(sleeper);
    spinner_status[r] = jvmpi->GetThreadStatus(spinner);
    sleeper_status[r] = jvmpi->GetThreadStatus(sleeper);
    jvmpi->ResumeThread(sleeper);
    jvmpi->ResumeThread(spinner);
    jvmpi->EnableGC();
  }
  /* The 1.2 list variants, a few rounds more. */
  for (int r = 0; r < LIST_ROUNDS; r++) {
    JNIEnv* list[2] = {spinner, sleeper};
    jvmpi->RawMonitorEnter(control);
    jvmpi->RawMonitorWait(control, INTERVAL_MS);
    jvmpi->RawMonitorExit(control);
    jvmpi->DisableGC();
    jvmpi->SuspendThreadList(2, list, list_suspend[r]);
    list_spinner_ran[r] = jvmpi->ThreadHasRun(spinner);
    list_sleeper_ran[r] = jvmpi->ThreadHasRun(sleeper);
    jvmpi->ResumeThreadList(2, list, list_resume[r]);
    jvmpi->EnableGC();
  }
  for (size_t i = 0; i < NUM_STATUS; i++) {
    tl_log("STATUS\tthread=%s\tstatus=%d\tfound=%d", status_threads[i], (int)status[i],
           status_envs[i] != NULL);
  }
  for (int r = 0; r < ROUNDS; r++) {
    tl_log("ROUND\tr=%d\tspinner_ran=%d\tsleeper_ran=%d\tspinner_status=%d\tsleeper_status=%d", r,
           spinner_ran[r], sleeper_ran[r], (int)spinner_status[r], (int)sleeper_status[r]);
  }
  for (int r = 0; r < LIST_ROUNDS; r++) {
    tl_log("LIST_ROUND\tr=%d\tsuspend=%d,%d\tresume=%d,%d\tspinner_ran=%d\tsleeper_ran=%d", r,
           (int)list_suspend[r][0], (int)list_suspend[r][1], (int)list_resume[r][0],
           (int)list_resume[r][1], list_spinner_ran[r], list_sleeper_ran[r]);
  }
}

static void sampler_main(void* arg) {
  tl_log("SYSTEM_THREAD\targ=0x%llx\tdiffers_from_creator=%d\tts_seen=%d\tsame_as_ts_thread=%d",
         PTR(arg), !pthread_equal(pthread_self(), creator), (int)ts_seen,
         ts_seen && pthread_equal(pthread_self(), ts_thread));
  jvmpi->RawMonitorEnter(control);
  long long deadline = now_ms() + 30000;
  while (!go && now_ms() < deadline) jvmpi->RawMonitorWait(control, 1000);
  jvmpi->RawMonitorExit(control);
  if (go) sample();
  jvmpi->RawMonitorEnter(control);
  done = 1;
  jvmpi->RawMonitorNotifyAll(control);
  jvmpi->RawMonitorExit(control);
}

static void notify_event(JVMPI_Event* ev) {
  switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_THREAD_START:
      threads_add(ev->u.thread_start.thread_env_id, ev->u.thread_start.thread_name);
      if (strcmp(ev->u.thread_start.thread_name, "jvmpitest-sampler") == 0) {
        ts_thread = pthread_self();
        ts_seen = 1;
        tl_log("SAMPLER_TS\tenv=0x%llx\tgroup=%s", PTR(ev->u.thread_start.thread_env_id),
               ev->u.thread_start.group_name);
      }
      break;
    case JVMPI_EVENT_THREAD_END:
      threads_remove(ev->env_id);
      break;
    case JVMPI_EVENT_JVM_INIT_DONE:
      creator = pthread_self();
      tl_log("CREATE\trc=%d", (int)jvmpi->CreateSystemThread("jvmpitest-sampler",
                                                             JVMPI_NORMAL_PRIORITY, sampler_main));
      break;
    default:
      break;
  }
}

JNIEXPORT jlong JNICALL Java_jvmpitest_Agent_hook(JNIEnv* env, jclass cls, jint code, jlong arg,
                                                  jobject obj) {
  (void)env;
  (void)cls;
  (void)arg;
  (void)obj;
  if (code != 1) return -1;
  jvmpi->RawMonitorEnter(control);
  go = 1;
  jvmpi->RawMonitorNotifyAll(control);
  long long deadline = now_ms() + 30000;
  while (!done && now_ms() < deadline) jvmpi->RawMonitorWait(control, 1000);
  jvmpi->RawMonitorExit(control);
  return done;
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* jvm, char* options, void* reserved) {
  (void)reserved;
  if (!tl_open(options)) return JNI_ERR;
  if ((*jvm)->GetEnv(jvm, (void**)&jvmpi, JVMPI_VERSION_1) != JNI_OK) return JNI_ERR;
  control = jvmpi->RawMonitorCreate("_jvmpitest.sampler");
  jvmpi->NotifyEvent = notify_event;
  jvmpi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_THREAD_END, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL);
  return JNI_OK;
}
