// SPDX-License-Identifier: Apache-2.0
/*
 * Resolve agent: asks the runtime about objects by the IDs it handed out, the way agents of the
 * HPROF lineage do, at points the Java program chooses (natives of jvmpiheap.ResolveAgent, below):
 * before and after collections that move objects, for IDs from an OBJECT_ALLOC event and from
 * jobject2jobjectID. For each ID it sends RequestEvent(OBJECT_ALLOC) and RequestEvent(OBJECT_DUMP)
 * and answers what came back: the class (named through CLASS_LOAD), the size, the kind, and which
 * object and class the dump record names.
 */
#include <jni.h>
#include <stdio.h>
#include <string.h>

#include "heap_agent.h"

static JVMPI_Interface* jvmpi;

/* The calling thread's last OBJECT_ALLOC (not requested), and the requested answers. */
static __thread jobjectID last_alloc_id;
static __thread jint last_alloc_size;
static __thread int alloc_answered, dump_answered;
static __thread JVMPI_Event alloc_answer;
static __thread unsigned char dump_type;
static __thread jobjectID dump_object, dump_class;

static jobjectID read_id(const char* p) {
  jobjectID id;
  memcpy(&id, p, sizeof id);
  return id;
}

static void on_object_dump(const JVMPI_Event* ev) {
  const char* data = ev->u.object_dump.data;
  const jint len = ev->u.object_dump.data_len;
  dump_answered = 1;
  if (data == NULL || len < 1 + (jint)sizeof(jobjectID)) return;
  dump_type = (unsigned char)data[0];
  dump_object = read_id(data + 1);
  dump_class = NULL;
  const char* after_id = data + 1 + sizeof(jobjectID);
  if (dump_type == JVMPI_GC_INSTANCE_DUMP && len >= 1 + 2 * (jint)sizeof(jobjectID)) {
    dump_class = read_id(after_id);
  } else if (dump_type == JVMPI_GC_OBJ_ARRAY_DUMP && len >= 5 + 2 * (jint)sizeof(jobjectID)) {
    dump_class = read_id(after_id + 4); /* after the element count: the element class */
  }
}

static void notify(JVMPI_Event* ev) {
  const int requested = (ev->event_type & JVMPI_REQUESTED_EVENT) != 0;
  switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
      tables_add_class(ev);
      break;
    case JVMPI_EVENT_OBJECT_ALLOC:
      if (requested) {
        alloc_answer = *ev;
        alloc_answered = 1;
      } else {
        last_alloc_id = ev->u.obj_alloc.obj_id;
        last_alloc_size = ev->u.obj_alloc.size;
      }
      break;
    case JVMPI_EVENT_OBJECT_DUMP:
      if (requested) on_object_dump(ev);
      break;
    default:
      break;
  }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* vm, char* options, void* reserved) {
  (void)options;
  (void)reserved;
  jvmpi = get_jvmpi(vm);
  if (jvmpi == NULL) return JNI_ERR;
  tables_init();
  jvmpi->NotifyEvent = notify;
  jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL);
  return JNI_OK;
}

/* ---- natives of jvmpiheap.ResolveAgent ---- */

JNIEXPORT jlong JNICALL Java_jvmpiheap_ResolveAgent_lastAllocId(JNIEnv* env, jclass cls) {
  (void)env;
  (void)cls;
  return (jlong)(uintptr_t)last_alloc_id;
}

JNIEXPORT jint JNICALL Java_jvmpiheap_ResolveAgent_lastAllocSize(JNIEnv* env, jclass cls) {
  (void)env;
  (void)cls;
  return last_alloc_size;
}

JNIEXPORT jlong JNICALL Java_jvmpiheap_ResolveAgent_idOf(JNIEnv* env, jclass cls, jobject o) {
  (void)env;
  (void)cls;
  jvmpi->DisableGC();
  const jobjectID id = jvmpi->jobject2jobjectID(o);
  jvmpi->EnableGC();
  return (jlong)(uintptr_t)id;
}

static const char* class_name(jobjectID id) {
  if (id == NULL) return "-";
  const char* name = tables_class_name(id);
  return name != NULL ? name : "?";
}

/* "rc_alloc=<rc> class=<name> size=<n> kind=<is_array> rc_dump=<rc> dump_type=<t>
 *  dump_id_ok=<0|1> dump_class=<name>", space-separated. */
JNIEXPORT jstring JNICALL Java_jvmpiheap_ResolveAgent_request(JNIEnv* env, jclass cls, jlong id) {
  (void)cls;
  const jobjectID object = (jobjectID)(uintptr_t)id;
  alloc_answered = 0;
  dump_answered = 0;
  dump_type = 0;
  dump_object = NULL;
  dump_class = NULL;
  jvmpi->DisableGC();
  const jint rc_alloc = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, object);
  const jint rc_dump = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_DUMP, object);
  jvmpi->EnableGC();
  char text[1024];
  snprintf(text, sizeof text,
           "rc_alloc=%d class=%s size=%d kind=%d rc_dump=%d dump_type=%d dump_id_ok=%d "
           "dump_class=%s",
           rc_alloc == JVMPI_SUCCESS && !alloc_answered ? -100 : rc_alloc,
           alloc_answered ? class_name(alloc_answer.u.obj_alloc.class_id) : "-",
           alloc_answered ? alloc_answer.u.obj_alloc.size : -1,
           alloc_answered ? alloc_answer.u.obj_alloc.is_array : -1,
           rc_dump == JVMPI_SUCCESS && !dump_answered ? -100 : rc_dump, dump_type,
           dump_object == object && object != NULL, class_name(dump_class));
  return (*env)->NewStringUTF(env, text);
}
