// SPDX-License-Identifier: Apache-2.0
/*
 * DATA_DUMP_REQUEST (SIGQUIT) and DATA_RESET_REQUEST (SIGUSR1, the runtime's choice). Hook 1
 * returns the number of dump requests, hook 2 the number of reset requests.
 */
#include "agent_common.h"

static JVMPI_Interface* jvmpi;
static volatile long dumps, resets;

static void notify_event(JVMPI_Event* ev) {
  switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_DATA_DUMP_REQUEST:
      tl_log("DUMP_REQUEST\tenv=0x%llx", PTR(ev->env_id));
      dumps++;
      break;
    case JVMPI_EVENT_DATA_RESET_REQUEST:
      tl_log("RESET_REQUEST\tenv=0x%llx", PTR(ev->env_id));
      resets++;
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
  return code == 1 ? dumps : code == 2 ? resets : -1;
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* jvm, char* options, void* reserved) {
  (void)reserved;
  if (!tl_open(options)) return JNI_ERR;
  if ((*jvm)->GetEnv(jvm, (void**)&jvmpi, JVMPI_VERSION_1) != JNI_OK) return JNI_ERR;
  jvmpi->NotifyEvent = notify_event;
  tl_log("ENABLE\tevent=%d\trc=%d", (int)JVMPI_EVENT_DATA_DUMP_REQUEST,
         (int)jvmpi->EnableEvent(JVMPI_EVENT_DUMP_DATA_REQUEST, NULL));
  tl_log("ENABLE\tevent=%d\trc=%d", (int)JVMPI_EVENT_DATA_RESET_REQUEST,
         (int)jvmpi->EnableEvent(JVMPI_EVENT_RESET_DATA_REQUEST, NULL));
  return JNI_OK;
}
