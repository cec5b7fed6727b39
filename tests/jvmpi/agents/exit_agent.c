// SPDX-License-Identifier: Apache-2.0
/* ProfilerExit: hook 1 starts a system thread that calls ProfilerExit(7). */
#include "agent_common.h"

static JVMPI_Interface* jvmpi;

static void exiter(void* arg) {
  (void)arg;
  tl_log("EXITING\tcode=7");
  jvmpi->ProfilerExit(7);
  tl_log("PROFILER_EXIT_RETURNED");
}

static void notify_event(JVMPI_Event* ev) {
  if ((ev->event_type & ~JVMPI_REQUESTED_EVENT) == JVMPI_EVENT_JVM_SHUT_DOWN) tl_log("SHUT_DOWN");
}

JNIEXPORT jlong JNICALL Java_jvmpitest_Agent_hook(JNIEnv* env, jclass cls, jint code, jlong arg,
                                                  jobject obj) {
  (void)env;
  (void)cls;
  (void)arg;
  (void)obj;
  if (code != 1) return -1;
  return jvmpi->CreateSystemThread("jvmpitest-exiter", JVMPI_NORMAL_PRIORITY, exiter);
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* jvm, char* options, void* reserved) {
  (void)reserved;
  if (!tl_open(options)) return JNI_ERR;
  if ((*jvm)->GetEnv(jvm, (void**)&jvmpi, JVMPI_VERSION_1) != JNI_OK) return JNI_ERR;
  jvmpi->NotifyEvent = notify_event;
  jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
  return JNI_OK;
}
