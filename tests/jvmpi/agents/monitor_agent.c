// SPDX-License-Identifier: Apache-2.0
/*
 * Java monitor events: MONITOR_CONTENDED_ENTER/ENTERED and MONITOR_WAIT/WAITED (Object.wait and
 * Thread.sleep), logged with the thread's name. At the first contended enter of the thread
 * "jvmpitest-contender" the handler asks for the monitor object's defining event with
 * RequestEvent(OBJECT_ALLOC, object), as profilers did for unknown object IDs.
 * Hook 1 logs jobject2jobjectID of the object passed (arg labels it), and whether
 * jobjectID2jobject maps the ID back to the same object.
 */
#include <pthread.h>
#include <string.h>

#include "agent_common.h"

static JVMPI_Interface* jvmpi;
static int requested_alloc;
static pthread_t request_thread;
static volatile int request_active;

static void monitor_event(JVMPI_Event* ev, const char* kind, jobjectID object, long long timeout) {
  char thread[128];
  threads_name(ev->env_id, thread, sizeof thread);
  tl_log("MON\tkind=%s\tthread=%s\tobj=0x%llx\ttimeout=%lld", kind, thread, PTR(object), timeout);
  if (strcmp(kind, "ENTER") == 0 && strcmp(thread, "jvmpitest-contender") == 0 &&
      !requested_alloc) {
    requested_alloc = 1;
    request_thread = pthread_self();
    request_active = 1;
    jint rc = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, object);
    request_active = 0;
    tl_log("REQUEST_ALLOC\trc=%d\tobj=0x%llx", (int)rc, PTR(object));
  }
}

static void notify_event(JVMPI_Event* ev) {
  switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_THREAD_START:
      threads_add(ev->u.thread_start.thread_env_id, ev->u.thread_start.thread_name);
      break;
    case JVMPI_EVENT_THREAD_END:
      threads_remove(ev->env_id);
      break;
    case JVMPI_EVENT_CLASS_LOAD:
      if (strncmp(ev->u.class_load.class_name, "jvmpitest.", 10) == 0) {
        tl_log("CL\tname=%s\tid=0x%llx", ev->u.class_load.class_name,
               PTR(ev->u.class_load.class_id));
      }
      break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER:
      monitor_event(ev, "ENTER", ev->u.monitor.object, 0);
      break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
      monitor_event(ev, "ENTERED", ev->u.monitor.object, 0);
      break;
    case JVMPI_EVENT_MONITOR_WAIT:
      monitor_event(ev, "WAIT", ev->u.monitor_wait.object, ev->u.monitor_wait.timeout);
      break;
    case JVMPI_EVENT_MONITOR_WAITED:
      monitor_event(ev, "WAITED", ev->u.monitor_wait.object, ev->u.monitor_wait.timeout);
      break;
    case JVMPI_EVENT_OBJECT_ALLOC:
      tl_log(
          "OA\trequested=%d\tsame_thread=%d\tarena=%d\tclass_id=0x%llx\tis_array=%d\tsize=%d\t"
          "obj=0x%llx",
          (ev->event_type & JVMPI_REQUESTED_EVENT) != 0,
          request_active && pthread_equal(request_thread, pthread_self()),
          (int)ev->u.obj_alloc.arena_id, PTR(ev->u.obj_alloc.class_id),
          (int)ev->u.obj_alloc.is_array, (int)ev->u.obj_alloc.size, PTR(ev->u.obj_alloc.obj_id));
      break;
    default:
      break;
  }
}

JNIEXPORT jlong JNICALL Java_jvmpitest_Agent_hook(JNIEnv* env, jclass cls, jint code, jlong arg,
                                                  jobject obj) {
  (void)cls;
  if (code != 1) return -1;
  jvmpi->DisableGC();
  jobjectID id = jvmpi->jobject2jobjectID(obj);
  jobjectID again = jvmpi->jobject2jobjectID(obj);
  jobject back = jvmpi->jobjectID2jobject(id);
  jvmpi->EnableGC();
  tl_log("OBJID\twhat=%lld\tid=0x%llx\tstable=%d\troundtrip=%d", (long long)arg, PTR(id),
         id == again, back != NULL && (*env)->IsSameObject(env, back, obj));
  return 0;
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* jvm, char* options, void* reserved) {
  (void)reserved;
  if (!tl_open(options)) return JNI_ERR;
  if ((*jvm)->GetEnv(jvm, (void**)&jvmpi, JVMPI_VERSION_1_1) != JNI_OK) return JNI_ERR;
  jvmpi->NotifyEvent = notify_event;
  jint events[] = {JVMPI_EVENT_THREAD_START,
                   JVMPI_EVENT_THREAD_END,
                   JVMPI_EVENT_CLASS_LOAD,
                   JVMPI_EVENT_MONITOR_CONTENDED_ENTER,
                   JVMPI_EVENT_MONITOR_CONTENDED_ENTERED,
                   JVMPI_EVENT_MONITOR_WAIT,
                   JVMPI_EVENT_MONITOR_WAITED};
  for (size_t i = 0; i < sizeof events / sizeof events[0]; i++) {
    tl_log("ENABLE\tevent=%d\trc=%d", (int)events[i], (int)jvmpi->EnableEvent(events[i], NULL));
  }
  return JNI_OK;
}
