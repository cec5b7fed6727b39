// SPDX-License-Identifier: Apache-2.0
/*
 * The least any exact allocation-site profiler built on JVMTI must do per allocation, as a plain
 * JVMTI agent (no JVMPI runtime): a SampledObjectAlloc event for every allocation (interval 1),
 * a tag on the object so its death is reported (ObjectFree), and the allocating stack to a fixed
 * depth. It keeps only counts. Options: "tag", "trace", "tag+trace" (default) or "none" (events
 * only). Prints "jvmti_floor allocs=<n> frees=<n>" to stderr at VM death.
 */
#include <jvmti.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

enum { kDepth = 4 };

static jvmtiEnv* jvmti;
static int want_tag = 1, want_trace = 1;
static atomic_long allocs, frees, next_tag = 1;

static void JNICALL on_alloc(jvmtiEnv* env, JNIEnv* jni, jthread thread, jobject object,
                             jclass klass, jlong size) {
  (void)jni, (void)thread, (void)klass, (void)size;
  atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
  if (want_tag) {
    (*env)->SetTag(env, object, atomic_fetch_add_explicit(&next_tag, 1, memory_order_relaxed));
  }
  if (want_trace) {
    jvmtiFrameInfo frames[kDepth];
    jint count = 0;
    (*env)->GetStackTrace(env, NULL, 0, kDepth, frames, &count);
  }
}

static void JNICALL on_free(jvmtiEnv* env, jlong tag) {
  (void)env, (void)tag;
  atomic_fetch_add_explicit(&frees, 1, memory_order_relaxed);
}

static void JNICALL on_init(jvmtiEnv* env, JNIEnv* jni, jthread thread) {
  (void)jni, (void)thread;
  (*env)->SetHeapSamplingInterval(env, 1);
}

static void JNICALL on_death(jvmtiEnv* env, JNIEnv* jni) {
  (void)env, (void)jni;
  fprintf(stderr, "jvmti_floor allocs=%ld frees=%ld\n", atomic_load(&allocs), atomic_load(&frees));
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM* vm, char* options, void* reserved) {
  (void)reserved;
  if (options != NULL && *options != '\0') {
    want_tag = strstr(options, "tag") != NULL;
    want_trace = strstr(options, "trace") != NULL;
  }
  if ((*vm)->GetEnv(vm, (void**)&jvmti, JVMTI_VERSION_11) != JNI_OK) return JNI_ERR;
  jvmtiCapabilities caps;
  memset(&caps, 0, sizeof caps);
  caps.can_generate_sampled_object_alloc_events = 1;
  caps.can_tag_objects = 1;
  caps.can_generate_object_free_events = 1;
  if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) return JNI_ERR;
  jvmtiEventCallbacks cb;
  memset(&cb, 0, sizeof cb);
  cb.SampledObjectAlloc = on_alloc;
  cb.ObjectFree = on_free;
  cb.VMInit = on_init;
  cb.VMDeath = on_death;
  (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb);
  jvmtiEvent events[] = {JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, JVMTI_EVENT_OBJECT_FREE,
                         JVMTI_EVENT_VM_INIT, JVMTI_EVENT_VM_DEATH};
  for (size_t i = 0; i < sizeof events / sizeof events[0]; ++i) {
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, events[i], NULL);
  }
  return JNI_OK;
}
