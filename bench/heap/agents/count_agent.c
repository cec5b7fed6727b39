// SPDX-License-Identifier: Apache-2.0
/*
 * Minimal counting agent for the allocation benchmark. Options: events=none|alloc|alloc+free.
 * Counts OBJECT_ALLOC (and OBJECT_FREE) with atomic increments and prints the totals to stderr at
 * JVM_SHUT_DOWN, as "count_agent allocs=<n> frees=<n>".
 */
#include <jvmpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static JVMPI_Interface* jvmpi;
static atomic_long allocs, frees, alloc_bytes;

static void notify(JVMPI_Event* ev) {
  switch (ev->event_type) {
    case JVMPI_EVENT_OBJECT_ALLOC:
      atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
      atomic_fetch_add_explicit(&alloc_bytes, ev->u.obj_alloc.size, memory_order_relaxed);
      break;
    case JVMPI_EVENT_OBJECT_FREE:
      atomic_fetch_add_explicit(&frees, 1, memory_order_relaxed);
      break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
      fprintf(stderr, "count_agent allocs=%ld bytes=%ld frees=%ld\n", atomic_load(&allocs),
              atomic_load(&alloc_bytes), atomic_load(&frees));
      break;
    default:
      break;
  }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* vm, char* options, void* reserved) {
  (void)reserved;
  void* p = NULL;
  if ((*vm)->GetEnv(vm, &p, JVMPI_VERSION_1) != JNI_OK) return JNI_ERR;
  jvmpi = (JVMPI_Interface*)p;
  jvmpi->NotifyEvent = notify;
  const char* events = options != NULL ? strstr(options, "events=") : NULL;
  events = events != NULL ? events + 7 : "none";
  if (strncmp(events, "none", 4) != 0) jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
  if (strncmp(events, "alloc", 5) == 0) jvmpi->EnableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL);
  if (strstr(events, "free") != NULL) jvmpi->EnableEvent(JVMPI_EVENT_OBJECT_FREE, NULL);
  return JNI_OK;
}
