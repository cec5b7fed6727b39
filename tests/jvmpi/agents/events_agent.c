// SPDX-License-Identifier: Apache-2.0
/*
 * EnableEvent/DisableEvent/RequestEvent answers, and that a disabled event stops arriving.
 * At JVM_OnLoad it logs the answers for event numbers that must be refused; hook 1 disables
 * THREAD_START, hook 2 enables it again; every THREAD_START is logged with the thread's name.
 */
#include "agent_common.h"

static JVMPI_Interface* jvmpi;

static void notify_event(JVMPI_Event* ev) {
  if ((ev->event_type & ~JVMPI_REQUESTED_EVENT) == JVMPI_EVENT_THREAD_START) {
    tl_log("TS\tname=%s", ev->u.thread_start.thread_name);
  }
}

static void answer(const char* op, jint event, jint rc) {
  tl_log("RC\top=%s\tevent=%d\trc=%d", op, (int)event, (int)rc);
}

JNIEXPORT jlong JNICALL Java_jvmpitest_Agent_hook(JNIEnv* env, jclass cls, jint code, jlong arg,
                                                  jobject obj) {
  (void)env;
  (void)cls;
  (void)arg;
  (void)obj;
  if (code == 1) {
    jint rc = jvmpi->DisableEvent(JVMPI_EVENT_THREAD_START, NULL);
    answer("disable_live", JVMPI_EVENT_THREAD_START, rc);
    return rc;
  }
  if (code == 2) {
    jint rc = jvmpi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL);
    answer("enable_live", JVMPI_EVENT_THREAD_START, rc);
    return rc;
  }
  return -1;
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* jvm, char* options, void* reserved) {
  (void)reserved;
  if (!tl_open(options)) return JNI_ERR;
  if ((*jvm)->GetEnv(jvm, (void**)&jvmpi, JVMPI_VERSION_1_2) != JNI_OK) return JNI_ERR;
  jvmpi->NotifyEvent = notify_event;

  /* Must be refused: request-only dumps, numbers outside 1..61 and unassigned ones, and the one
   * event the runtime documents as not available. */
  jint refused[] = {JVMPI_EVENT_HEAP_DUMP,
                    JVMPI_EVENT_MONITOR_DUMP,
                    JVMPI_EVENT_OBJECT_DUMP,
                    0,
                    -1,
                    62,
                    100,
                    0x10000000 | JVMPI_EVENT_THREAD_START,
                    10,
                    32,
                    36};
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    answer("enable", refused[i], jvmpi->EnableEvent(refused[i], NULL));
    answer("disable", refused[i], jvmpi->DisableEvent(refused[i], NULL));
  }
  /* RequestEvent serves only CLASS_LOAD, THREAD_START, OBJECT_ALLOC and the three dumps. */
  answer("request", JVMPI_EVENT_GC_START, jvmpi->RequestEvent(JVMPI_EVENT_GC_START, NULL));
  answer("request", JVMPI_EVENT_THREAD_END, jvmpi->RequestEvent(JVMPI_EVENT_THREAD_END, NULL));
  answer("request", 62, jvmpi->RequestEvent(62, NULL));

  /* Every event that is not request-only can be enabled and disabled again (34 of JVMPI's 37;
   * HEAP_DUMP, OBJECT_DUMP and MONITOR_DUMP are requested). */
  for (jint e = 1; e <= JVMPI_MAX_EVENT_TYPE_VAL; e++) {
    if ((e > 9 && e < 33) || e == 36 || e == JVMPI_EVENT_HEAP_DUMP ||
        e == JVMPI_EVENT_OBJECT_DUMP || e == JVMPI_EVENT_MONITOR_DUMP) {
      continue;
    }
    jint on = jvmpi->EnableEvent(e, NULL);
    jint off = jvmpi->DisableEvent(e, NULL);
    tl_log("EVERY\tevent=%d\tenable=%d\tdisable=%d", (int)e, (int)on, (int)off);
  }
  /* Supported events: SUCCESS both ways. */
  answer("enable", JVMPI_EVENT_THREAD_START, jvmpi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL));
  answer("enable", JVMPI_EVENT_GC_START, jvmpi->EnableEvent(JVMPI_EVENT_GC_START, NULL));
  answer("disable", JVMPI_EVENT_GC_START, jvmpi->DisableEvent(JVMPI_EVENT_GC_START, NULL));
  return JNI_OK;
}
