// SPDX-License-Identifier: Apache-2.0
/*
 * GC_START/GC_FINISH: logs each with gc_info. Hook 1 returns the number of GC_FINISH events so
 * far; hook 2 forces a collection with RunGC.
 */
#include "agent_common.h"

static JVMPI_Interface* jvmpi;
static volatile long finishes;

static void notify_event(JVMPI_Event* ev) {
  switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_GC_START:
      tl_log("GC_START\tenv=0x%llx", PTR(ev->env_id));
      break;
    case JVMPI_EVENT_GC_FINISH:
      tl_log("GC_FINISH\tused_objects=%lld\tused_space=%lld\ttotal_space=%lld",
             (long long)ev->u.gc_info.used_objects, (long long)ev->u.gc_info.used_object_space,
             (long long)ev->u.gc_info.total_object_space);
      finishes++;
      break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
      tl_log("SHUT_DOWN");
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
  if (code == 1) return finishes;
  if (code == 2) {
    jvmpi->RunGC();
    return 0;
  }
  return -1;
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* jvm, char* options, void* reserved) {
  (void)reserved;
  if (!tl_open(options)) return JNI_ERR;
  if ((*jvm)->GetEnv(jvm, (void**)&jvmpi, JVMPI_VERSION_1) != JNI_OK) return JNI_ERR;
  jvmpi->NotifyEvent = notify_event;
  jvmpi->EnableEvent(JVMPI_EVENT_GC_START, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_GC_FINISH, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
  return JNI_OK;
}
