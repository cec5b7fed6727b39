// SPDX-License-Identifier: Apache-2.0
/*
 * Start-up conformance agent. Records the options text, what GetEnv answers for each JVMPI
 * version, and the life-cycle events: whether anything arrives while JVM_OnLoad runs, JVM_INIT_DONE
 * and JVM_SHUT_DOWN counts, and anything delivered after JVM_SHUT_DOWN.
 *
 * Like OProfile's agent it enables its events BEFORE it stores NotifyEvent.
 * Options (comma-separated): log=<path>; mode=fail (JVM_OnLoad returns JNI_ERR) or
 * mode=nonotify (never sets NotifyEvent, but enables events).
 */
#include <stdio.h>
#include <string.h>

#include "agent_common.h"

static JVMPI_Interface* jvmpi;
static volatile int in_onload;
static volatile int shut_down;
static int first_event_logged;
static long counts[JVMPI_MAX_EVENT_TYPE_VAL + 1];

static void notify_event(JVMPI_Event* ev) {
  int type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
  if (in_onload) tl_log("EVENT_IN_ONLOAD\ttype=%d", type);
  if (shut_down) {
    tl_log("AFTER_SHUTDOWN\ttype=%d", type);
    return;
  }
  if (!first_event_logged) {
    first_event_logged = 1;
    tl_log("FIRST_EVENT\ttype=%d", type);
  }
  if (type > 0 && type <= JVMPI_MAX_EVENT_TYPE_VAL) counts[type]++;
  switch (type) {
    case JVMPI_EVENT_JVM_INIT_DONE:
      tl_log("INIT_DONE\tenv=0x%llx", PTR(ev->env_id));
      break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
      tl_log("COUNTS\tthread_start=%ld\tthread_end=%ld\tclass_load=%ld",
             counts[JVMPI_EVENT_THREAD_START], counts[JVMPI_EVENT_THREAD_END],
             counts[JVMPI_EVENT_CLASS_LOAD]);
      tl_log("SHUT_DOWN");
      shut_down = 1;
      break;
    case JVMPI_EVENT_THREAD_START:
      tl_log("TS\tname=%s", ev->u.thread_start.thread_name);
      break;
    default:
      break;
  }
}

static void too_early(void* arg) {
  (void)arg;
  tl_log("EARLY_THREAD_RAN");
}

static void try_version(JavaVM* jvm, jint version) {
  void* sentinel = (void*)0x5a5a;
  void* env = sentinel;
  jint rc = (*jvm)->GetEnv(jvm, &env, version);
  unsigned long long table_version = 0;
  if (rc == JNI_OK && env != NULL && env != sentinel) {
    table_version = (unsigned long long)(unsigned)((JVMPI_Interface*)env)->version;
  }
  tl_log("GETENV\tversion=0x%x\trc=%d\tptr=0x%llx\tuntouched=%d\ttable_version=0x%llx",
         (unsigned)version, (int)rc, env == sentinel ? 0ULL : PTR(env), env == sentinel,
         table_version);
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* jvm, char* options, void* reserved) {
  char mode[64] = "";
  in_onload = 1;
  if (!tl_open(options)) {
    fprintf(stderr, "startup agent: no log file (log=<path> or JVMPI_TEST_LOG)\n");
    return JNI_ERR;
  }
  opt_value(options, "mode", mode, sizeof mode);
  tl_log("ONLOAD\toptions=%s\toptions_null=%d\treserved_null=%d", options != NULL ? options : "",
         options == NULL, reserved == NULL);

  try_version(jvm, JVMPI_VERSION_1);
  try_version(jvm, JVMPI_VERSION_1_1);
  try_version(jvm, JVMPI_VERSION_1_2);
  try_version(jvm, (jint)0x10000077); /* no such JVMPI version */

  if ((*jvm)->GetEnv(jvm, (void**)&jvmpi, JVMPI_VERSION_1) != JNI_OK) {
    tl_log("NO_JVMPI");
    return JNI_ERR;
  }
  tl_log("TABLE\tptr=0x%llx\tversion=0x%x", PTR(jvmpi), (unsigned)jvmpi->version);

  /* Enabled before NotifyEvent is stored, as OProfile's agent does. */
  jint events[] = {JVMPI_EVENT_JVM_INIT_DONE, JVMPI_EVENT_JVM_SHUT_DOWN, JVMPI_EVENT_THREAD_START,
                   JVMPI_EVENT_THREAD_END, JVMPI_EVENT_CLASS_LOAD};
  for (size_t i = 0; i < sizeof events / sizeof events[0]; i++) {
    tl_log("ENABLE\tevent=%d\trc=%d", (int)events[i], (int)jvmpi->EnableEvent(events[i], NULL));
  }

  /* Only safe after JVM_INIT_DONE: the runtime refuses it during JVM_OnLoad. */
  tl_log("EARLY_CREATE\trc=%d",
         (int)jvmpi->CreateSystemThread("jvmpitest-too-early", JVMPI_NORMAL_PRIORITY, too_early));

  if (strcmp(mode, "fail") == 0) {
    tl_log("ONLOAD_FAIL");
    in_onload = 0;
    return JNI_ERR;
  }
  if (strcmp(mode, "nonotify") != 0) jvmpi->NotifyEvent = notify_event;
  tl_log("ONLOAD_RETURN");
  in_onload = 0;
  return JNI_OK;
}
