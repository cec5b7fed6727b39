// SPDX-License-Identifier: Apache-2.0
/*
 * MONITOR_CONTENDED_EXIT (with CONTENDED_ENTER/ENTERED, THREAD_START/END and CLASS_LOAD for
 * names). Hooks for ContendedExitProgram:
 *   1: logs the object's ID under a label (arg);
 *   2: answers how many CONTENDED_ENTER events so far named the object (the program waits for
 *      one before it releases, so the release is one the runtime knows to be contended);
 *   3: DisableEvent(MONITOR_CONTENDED_EXIT), logging the answer.
 */
#include <string.h>

#include "agent_common.h"

static JVMPI_Interface* jvmpi;

#define MAX_ENTERS 256
static jobjectID entered_ids[MAX_ENTERS];
static int entered_count; /* guarded by the raw monitor below */
static JVMPI_RawMonitor lock;

static void monitor_event(JVMPI_Event* ev, const char* kind) {
  char thread[128];
  threads_name(ev->env_id, thread, sizeof thread);
  tl_log("MON\tkind=%s\tthread=%s\tobj=0x%llx", kind, thread, PTR(ev->u.monitor.object));
}

static void notify_event(JVMPI_Event* ev) {
  switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_THREAD_START:
      threads_add(ev->u.thread_start.thread_env_id, ev->u.thread_start.thread_name);
      break;
    case JVMPI_EVENT_THREAD_END:
      threads_remove(ev->env_id);
      break;
    case JVMPI_EVENT_CLASS_LOAD:
      if (strncmp(ev->u.class_load.class_name, "jvmpitest.", 10) == 0) {
        tl_log("CL\tname=%s\tid=0x%llx", ev->u.class_load.class_name,
               PTR(ev->u.class_load.class_id));
      }
      break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER:
      monitor_event(ev, "ENTER");
      jvmpi->RawMonitorEnter(lock);
      if (entered_count < MAX_ENTERS) entered_ids[entered_count++] = ev->u.monitor.object;
      jvmpi->RawMonitorExit(lock);
      break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
      monitor_event(ev, "ENTERED");
      break;
    case JVMPI_EVENT_MONITOR_CONTENDED_EXIT:
      monitor_event(ev, "EXIT");
      break;
    default:
      break;
  }
}

JNIEXPORT jlong JNICALL Java_jvmpitest_Agent_hook(JNIEnv* env, jclass cls, jint code, jlong arg,
                                                  jobject obj) {
  (void)env;
  (void)cls;
  if (code == 1) {
    tl_log("OBJID\twhat=%lld\tid=0x%llx", (long long)arg, PTR(jvmpi->jobject2jobjectID(obj)));
    return 0;
  }
  if (code == 2) {
    jobjectID id = jvmpi->jobject2jobjectID(obj);
    jlong seen = 0;
    jvmpi->RawMonitorEnter(lock);
    for (int i = 0; i < entered_count; i++) seen += entered_ids[i] == id;
    jvmpi->RawMonitorExit(lock);
    return seen;
  }
  if (code == 3) {
    tl_log("DISABLE\tevent=%d\trc=%d", JVMPI_EVENT_MONITOR_CONTENDED_EXIT,
           (int)jvmpi->DisableEvent(JVMPI_EVENT_MONITOR_CONTENDED_EXIT, NULL));
    return 0;
  }
  return -1;
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* jvm, char* options, void* reserved) {
  (void)reserved;
  if (!tl_open(options)) return JNI_ERR;
  if ((*jvm)->GetEnv(jvm, (void**)&jvmpi, JVMPI_VERSION_1_1) != JNI_OK) return JNI_ERR;
  jvmpi->NotifyEvent = notify_event;
  lock = jvmpi->RawMonitorCreate("_jvmpitest.enters");
  jint events[] = {JVMPI_EVENT_THREAD_START,
                   JVMPI_EVENT_THREAD_END,
                   JVMPI_EVENT_CLASS_LOAD,
                   JVMPI_EVENT_MONITOR_CONTENDED_ENTER,
                   JVMPI_EVENT_MONITOR_CONTENDED_ENTERED,
                   JVMPI_EVENT_MONITOR_CONTENDED_EXIT};
  for (size_t i = 0; i < sizeof events / sizeof events[0]; i++) {
    tl_log("ENABLE\tevent=%d\trc=%d", (int)events[i], (int)jvmpi->EnableEvent(events[i], NULL));
  }
  return JNI_OK;
}
