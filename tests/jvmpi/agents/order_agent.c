// SPDX-License-Identifier: Apache-2.0
/*
 * Checks that a thread's THREAD_START comes before any other event of that thread and that no
 * event follows its THREAD_END: every METHOD_ENTRY/EXIT, CLASS_LOAD and OBJECT_ALLOC is checked
 * against the state of its env_id (a JNIEnv may be reused by a later thread only after a new
 * THREAD_START). SetThreadLocalStorage/GetThreadLocalStorage must work for every event's thread.
 *
 * Log: VIOLATION (the first few), SUMMARY at JVM_SHUT_DOWN.
 */
#include <pthread.h>
#include <stdio.h>

#include "agent_common.h"

enum { kSlots = 4096, kStarted = 1, kEnded = 2 };

static JVMPI_Interface* jvmpi;
static volatile int init_done;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  JNIEnv* env;
  int state;
} slots[kSlots];
static long events_checked, before_start, after_end, tls_lost, violations_logged;

static int* state_of(JNIEnv* env) {
  size_t h = ((uintptr_t)env >> 4) % kSlots;
  for (size_t i = 0; i < kSlots; i++, h = (h + 1) % kSlots) {
    if (slots[h].env == env) return &slots[h].state;
    if (slots[h].env == NULL) {
      slots[h].env = env;
      slots[h].state = 0;
      return &slots[h].state;
    }
  }
  return NULL;
}

static void check(JVMPI_Event* ev, const char* what) {
  /* Before JVM_INIT_DONE no thread can be described yet (the main thread's Thread object does not
   * exist in JVMTI's start phase): the start-up batch precedes every THREAD_START. */
  if (ev->env_id == NULL || !init_done) return;
  pthread_mutex_lock(&lock);
  int* state = state_of(ev->env_id);
  events_checked++;
  if (state != NULL && *state != kStarted) {
    if (*state == kEnded)
      after_end++;
    else
      before_start++;
    if (violations_logged++ < 5)
      tl_log("VIOLATION\tevent=%s\tenv=0x%llx\tstate=%s\tmethod=%s", what, PTR(ev->env_id),
             *state == kEnded ? "ended" : "not_started",
             (ev->event_type & ~JVMPI_REQUESTED_EVENT) == JVMPI_EVENT_METHOD_ENTRY &&
                     names_method(ev->u.method.method_id) != NULL
                 ? names_method(ev->u.method.method_id)
                 : "-");
  }
  pthread_mutex_unlock(&lock);
  /* The thread's storage, set at its THREAD_START, is there for its every event. */
  if (state != NULL && *state == kStarted && jvmpi->GetThreadLocalStorage(ev->env_id) == NULL)
    tls_lost++;
}

static void notify_event(JVMPI_Event* ev) {
  switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_THREAD_START:
      pthread_mutex_lock(&lock);
      if (state_of(ev->u.thread_start.thread_env_id) != NULL)
        *state_of(ev->u.thread_start.thread_env_id) = kStarted;
      pthread_mutex_unlock(&lock);
      jvmpi->SetThreadLocalStorage(ev->u.thread_start.thread_env_id,
                                   (void*)ev->u.thread_start.thread_env_id);
      break;
    case JVMPI_EVENT_THREAD_END:
      check(ev, "THREAD_END");
      pthread_mutex_lock(&lock);
      if (state_of(ev->env_id) != NULL) *state_of(ev->env_id) = kEnded;
      pthread_mutex_unlock(&lock);
      break;
    case JVMPI_EVENT_METHOD_ENTRY:
      check(ev, "METHOD_ENTRY");
      break;
    case JVMPI_EVENT_METHOD_EXIT:
      check(ev, "METHOD_EXIT");
      break;
    case JVMPI_EVENT_CLASS_LOAD:
      names_add_class(ev);
      if (!(ev->event_type & JVMPI_REQUESTED_EVENT)) check(ev, "CLASS_LOAD");
      break;
    case JVMPI_EVENT_JVM_INIT_DONE:
      init_done = 1;
      break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
      tl_log("SUMMARY\tchecked=%ld\tbefore_start=%ld\tafter_end=%ld\ttls_lost=%ld", events_checked,
             before_start, after_end, tls_lost);
      break;
    default:
      break;
  }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* vm, char* options, void* reserved) {
  (void)reserved;
  if (!tl_open(options)) return JNI_ERR;
  if ((*vm)->GetEnv(vm, (void**)&jvmpi, JVMPI_VERSION_1) != JNI_OK) return JNI_ERR;
  jvmpi->NotifyEvent = notify_event;
  jvmpi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_THREAD_END, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_METHOD_ENTRY, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_METHOD_EXIT, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL);
  return JNI_OK;
}
