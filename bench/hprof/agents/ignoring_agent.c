// SPDX-License-Identifier: Apache-2.0
/*
 * A JVMPI agent that enables the events HPROF's cpu=samples mode enables and ignores them: run on
 * libjvmpi.so it measures what the runtime alone costs (JVMTI set-up, thread and class bookkeeping,
 * building every CLASS_LOAD event), apart from HPROF's tables and its sampling.
 */
#include <jvmpi.h>

static void notify(JVMPI_Event* ev) {
  (void)ev;
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* vm, char* options, void* reserved) {
  (void)options, (void)reserved;
  void* p = NULL;
  if ((*vm)->GetEnv(vm, &p, JVMPI_VERSION_1) != JNI_OK) return JNI_ERR;
  JVMPI_Interface* jvmpi = (JVMPI_Interface*)p;
  jvmpi->NotifyEvent = notify;
  /* The set src/hprof/agent.cpp enables for cpu=samples. */
  static const jint events[] = {JVMPI_EVENT_THREAD_START,      JVMPI_EVENT_THREAD_END,
                                JVMPI_EVENT_CLASS_LOAD,        JVMPI_EVENT_CLASS_UNLOAD,
                                JVMPI_EVENT_JVM_INIT_DONE,     JVMPI_EVENT_JVM_SHUT_DOWN,
                                JVMPI_EVENT_DATA_DUMP_REQUEST, JVMPI_EVENT_DATA_RESET_REQUEST};
  for (unsigned i = 0; i < sizeof events / sizeof events[0]; ++i) {
    if (jvmpi->EnableEvent(events[i], NULL) != JVMPI_SUCCESS) return JNI_ERR;
  }
  return JNI_OK;
}
