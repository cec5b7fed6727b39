// SPDX-License-Identifier: Apache-2.0
/*
 * METHOD_ENTRY / METHOD_ENTRY2 / METHOD_EXIT on the thread "jvmpitest-caller". Options:
 * events=entry (METHOD_ENTRY + METHOD_EXIT) or events=entry2 (METHOD_ENTRY2 + METHOD_EXIT). The
 * agent counts entries and exits per method of the test package, checks that exits match the
 * entries they close (a shadow stack), and for ENTRY2 counts the obj_id values: NULL, the Worker
 * the program names with hook 9, or another object. Hook 2 logs the counts.
 */
#include <pthread.h>
#include <string.h>

#include "agent_common.h"

#define MAX_METHODS 64
#define MAX_DEPTH 256

static JVMPI_Interface* jvmpi;
static JNIEnv* volatile caller;
static jobjectID worker;
static int use_entry2;

static struct {
  jmethodID id;
  const char* name;
  long entries, exits, receiver_null, receiver_worker, receiver_other;
} counts[MAX_METHODS];
static int method_count;
static jmethodID stack[MAX_DEPTH];
static int depth, mismatches, overflow;

static int slot(jmethodID id) {
  for (int i = 0; i < method_count; i++) {
    if (counts[i].id == id) return i;
  }
  const char* name = names_method(id);
  if (name == NULL || strncmp(name, "jvmpitest.MethodProgram", 23) != 0) return -1;
  if (method_count == MAX_METHODS) return -1;
  counts[method_count].id = id;
  counts[method_count].name = name;
  return method_count++;
}

/* Only the caller thread gets here, so the counters need no lock. */
static void entry(JVMPI_Event* ev, jmethodID id, int with_object, jobjectID obj) {
  if (depth < MAX_DEPTH) {
    stack[depth] = id;
  } else {
    overflow = 1;
  }
  depth++;
  int i = slot(id);
  if (i < 0) return;
  counts[i].entries++;
  if (with_object) {
    if (obj == NULL) {
      counts[i].receiver_null++;
    } else if (obj == worker) {
      counts[i].receiver_worker++;
    } else {
      counts[i].receiver_other++;
    }
  }
  (void)ev;
}

static void exit_method(jmethodID id) {
  if (depth == 0) {
    mismatches++;
    return;
  }
  depth--;
  if (depth < MAX_DEPTH && stack[depth] != id) mismatches++;
  int i = slot(id);
  if (i >= 0) counts[i].exits++;
}

static void notify_event(JVMPI_Event* ev) {
  int type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
  switch (type) {
    case JVMPI_EVENT_CLASS_LOAD:
      names_add_class(ev);
      return;
    case JVMPI_EVENT_THREAD_START:
      if (strcmp(ev->u.thread_start.thread_name, "jvmpitest-caller") == 0) {
        caller = ev->u.thread_start.thread_env_id;
      }
      return;
    default:
      break;
  }
  if (ev->env_id == NULL || ev->env_id != caller) return;
  if (type == JVMPI_EVENT_METHOD_ENTRY) entry(ev, ev->u.method.method_id, 0, NULL);
  if (type == JVMPI_EVENT_METHOD_ENTRY2) {
    entry(ev, ev->u.method_entry2.method_id, 1, ev->u.method_entry2.obj_id);
  }
  if (type == JVMPI_EVENT_METHOD_EXIT) exit_method(ev->u.method.method_id);
}

JNIEXPORT jlong JNICALL Java_jvmpitest_Agent_hook(JNIEnv* env, jclass cls, jint code, jlong arg,
                                                  jobject obj) {
  (void)env;
  (void)cls;
  (void)arg;
  if (code == 9) {
    jvmpi->DisableGC();
    worker = jvmpi->jobject2jobjectID(obj);
    jvmpi->EnableGC();
    return 0;
  }
  if (code == 2) {
    for (int i = 0; i < method_count; i++) {
      tl_log(
          "COUNT\tmethod=%s\tentries=%ld\texits=%ld\treceiver_null=%ld\treceiver_worker=%ld\t"
          "receiver_other=%ld",
          counts[i].name, counts[i].entries, counts[i].exits, counts[i].receiver_null,
          counts[i].receiver_worker, counts[i].receiver_other);
    }
    tl_log("STACK\tdepth=%d\tmismatches=%d\toverflow=%d", depth, mismatches, overflow);
    return 0;
  }
  return -1;
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* jvm, char* options, void* reserved) {
  char events[32] = "entry";
  (void)reserved;
  if (!tl_open(options)) return JNI_ERR;
  if ((*jvm)->GetEnv(jvm, (void**)&jvmpi, JVMPI_VERSION_1) != JNI_OK) return JNI_ERR;
  opt_value(options, "events", events, sizeof events);
  use_entry2 = strcmp(events, "entry2") == 0;
  jvmpi->NotifyEvent = notify_event;
  jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL);
  jint entry_event = use_entry2 ? JVMPI_EVENT_METHOD_ENTRY2 : JVMPI_EVENT_METHOD_ENTRY;
  tl_log("ENABLE\tevent=%d\trc=%d", (int)entry_event, (int)jvmpi->EnableEvent(entry_event, NULL));
  tl_log("ENABLE\tevent=%d\trc=%d", (int)JVMPI_EVENT_METHOD_EXIT,
         (int)jvmpi->EnableEvent(JVMPI_EVENT_METHOD_EXIT, NULL));
  return JNI_OK;
}
