// SPDX-License-Identifier: Apache-2.0
/*
 * CLASS_LOAD_HOOK. Classes whose bytes contain "JVMPITEST_ORIGINAL" get a copy (allocated with the
 * event's malloc_f) with that text replaced by "JVMPITEST_REPLACED" (same length, so the class
 * file stays well-formed). Classes containing "JVMPITEST_UNTOUCHED" get new_class_data set to
 * class_data explicitly; all others are left as delivered.
 */
#include <string.h>

#include "agent_common.h"

static JVMPI_Interface* jvmpi;
static long hooks, bad_events;

static unsigned char* find(unsigned char* data, jint len, const char* text) {
  size_t n = strlen(text);
  for (jint i = 0; i + (jint)n <= len; i++) {
    if (memcmp(data + i, text, n) == 0) return data + i;
  }
  return NULL;
}

static void class_load_hook(JVMPI_Event* ev) {
  unsigned char* data = ev->u.class_load_hook.class_data;
  jint len = ev->u.class_load_hook.class_data_len;
  hooks++;
  if (data == NULL || len < 10 || ev->u.class_load_hook.malloc_f == NULL ||
      memcmp(data, "\xca\xfe\xba\xbe", 4) != 0) {
    if (bad_events++ < 5) {
      tl_log("BAD_HOOK\tdata=0x%llx\tlen=%d\tmalloc_f=0x%llx", PTR(data), (int)len,
             PTR(ev->u.class_load_hook.malloc_f));
    }
    return;
  }
  unsigned char* hit = find(data, len, "JVMPITEST_ORIGINAL");
  if (hit != NULL) {
    unsigned char* copy = ev->u.class_load_hook.malloc_f((unsigned)len);
    if (copy == NULL) {
      tl_log("MALLOC_F_FAILED");
      return;
    }
    memcpy(copy, data, (size_t)len);
    memcpy(copy + (hit - data), "JVMPITEST_REPLACED", 18);
    ev->u.class_load_hook.new_class_data = copy;
    ev->u.class_load_hook.new_class_data_len = len;
    tl_log("PATCHED\tlen=%d\tenv=0x%llx", (int)len, PTR(ev->env_id));
  } else if (find(data, len, "JVMPITEST_UNTOUCHED") != NULL) {
    ev->u.class_load_hook.new_class_data = data;
    ev->u.class_load_hook.new_class_data_len = len;
    tl_log("UNTOUCHED\tlen=%d", (int)len);
  }
}

static void notify_event(JVMPI_Event* ev) {
  switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD_HOOK:
      class_load_hook(ev);
      break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
      tl_log("SHUT_DOWN\thooks=%ld\tbad=%ld", hooks, bad_events);
      break;
    default:
      break;
  }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* jvm, char* options, void* reserved) {
  (void)reserved;
  if (!tl_open(options)) return JNI_ERR;
  if ((*jvm)->GetEnv(jvm, (void**)&jvmpi, JVMPI_VERSION_1) != JNI_OK) return JNI_ERR;
  jvmpi->NotifyEvent = notify_event;
  tl_log("ENABLE\trc=%d", (int)jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD_HOOK, NULL));
  jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
  return JNI_OK;
}
