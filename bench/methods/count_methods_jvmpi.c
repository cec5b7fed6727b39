// SPDX-License-Identifier: Apache-2.0
/* Benchmark agent: counts METHOD_ENTRY and METHOD_EXIT through JVMPI. */
#include <jvmpi.h>
#include <stdio.h>

static JVMPI_Interface* jvmpi;
static volatile long entries, exits;

static void notify(JVMPI_Event* e) {
  switch (e->event_type) {
    case JVMPI_EVENT_METHOD_ENTRY: __atomic_fetch_add(&entries, 1, __ATOMIC_RELAXED); break;
    case JVMPI_EVENT_METHOD_EXIT: __atomic_fetch_add(&exits, 1, __ATOMIC_RELAXED); break;
    case JVMPI_EVENT_JVM_SHUT_DOWN: fprintf(stderr, "jvmpi entries %ld exits %ld\n", entries, exits); break;
    default: break;
  }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* vm, char* options, void* reserved) {
  (void)options;
  (void)reserved;
  if ((*vm)->GetEnv(vm, (void**)&jvmpi, JVMPI_VERSION_1) != JNI_OK) return JNI_ERR;
  jvmpi->NotifyEvent = notify;
  jvmpi->EnableEvent(JVMPI_EVENT_METHOD_ENTRY, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_METHOD_EXIT, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
  return JNI_OK;
}
