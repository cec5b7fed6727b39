// SPDX-License-Identifier: Apache-2.0
/*
 * THREAD_START/THREAD_END and thread-local storage. For every thread the agent keeps a record,
 * stores it with SetThreadLocalStorage in THREAD_START, and checks GetThreadLocalStorage on every
 * later event of that thread and in THREAD_END. It also notes events whose env_id arrives before
 * that thread's THREAD_START.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent_common.h"

static JVMPI_Interface* jvmpi;
static volatile int init_done;
static pthread_t request_thread;
static volatile int request_active;

struct thread_record {
  char name[128];
  JNIEnv* env;
};

/* envs seen in events before their THREAD_START (cleared when it arrives) */
#define MAX_EARLY 256
static struct {
  JNIEnv* env;
  int type;
  int after_init;
} early[MAX_EARLY];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
#define MAX_STARTED 1024
static JNIEnv* started[MAX_STARTED]; /* live threads that had THREAD_START */

static int is_started(JNIEnv* env) {
  for (int i = 0; i < MAX_STARTED; i++) {
    if (started[i] == env) return 1;
  }
  return 0;
}

static void set_started(JNIEnv* env, int on) {
  for (int i = 0; i < MAX_STARTED; i++) {
    if (on ? started[i] == NULL : started[i] == env) {
      started[i] = on ? env : NULL;
      return;
    }
  }
}

static const char* or_null(const char* s) {
  return s != NULL ? s : "(null)";
}

static void log_thread_start(JVMPI_Event* ev, int early_type, int early_after_init) {
  JNIEnv* env = ev->u.thread_start.thread_env_id;
  jobjectID obj = jvmpi->GetThreadObject(env);
  tl_log(
      "TS\tname=%s\tgroup=%s\tparent=%s\tenv=0x%llx\tid=0x%llx\tget_thread_object=0x%llx\t"
      "event_env=0x%llx\trequested=%d\tafter_init=%d\tearly_event=%d\tearly_after_init=%d\t"
      "during_request=%d",
      or_null(ev->u.thread_start.thread_name), or_null(ev->u.thread_start.group_name),
      or_null(ev->u.thread_start.parent_name), PTR(env), PTR(ev->u.thread_start.thread_id),
      PTR(obj), PTR(ev->env_id), (ev->event_type & JVMPI_REQUESTED_EVENT) != 0, init_done,
      early_type, early_after_init,
      request_active && pthread_equal(request_thread, pthread_self()));
}

static void thread_start(JVMPI_Event* ev) {
  JNIEnv* env = ev->u.thread_start.thread_env_id;
  int early_type = 0, early_after_init = 0;
  if (ev->event_type & JVMPI_REQUESTED_EVENT) {
    log_thread_start(ev, 0, 0); /* a repeat: the thread's records stay as they are */
    return;
  }
  struct thread_record* rec = calloc(1, sizeof *rec);
  if (rec == NULL) return;
  snprintf(rec->name, sizeof rec->name, "%s", or_null(ev->u.thread_start.thread_name));
  rec->env = env;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < MAX_EARLY; i++) {
    if (early[i].env == env) {
      early_type = early[i].type;
      early_after_init = early[i].after_init;
      early[i].env = NULL;
    }
  }
  set_started(env, 1);
  pthread_mutex_unlock(&lock);
  jvmpi->SetThreadLocalStorage(env, rec);
  log_thread_start(ev, early_type, early_after_init);
}

static void thread_end(JVMPI_Event* ev) {
  struct thread_record* rec = jvmpi->GetThreadLocalStorage(ev->env_id);
  pthread_mutex_lock(&lock);
  int known = is_started(ev->env_id);
  set_started(ev->env_id, 0);
  pthread_mutex_unlock(&lock);
  tl_log("TE\tenv=0x%llx\tknown=%d\ttls_name=%s\ttls_env_ok=%d", PTR(ev->env_id), known,
         rec != NULL ? rec->name : "(null)", rec != NULL && rec->env == ev->env_id);
}

/* Any other event that names a thread: it must follow that thread's THREAD_START, and the
 * thread's storage must hold what THREAD_START put there. */
static void other_event(JVMPI_Event* ev, int type) {
  if (ev->env_id == NULL) return;
  pthread_mutex_lock(&lock);
  int known = is_started(ev->env_id);
  if (!known) {
    int slot = -1;
    for (int i = 0; i < MAX_EARLY; i++) {
      if (early[i].env == ev->env_id) {
        slot = -2;
        break;
      }
      if (early[i].env == NULL && slot == -1) slot = i;
    }
    if (slot >= 0) {
      early[slot].env = ev->env_id;
      early[slot].type = type;
      early[slot].after_init = init_done;
    }
  }
  pthread_mutex_unlock(&lock);
  if (known) {
    struct thread_record* rec = jvmpi->GetThreadLocalStorage(ev->env_id);
    if (rec == NULL || rec->env != ev->env_id) {
      tl_log("TLS_MISMATCH\ttype=%d\tenv=0x%llx", type, PTR(ev->env_id));
    } else {
      tl_log("EV\ttype=%d\tthread=%s", type, rec->name);
    }
  }
}

static void notify_event(JVMPI_Event* ev) {
  int type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
  switch (type) {
    case JVMPI_EVENT_THREAD_START:
      thread_start(ev);
      break;
    case JVMPI_EVENT_THREAD_END:
      thread_end(ev);
      break;
    case JVMPI_EVENT_JVM_INIT_DONE:
      init_done = 1;
      tl_log("INIT_DONE");
      break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
      tl_log("SHUT_DOWN");
      break;
    default:
      other_event(ev, type);
      break;
  }
}

/* Hook 1: RequestEvent(THREAD_START) for the java.lang.Thread passed. */
JNIEXPORT jlong JNICALL Java_jvmpitest_Agent_hook(JNIEnv* env, jclass cls, jint code, jlong arg,
                                                  jobject obj) {
  (void)env;
  (void)cls;
  (void)arg;
  if (code != 1) return -1;
  jvmpi->DisableGC();
  jobjectID id = jvmpi->jobject2jobjectID(obj);
  request_thread = pthread_self();
  request_active = 1;
  jint rc = jvmpi->RequestEvent(JVMPI_EVENT_THREAD_START, id);
  request_active = 0;
  jvmpi->EnableGC();
  tl_log("REQUEST\tid=0x%llx\trc=%d", PTR(id), (int)rc);
  return rc;
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* jvm, char* options, void* reserved) {
  (void)reserved;
  if (!tl_open(options)) return JNI_ERR;
  if ((*jvm)->GetEnv(jvm, (void**)&jvmpi, JVMPI_VERSION_1) != JNI_OK) return JNI_ERR;
  jvmpi->NotifyEvent = notify_event;
  jint events[] = {JVMPI_EVENT_THREAD_START,
                   JVMPI_EVENT_THREAD_END,
                   JVMPI_EVENT_JVM_INIT_DONE,
                   JVMPI_EVENT_JVM_SHUT_DOWN,
                   JVMPI_EVENT_CLASS_LOAD,
                   JVMPI_EVENT_MONITOR_WAIT,
                   JVMPI_EVENT_MONITOR_WAITED,
                   JVMPI_EVENT_MONITOR_CONTENDED_ENTER,
                   JVMPI_EVENT_MONITOR_CONTENDED_ENTERED};
  for (size_t i = 0; i < sizeof events / sizeof events[0]; i++) {
    if (jvmpi->EnableEvent(events[i], NULL) != JVMPI_SUCCESS) {
      tl_log("ENABLE_FAILED\tevent=%d", (int)events[i]);
    }
  }
  return JNI_OK;
}
