// SPDX-License-Identifier: Apache-2.0
/*
 * Resolves every ID at the moment it is handed over, as HPROF-lineage agents do: inside each
 * CLASS_LOAD (the VM-init batch included) it calls jobjectID2jobject(class_id) and requests the
 * class object's OBJECT_ALLOC; from each requested OBJECT_ALLOC it requests the OBJECT_ALLOC of
 * that object's class, and so on up the chain (java.lang.Class's own class object must end it
 * with a NULL class_id). Bad IDs (NULL, never issued) must answer JVMPI_FAIL.
 *
 * Log: CLASS_LOAD_SEEN (counts before/after JVM_INIT_DONE, failures), SELF_CLASS (an object
 * reported as its own class), CHAIN_TOO_DEEP, BAD_ID results, and SUMMARY at JVM_SHUT_DOWN.
 */
#include <stdio.h>
#include <string.h>

#include "agent_common.h"

static JVMPI_Interface* jvmpi;
static int init_done;
static long loads_batch, loads_later;
static long unresolved_batch, unresolved_later;
static long request_failed_batch, request_failed_later;
static long requested_allocs, self_class, chain_too_deep, null_class_of_class;
static int chain_depth;
static char first_failure[256];

static void chase_class_of(jobjectID class_id) {
  if (class_id == NULL) return;
  if (chain_depth >= 32) {
    if (chain_too_deep++ == 0) tl_log("CHAIN_TOO_DEEP\tclass_id=0x%llx", PTR(class_id));
    return;
  }
  chain_depth++;
  jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, class_id);
  chain_depth--;
}

static void on_class_load(JVMPI_Event* ev) {
  const int batch = !init_done;
  if (ev->event_type & JVMPI_REQUESTED_EVENT) return;
  if (batch)
    loads_batch++;
  else
    loads_later++;
  jobject object = jvmpi->jobjectID2jobject(ev->u.class_load.class_id);
  if (object == NULL) {
    if (batch)
      unresolved_batch++;
    else
      unresolved_later++;
    if (first_failure[0] == 0)
      snprintf(first_failure, sizeof first_failure, "jobjectID2jobject %s",
               ev->u.class_load.class_name);
  }
  chain_depth = 0;
  if (jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, ev->u.class_load.class_id) != JVMPI_SUCCESS) {
    if (batch)
      request_failed_batch++;
    else
      request_failed_later++;
    if (first_failure[0] == 0)
      snprintf(first_failure, sizeof first_failure, "RequestEvent %s", ev->u.class_load.class_name);
  }
}

static void on_object_alloc(JVMPI_Event* ev) {
  if (!(ev->event_type & JVMPI_REQUESTED_EVENT)) return;
  requested_allocs++;
  if (ev->u.obj_alloc.class_id != NULL && ev->u.obj_alloc.class_id == ev->u.obj_alloc.obj_id) {
    if (self_class++ == 0) tl_log("SELF_CLASS\tobj=0x%llx", PTR(ev->u.obj_alloc.obj_id));
    return; /* an agent without this guard would recurse here until its stack overflows */
  }
  if (ev->u.obj_alloc.class_id == NULL && ev->u.obj_alloc.is_array == JVMPI_NORMAL_OBJECT)
    null_class_of_class++;
  chase_class_of(ev->u.obj_alloc.class_id);
}

static void bad_ids(const char* when) {
  /* Never issued (IDs are multiples of 8 from the runtime), and NULL. */
  jobjectID never = (jobjectID)(uintptr_t)0x7ffffff8;
  tl_log(
      "BAD_ID\twhen=%s\talloc_null=%d\talloc_never=%d\tclass_never=%d\tdump_never=%d\t"
      "resolve_never=0x%llx",
      when, (int)jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL),
      (int)jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, never),
      (int)jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, never),
      (int)jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_DUMP, never),
      PTR(jvmpi->jobjectID2jobject(never)));
}

/* IDs of objects that are no classes, or no class an agent is told about: CLASS_LOAD must fail. */
static void not_classes(JNIEnv* env) {
  jobject text = (*env)->NewStringUTF(env, "not a class");
  jclass integer = (*env)->FindClass(env, "java/lang/Integer");
  jfieldID type =
      integer ? (*env)->GetStaticFieldID(env, integer, "TYPE", "Ljava/lang/Class;") : NULL;
  jobject int_class = type ? (*env)->GetStaticObjectField(env, integer, type) : NULL;
  jobjectID text_id = jvmpi->jobject2jobjectID(text);
  jobjectID int_id = jvmpi->jobject2jobjectID(int_class);
  tl_log("NOT_CLASS\tstring_id=0x%llx\tint_id=0x%llx\tstring_rc=%d\tint_rc=%d", PTR(text_id),
         PTR(int_id), (int)jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, text_id),
         (int)jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, int_id));
}

static void notify_event(JVMPI_Event* ev) {
  switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
      on_class_load(ev);
      break;
    case JVMPI_EVENT_OBJECT_ALLOC:
      on_object_alloc(ev);
      break;
    case JVMPI_EVENT_JVM_INIT_DONE:
      init_done = 1;
      bad_ids("init_done");
      not_classes(ev->env_id);
      break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
      bad_ids("shut_down");
      tl_log(
          "SUMMARY\tloads_batch=%ld\tloads_later=%ld\tunresolved_batch=%ld\tunresolved_later=%ld"
          "\trequest_failed_batch=%ld\trequest_failed_later=%ld\trequested_allocs=%ld"
          "\tself_class=%ld\tchain_too_deep=%ld\tnull_class_of_class=%ld\tfirst_failure=%s",
          loads_batch, loads_later, unresolved_batch, unresolved_later, request_failed_batch,
          request_failed_later, requested_allocs, self_class, chain_too_deep, null_class_of_class,
          first_failure[0] ? first_failure : "none");
      break;
    default:
      break;
  }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* vm, char* options, void* reserved) {
  (void)reserved;
  if (!tl_open(options)) return JNI_ERR;
  if ((*vm)->GetEnv(vm, (void**)&jvmpi, JVMPI_VERSION_1) != JNI_OK) return JNI_ERR;
  jvmpi->NotifyEvent = notify_event;
  jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
  bad_ids("on_load");
  return JNI_OK;
}
