// SPDX-License-Identifier: Apache-2.0
/*
 * CLASS_LOAD and CLASS_UNLOAD. Logs every class load briefly and the classes of the test package
 * (plus java.lang.Object and java.lang.String) in full: methods with lines and IDs, fields, and
 * whether GetMethodClass of each method answers the class's ID. RequestEvent(CLASS_LOAD) is
 * exercised at JVM_INIT_DONE (java.lang.String) and from the Java program (hook 1), noting
 * whether the requested event arrives on the requesting thread before RequestEvent returns.
 *
 * Hooks: 1 = request CLASS_LOAD of the class object passed; 2 = number of CLASS_UNLOADs seen for
 * classes of the test package; 3 = request CLASS_LOAD of the last unloaded test class.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "agent_common.h"

static JVMPI_Interface* jvmpi;
static volatile int init_done;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

#define MAX_TRACKED 256
static struct {
  char name[256];
  jobjectID id;
} tracked[MAX_TRACKED];
static int tracked_count;
static volatile long test_unloads;
static jobjectID volatile unloaded_id;

/* The RequestEvent in progress, to tell whether its event arrives synchronously. */
static pthread_t request_thread;
static volatile int request_active;
static volatile int request_delivered;

static int detailed(const char* name) {
  return strncmp(name, "jvmpitest.", 10) == 0 || strcmp(name, "java.lang.Object") == 0 ||
         strcmp(name, "java.lang.String") == 0;
}

static jobjectID tracked_id(const char* name) {
  jobjectID id = NULL;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < tracked_count; i++) {
    if (strcmp(tracked[i].name, name) == 0) id = tracked[i].id;
  }
  pthread_mutex_unlock(&lock);
  return id;
}

static void class_load(JVMPI_Event* ev) {
  int requested = (ev->event_type & JVMPI_REQUESTED_EVENT) != 0;
  const char* name = ev->u.class_load.class_name;
  int same_thread = request_active && pthread_equal(pthread_self(), request_thread);
  if (requested && same_thread) request_delivered++;
  tl_log("CL\tname=%s\tid=0x%llx\tinit_done=%d\trequested=%d", name, PTR(ev->u.class_load.class_id),
         init_done, requested);
  if (!detailed(name)) return;
  if (!requested) {
    pthread_mutex_lock(&lock);
    if (tracked_count < MAX_TRACKED) {
      snprintf(tracked[tracked_count].name, sizeof tracked[0].name, "%s", name);
      tracked[tracked_count++].id = ev->u.class_load.class_id;
    }
    pthread_mutex_unlock(&lock);
  }
  tl_log(
      "CLASS\tname=%s\tsource=%s\tinterfaces=%d\tmethods=%d\tstatics=%d\tinstances=%d\tid=0x%llx\t"
      "requested=%d\tsame_thread=%d\tduring_request=%d\tinit_done=%d",
      name, ev->u.class_load.source_name ? ev->u.class_load.source_name : "(null)",
      (int)ev->u.class_load.num_interfaces, (int)ev->u.class_load.num_methods,
      (int)ev->u.class_load.num_static_fields, (int)ev->u.class_load.num_instance_fields,
      PTR(ev->u.class_load.class_id), requested, same_thread, (int)request_active, init_done);
  for (int i = 0; i < ev->u.class_load.num_methods; i++) {
    JVMPI_Method* m = &ev->u.class_load.methods[i];
    jobjectID declaring = jvmpi->GetMethodClass(m->method_id);
    tl_log(
        "METHOD\tclass=%s\trequested=%d\tname=%s\tsig=%s\tstart=%d\tend=%d\tmid=0x%llx\tgmc_ok=%d",
        name, requested, m->method_name, m->method_signature, (int)m->start_lineno,
        (int)m->end_lineno, PTR(m->method_id), declaring == ev->u.class_load.class_id);
  }
  for (int i = 0; i < ev->u.class_load.num_static_fields; i++) {
    tl_log("FIELD\tclass=%s\trequested=%d\tkind=static\tname=%s\tsig=%s", name, requested,
           ev->u.class_load.statics[i].field_name, ev->u.class_load.statics[i].field_signature);
  }
  for (int i = 0; i < ev->u.class_load.num_instance_fields; i++) {
    tl_log("FIELD\tclass=%s\trequested=%d\tkind=instance\tname=%s\tsig=%s", name, requested,
           ev->u.class_load.instances[i].field_name, ev->u.class_load.instances[i].field_signature);
  }
}

static void class_unload(JVMPI_Event* ev) {
  const char* name = "?";
  pthread_mutex_lock(&lock);
  for (int i = 0; i < tracked_count; i++) {
    if (tracked[i].id == ev->u.class_unload.class_id) name = tracked[i].name;
  }
  pthread_mutex_unlock(&lock);
  if (strncmp(name, "jvmpitest.", 10) == 0) {
    unloaded_id = ev->u.class_unload.class_id;
    test_unloads++;
  }
  tl_log("CU\tid=0x%llx\tname=%s\tenv=0x%llx", PTR(ev->u.class_unload.class_id), name,
         PTR(ev->env_id));
}

static void request_class(const char* name, jobjectID id) {
  request_thread = pthread_self();
  request_delivered = 0;
  request_active = 1;
  jint rc = jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, id);
  request_active = 0;
  tl_log("REQUEST\tclass=%s\trc=%d\tdelivered_before_return=%d", name, (int)rc,
         (int)request_delivered);
}

static void notify_event(JVMPI_Event* ev) {
  switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
      class_load(ev);
      break;
    case JVMPI_EVENT_CLASS_UNLOAD:
      class_unload(ev);
      break;
    case JVMPI_EVENT_JVM_INIT_DONE:
      init_done = 1;
      tl_log("INIT_DONE");
      request_class("java.lang.String", tracked_id("java.lang.String"));
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
  if (code == 1) {
    char name[256] = "?";
    jvmpi->DisableGC();
    jobjectID from_jobject = jvmpi->jobject2jobjectID(obj);
    pthread_mutex_lock(&lock);
    for (int i = 0; i < tracked_count; i++) {
      if (tracked[i].id == from_jobject) memcpy(name, tracked[i].name, sizeof name);
    }
    pthread_mutex_unlock(&lock);
    tl_log("JOBJECT2ID\tid=0x%llx\tknown_as=%s", PTR(from_jobject), name);
    request_class(name, from_jobject);
    jvmpi->EnableGC();
    return 0;
  }
  if (code == 2) return test_unloads;
  if (code == 3 && unloaded_id != NULL) {
    /* The ID of an unloaded class names nothing any more. */
    request_class("unloaded", unloaded_id);
    return 0;
  }
  return -1;
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* jvm, char* options, void* reserved) {
  (void)reserved;
  if (!tl_open(options)) return JNI_ERR;
  if ((*jvm)->GetEnv(jvm, (void**)&jvmpi, JVMPI_VERSION_1_1) != JNI_OK) return JNI_ERR;
  jvmpi->NotifyEvent = notify_event;
  jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_CLASS_UNLOAD, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
  return JNI_OK;
}
