// SPDX-License-Identifier: Apache-2.0
/*
 * The least any JVMTI-based level-2 heap dump with object IDs must do, as a plain JVMTI agent (no
 * JVMPI runtime): the walk the runtime's dump uses (FollowReferences with reference, primitive
 * field and primitive array callbacks), reading each object's tag and its referrer's, and writing
 * about the dump's byte volume (a record header per object, 8 bytes per reference, the values of
 * primitive fields and arrays) through a 4 MiB buffer to /dev/null.
 *
 * The heap it measures is already tagged, as HPROF's is (HPROF tags every object when allocated):
 * a first walk tags every reachable object (timed apart, "tag_ms"), the second is the floor
 * ("walk_ms"); a last untimed pass takes the tags off again, so the JVM is as before for the
 * dumps measured after it (a second tag map would slow their GCs).
 *
 * Trigger: option "trigger=<path>": an agent thread polls for that file every 20 ms, deletes it
 * and dumps (a SIGQUIT cannot be shared with HPROF in the same JVM). Prints to stderr:
 * "JVMTI_FLOOR tag_ms=<n> walk_ms=<n> cpu_ms=<n> objects=<n> refs=<n> bytes=<n>" (cpu_ms: the
 * process's CPU time during the floor walk).
 *
 * With ",file=<path>" after the trigger, a third walk (still on the tagged heap) writes the same
 * bytes to that file instead of /dev/null, as a real dump must (the kernel's copy into the page
 * cache); the file is removed afterwards. The line then also holds "file_walk_ms=<n>
 * file_cpu_ms=<n>".
 */
#include <fcntl.h>
#include <jvmti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { kBufferBytes = 4 << 20 };

static jvmtiEnv* jvmti;
static char trigger[4096];
static char file[4096];  // "": no walk to a file

struct Walk {
  int tagging;  // first walk: give every object a tag
  jlong next_tag;
  jlong current;  // the referrer whose record is being written
  long objects, refs;
  long long bytes;
  int out;  // /dev/null or the file
  char* buffer;
  size_t used;
};

static void emit(struct Walk* w, const void* p, size_t n) {
  w->bytes += (long long)n;
  while (n > 0) {
    size_t room = kBufferBytes - w->used;
    size_t take = n < room ? n : room;
    memcpy(w->buffer + w->used, p, take);
    w->used += take;
    p = (const char*)p + take;
    n -= take;
    if (w->used == kBufferBytes) {
      if (write(w->out, w->buffer, w->used) < 0) perror("dump_floor: write");
      w->used = 0;
    }
  }
}

static jlong tag_of(struct Walk* w, jlong* tag_ptr) {
  if (*tag_ptr == 0) *tag_ptr = ++w->next_tag;
  return *tag_ptr;
}

// A record header (kind, id, class id, length) when the walk moves on to the next referrer.
static void referrer(struct Walk* w, jlong tag, jlong class_tag) {
  if (tag == w->current) return;
  w->current = tag;
  ++w->objects;
  struct {
    char kind;
    jlong id, class_id;
    jint length;
  } __attribute__((packed)) header = {0x21, tag, class_tag, 0};
  emit(w, &header, sizeof header);
}

static jint JNICALL on_reference(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo* info,
                                 jlong class_tag, jlong referrer_class_tag, jlong size,
                                 jlong* tag_ptr, jlong* referrer_tag_ptr, jint length, void* arg) {
  (void)kind, (void)info, (void)class_tag, (void)size, (void)length;
  struct Walk* w = arg;
  const jlong tag = tag_of(w, tag_ptr);
  if (w->tagging) return JVMTI_VISIT_OBJECTS;
  ++w->refs;
  if (referrer_tag_ptr != NULL) referrer(w, tag_of(w, referrer_tag_ptr), referrer_class_tag);
  emit(w, &tag, sizeof tag);
  return JVMTI_VISIT_OBJECTS;
}

static jint JNICALL on_primitive_field(jvmtiHeapReferenceKind kind,
                                       const jvmtiHeapReferenceInfo* info, jlong class_tag,
                                       jlong* tag_ptr, jvalue value, jvmtiPrimitiveType type,
                                       void* arg) {
  (void)kind, (void)info, (void)type;
  struct Walk* w = arg;
  const jlong tag = tag_of(w, tag_ptr);
  if (w->tagging) return 0;
  referrer(w, tag, class_tag);
  emit(w, &value, sizeof value);
  return 0;
}

static jint JNICALL on_primitive_array(jlong class_tag, jlong size, jlong* tag_ptr, jint count,
                                       jvmtiPrimitiveType type, const void* elements, void* arg) {
  (void)size;
  struct Walk* w = arg;
  const jlong tag = tag_of(w, tag_ptr);
  if (w->tagging) return 0;
  referrer(w, tag, class_tag);
  size_t element = type == JVMTI_PRIMITIVE_TYPE_LONG || type == JVMTI_PRIMITIVE_TYPE_DOUBLE  ? 8
                   : type == JVMTI_PRIMITIVE_TYPE_INT || type == JVMTI_PRIMITIVE_TYPE_FLOAT  ? 4
                   : type == JVMTI_PRIMITIVE_TYPE_CHAR || type == JVMTI_PRIMITIVE_TYPE_SHORT ? 2
                                                                                             : 1;
  emit(w, elements, element * (size_t)count);
  return 0;
}

static jint JNICALL untag(jlong class_tag, jlong size, jlong* tag_ptr, jint length, void* arg) {
  (void)class_tag, (void)size, (void)length, (void)arg;
  *tag_ptr = 0;
  return JVMTI_VISIT_OBJECTS;
}

static double ms_of(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void dump(void) {
  struct Walk w;
  memset(&w, 0, sizeof w);
  w.out = open("/dev/null", O_WRONLY);
  w.buffer = malloc(kBufferBytes);
  if (w.out < 0 || w.buffer == NULL) {
    fprintf(stderr, "dump_floor: no /dev/null or buffer\n");
    return;
  }
  jvmtiHeapCallbacks cb;
  memset(&cb, 0, sizeof cb);
  cb.heap_reference_callback = on_reference;
  cb.primitive_field_callback = on_primitive_field;
  cb.array_primitive_value_callback = on_primitive_array;
  double start = ms_of(CLOCK_MONOTONIC);
  w.tagging = 1;
  (*jvmti)->FollowReferences(jvmti, 0, NULL, NULL, &cb, &w);
  const double tag_ms = ms_of(CLOCK_MONOTONIC) - start;
  w.tagging = 0;
  start = ms_of(CLOCK_MONOTONIC);
  const double cpu_start = ms_of(CLOCK_PROCESS_CPUTIME_ID);
  (*jvmti)->FollowReferences(jvmti, 0, NULL, NULL, &cb, &w);
  if (w.used > 0 && write(w.out, w.buffer, w.used) < 0) perror("dump_floor: write");
  w.used = 0;
  const double walk_ms = ms_of(CLOCK_MONOTONIC) - start;
  const double cpu_ms = ms_of(CLOCK_PROCESS_CPUTIME_ID) - cpu_start;
  char file_times[128] = "";
  if (file[0] != '\0') {
    const long objects = w.objects, refs = w.refs;
    const long long bytes = w.bytes;
    const int file_out = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (file_out < 0) {
      perror("dump_floor: file");
    } else {
      const int null_out = w.out;
      w.out = file_out;
      w.current = 0;
      start = ms_of(CLOCK_MONOTONIC);
      const double file_cpu_start = ms_of(CLOCK_PROCESS_CPUTIME_ID);
      (*jvmti)->FollowReferences(jvmti, 0, NULL, NULL, &cb, &w);
      if (w.used > 0 && write(w.out, w.buffer, w.used) < 0) perror("dump_floor: write");
      close(file_out);  // as a dump's writer does; the bytes stay in the page cache
      snprintf(file_times, sizeof file_times, " file_walk_ms=%.0f file_cpu_ms=%.0f",
               ms_of(CLOCK_MONOTONIC) - start, ms_of(CLOCK_PROCESS_CPUTIME_ID) - file_cpu_start);
      unlink(file);
      w.out = null_out;
      w.objects = objects, w.refs = refs, w.bytes = bytes;  // the line reports one walk
    }
  }
  jvmtiHeapCallbacks clear;
  memset(&clear, 0, sizeof clear);
  clear.heap_iteration_callback = untag;
  (*jvmti)->IterateThroughHeap(jvmti, JVMTI_HEAP_FILTER_UNTAGGED, NULL, &clear, NULL);
  close(w.out);
  free(w.buffer);
  fprintf(stderr,
          "JVMTI_FLOOR tag_ms=%.0f walk_ms=%.0f cpu_ms=%.0f objects=%ld refs=%ld bytes=%lld%s\n",
          tag_ms, walk_ms, cpu_ms, w.objects, w.refs, w.bytes, file_times);
}

static void JNICALL poll_trigger(jvmtiEnv* env, JNIEnv* jni, void* arg) {
  (void)env, (void)jni, (void)arg;
  const struct timespec pause = {0, 20 * 1000 * 1000};
  for (;;) {
    if (access(trigger, F_OK) == 0) {
      unlink(trigger);
      dump();
    }
    nanosleep(&pause, NULL);
  }
}

static void JNICALL on_init(jvmtiEnv* env, JNIEnv* jni, jthread thread) {
  (void)thread;
  jclass thread_class = (*jni)->FindClass(jni, "java/lang/Thread");
  jmethodID init = (*jni)->GetMethodID(jni, thread_class, "<init>", "(Ljava/lang/String;)V");
  jstring name = (*jni)->NewStringUTF(jni, "dump floor trigger");
  jthread poller = (*jni)->NewObject(jni, thread_class, init, name);
  if (poller == NULL || (*env)->RunAgentThread(env, poller, poll_trigger, NULL,
                                               JVMTI_THREAD_NORM_PRIORITY) != JVMTI_ERROR_NONE) {
    fprintf(stderr, "dump_floor: no trigger thread\n");
  }
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM* vm, char* options, void* reserved) {
  (void)reserved;
  const char* file_option = options != NULL ? strstr(options, ",file=") : NULL;
  const size_t trigger_length = options == NULL       ? 0
                                : file_option != NULL ? (size_t)(file_option - options) - 8
                                                      : strlen(options + 8);
  if (options == NULL || strncmp(options, "trigger=", 8) != 0 || trigger_length == 0 ||
      trigger_length >= sizeof trigger ||
      (file_option != NULL && (file_option[6] == '\0' || strlen(file_option + 6) >= sizeof file))) {
    fprintf(
        stderr,
        "dump_floor: usage: -agentpath:libjvmpibench_dump_floor.so=trigger=<path>[,file=<path>]\n");
    return JNI_ERR;
  }
  memcpy(trigger, options + 8, trigger_length);
  trigger[trigger_length] = '\0';
  if (file_option != NULL) strcpy(file, file_option + 6);
  if ((*vm)->GetEnv(vm, (void**)&jvmti, JVMTI_VERSION_11) != JNI_OK) return JNI_ERR;
  jvmtiCapabilities caps;
  memset(&caps, 0, sizeof caps);
  caps.can_tag_objects = 1;
  if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) return JNI_ERR;
  jvmtiEventCallbacks cb;
  memset(&cb, 0, sizeof cb);
  cb.VMInit = on_init;
  (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb);
  (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL);
  return JNI_OK;
}
