// SPDX-License-Identifier: Apache-2.0
/*
 * The floor under a heap dump whose object IDs are JVMTI tags: a JVMTI agent (no JVMPI) that, at
 * VMDeath, gives every live object a tag and does nothing else. A JVMPI heap dump must do at least
 * this much (its IDs are tags, so they stay the same across events) before it writes a byte.
 * Option walk= picks the JVMTI call:
 *   iterate  IterateThroughHeap, one callback per object that sets its tag: the tag map's own cost
 *            per object.
 *   follow   FollowReferences, one callback per reference that tags the referee (and the
 *            referrer, if untagged) and follows it: the reference walk a dump needs for the
 *            references it writes, plus the tagging.
 * One line on stderr: TAGFLOOR walk=<iterate|follow> ms=<wall ms of the call> objects=<tagged>
 *                     callbacks=<n>
 * Usage: -agentpath:libjvmpibench_tagfloor.so=walk=follow
 */
#include <jvmti.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static jvmtiEnv* jvmti;
static int follow;
static jlong next_tag = 8;
static long tagged;
static long callbacks;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void tag(jlong* tag_ptr) {
  if (tag_ptr != NULL && *tag_ptr == 0) {
    *tag_ptr = next_tag;
    next_tag += 8;
    tagged++;
  }
}

static jint JNICALL on_object(jlong class_tag, jlong size, jlong* tag_ptr, jint length,
                              void* user_data) {
  (void)class_tag, (void)size, (void)length, (void)user_data;
  callbacks++;
  tag(tag_ptr);
  return 0;
}

static jint JNICALL on_reference(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo* info,
                                 jlong class_tag, jlong referrer_class_tag, jlong size,
                                 jlong* tag_ptr, jlong* referrer_tag_ptr, jint length,
                                 void* user_data) {
  (void)kind, (void)info, (void)class_tag, (void)referrer_class_tag, (void)size, (void)length,
      (void)user_data;
  callbacks++;
  tag(tag_ptr);
  tag(referrer_tag_ptr);
  return JVMTI_VISIT_OBJECTS;
}

static void JNICALL on_vm_death(jvmtiEnv* env, JNIEnv* jni) {
  (void)env, (void)jni;
  jvmtiHeapCallbacks cb;
  memset(&cb, 0, sizeof cb);
  const double start = now_ms();
  jvmtiError err;
  if (follow) {
    cb.heap_reference_callback = on_reference;
    err = (*jvmti)->FollowReferences(jvmti, 0, NULL, NULL, &cb, NULL);
  } else {
    cb.heap_iteration_callback = on_object;
    err = (*jvmti)->IterateThroughHeap(jvmti, 0, NULL, &cb, NULL);
  }
  const double ms = now_ms() - start;
  if (err != JVMTI_ERROR_NONE) {
    fprintf(stderr, "TAGFLOOR error=%d\n", (int)err);
    return;
  }
  fprintf(stderr, "TAGFLOOR walk=%s ms=%.1f objects=%ld callbacks=%ld\n",
          follow ? "follow" : "iterate", ms, tagged, callbacks);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM* vm, char* options, void* reserved) {
  (void)reserved;
  if (options == NULL ||
      (strcmp(options, "walk=follow") != 0 && strcmp(options, "walk=iterate") != 0)) {
    fprintf(stderr, "tag floor agent: options must be walk=follow or walk=iterate\n");
    return JNI_ERR;
  }
  follow = strcmp(options, "walk=follow") == 0;
  if ((*vm)->GetEnv(vm, (void**)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) return JNI_ERR;
  jvmtiCapabilities caps;
  memset(&caps, 0, sizeof caps);
  caps.can_tag_objects = 1;
  if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) return JNI_ERR;
  jvmtiEventCallbacks events;
  memset(&events, 0, sizeof events);
  events.VMDeath = on_vm_death;
  if ((*jvmti)->SetEventCallbacks(jvmti, &events, sizeof events) != JVMTI_ERROR_NONE ||
      (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL) !=
          JVMTI_ERROR_NONE) {
    return JNI_ERR;
  }
  return JNI_OK;
}
