// SPDX-License-Identifier: Apache-2.0
/*
 * COMPILED_METHOD_LOAD for methods of the test package: the method (resolved through CLASS_LOAD
 * data), code address and size, and whether every entry of the line-number table lies inside the
 * compiled code and inside the method's source line range. Hook 1 returns how many loads of
 * jvmpitest.CompileProgram.hot were seen. With the option late=1 the event is enabled only by
 * hook 2, after the program has made the method hot.
 */
#include <string.h>

#include "agent_common.h"

static JVMPI_Interface* jvmpi;
static volatile long hot_loads;

static void compiled_method_load(JVMPI_Event* ev) {
  const char* name = names_method(ev->u.compiled_method_load.method_id);
  int start = 0, end = 0;
  if (name == NULL || strncmp(name, "jvmpitest.", 10) != 0) return;
  names_method_lines(ev->u.compiled_method_load.method_id, &start, &end);
  int n = ev->u.compiled_method_load.lineno_table_size;
  JVMPI_Lineno* table = ev->u.compiled_method_load.lineno_table;
  int min_line = 0, max_line = 0, lines_in_range = 1, offsets_in_code = 1;
  for (int i = 0; i < n; i++) {
    if (i == 0 || table[i].lineno < min_line) min_line = table[i].lineno;
    if (i == 0 || table[i].lineno > max_line) max_line = table[i].lineno;
    if (table[i].lineno < start || table[i].lineno > end) lines_in_range = 0;
    if (table[i].offset < 0 || table[i].offset >= ev->u.compiled_method_load.code_size) {
      offsets_in_code = 0;
    }
  }
  tl_log(
      "CML\tmethod=%s\tmid=0x%llx\tcode_addr=0x%llx\tcode_size=%d\tlines=%d\tmin_line=%d\t"
      "max_line=%d\tstart=%d\tend=%d\tlines_in_range=%d\toffsets_in_code=%d",
      name, PTR(ev->u.compiled_method_load.method_id), PTR(ev->u.compiled_method_load.code_addr),
      (int)ev->u.compiled_method_load.code_size, n, min_line, max_line, start, end, lines_in_range,
      offsets_in_code);
  if (strcmp(name, "jvmpitest.CompileProgram.hot") == 0) hot_loads++;
}

static void notify_event(JVMPI_Event* ev) {
  switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
      names_add_class(ev);
      break;
    case JVMPI_EVENT_COMPILED_METHOD_LOAD:
      compiled_method_load(ev);
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
  if (code == 1) return hot_loads;
  if (code == 2) {
    jint rc = jvmpi->EnableEvent(JVMPI_EVENT_COMPILED_METHOD_LOAD, NULL);
    tl_log("LATE_ENABLE\trc=%d\thot_loads_on_return=%ld", (int)rc, hot_loads);
    return rc;
  }
  return -1;
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* jvm, char* options, void* reserved) {
  char late[8];
  (void)reserved;
  if (!tl_open(options)) return JNI_ERR;
  if ((*jvm)->GetEnv(jvm, (void**)&jvmpi, JVMPI_VERSION_1) != JNI_OK) return JNI_ERR;
  jvmpi->NotifyEvent = notify_event;
  jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
  if (!opt_value(options, "late", late, sizeof late)) {
    tl_log("ENABLE\trc=%d", (int)jvmpi->EnableEvent(JVMPI_EVENT_COMPILED_METHOD_LOAD, NULL));
  }
  return JNI_OK;
}
