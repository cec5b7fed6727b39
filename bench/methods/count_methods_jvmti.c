// SPDX-License-Identifier: Apache-2.0
/* Benchmark agent: counts JVMTI's own MethodEntry and MethodExit events (the comparison). */
#include <jvmti.h>
#include <stdio.h>
#include <string.h>

static volatile long entries, exits;

static void JNICALL entry(jvmtiEnv* e, JNIEnv* j, jthread t, jmethodID m) {
  (void)e; (void)j; (void)t; (void)m;
  __atomic_fetch_add(&entries, 1, __ATOMIC_RELAXED);
}
static void JNICALL exit_(jvmtiEnv* e, JNIEnv* j, jthread t, jmethodID m, jboolean x, jvalue v) {
  (void)e; (void)j; (void)t; (void)m; (void)x; (void)v;
  __atomic_fetch_add(&exits, 1, __ATOMIC_RELAXED);
}
static void JNICALL death(jvmtiEnv* e, JNIEnv* j) {
  (void)e; (void)j;
  fprintf(stderr, "jvmti entries %ld exits %ld\n", entries, exits);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM* vm, char* options, void* reserved) {
  (void)options;
  (void)reserved;
  jvmtiEnv* jvmti = NULL;
  if ((*vm)->GetEnv(vm, (void**)&jvmti, JVMTI_VERSION_11) != JNI_OK) return JNI_ERR;
  jvmtiCapabilities caps;
  memset(&caps, 0, sizeof caps);
  caps.can_generate_method_entry_events = 1;
  caps.can_generate_method_exit_events = 1;
  (*jvmti)->AddCapabilities(jvmti, &caps);
  jvmtiEventCallbacks cb;
  memset(&cb, 0, sizeof cb);
  cb.MethodEntry = entry;
  cb.MethodExit = exit_;
  cb.VMDeath = death;
  (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb);
  (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_METHOD_ENTRY, NULL);
  (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_METHOD_EXIT, NULL);
  (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL);
  return JNI_OK;
}
