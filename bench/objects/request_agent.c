// SPDX-License-Identifier: Apache-2.0
/*
 * The cost of RequestEvent(OBJECT_ALLOC) and RequestEvent(OBJECT_DUMP) per call, as an agent of
 * the HPROF lineage pays it for every object it meets: IDs come from the OBJECT_ALLOC events of
 * benchobjects.HeldObjects$Node (a reservoir sample of `calls` of them, default 200), and at
 * JVM_SHUT_DOWN, with the whole heap still live, each is requested once of each kind. Each call is
 * timed (wall and thread CPU) and its answer checked (the Node class, the same object ID in the
 * dump record). The first Node it meets it asks for at once: the runtime keeps the objects
 * allocated after an agent's first request resolvable in O(1) (docs/jvmpi-conformance.md,
 * jobjectID2jobject); IDs of objects allocated before it cost one tag-map walk each, once. One line
 * on stderr:
 *   REQUESTS nodes=<allocated> calls=<n> alloc_us=<median wall> alloc_cpu_us=<mean CPU>
 *   dump_us=<median wall> dump_cpu_us=<mean CPU> alloc_ok=<n> dump_ok=<n>
 * Options: calls=<n>; dumps=0 (OBJECT_ALLOC only, e.g. to profile it).
 */
#include <jni.h>
#include <jvmpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static JVMPI_Interface* jvmpi;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static jobjectID node_class;
static long nodes;
static jobjectID* kept;
static int calls = 200;
static int dumps = 1;
static int kept_count;
static uint64_t random_state = 0x9E3779B97F4A7C15ull;

static __thread int answered;
static __thread jobjectID answered_class, answered_object;

static double now_us(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static double median(double* v, int n) {
  if (n == 0) return 0;
  qsort(v, (size_t)n, sizeof *v, compare_doubles);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void on_class_load(const JVMPI_Event* ev) {
  const char* name = ev->u.class_load.class_name;
  if (name == NULL) return;
  char dotted[256];
  snprintf(dotted, sizeof dotted, "%s", name);
  for (char* c = dotted; *c; c++)
    if (*c == '/') *c = '.';
  if (strcmp(dotted, "benchobjects.HeldObjects$Node") == 0) node_class = ev->u.class_load.class_id;
}

static int asked_once;

static void on_alloc(const JVMPI_Event* ev) {
  if (node_class == NULL || ev->u.obj_alloc.class_id != node_class) return;
  if (!asked_once) {
    asked_once = 1;
    jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, ev->u.obj_alloc.obj_id);
  }
  pthread_mutex_lock(&lock);
  ++nodes;
  if (kept_count < calls) {
    kept[kept_count++] = ev->u.obj_alloc.obj_id;
  } else {  // reservoir sampling: every node is kept with the same probability
    random_state = random_state * 6364136223846793005ull + 1442695040888963407ull;
    const long slot = (long)((random_state >> 33) % (uint64_t)nodes);
    if (slot < calls) kept[slot] = ev->u.obj_alloc.obj_id;
  }
  pthread_mutex_unlock(&lock);
}

static void measure(void) {
  double* alloc_wall = calloc((size_t)kept_count + 1, sizeof(double));
  double* dump_wall = calloc((size_t)kept_count + 1, sizeof(double));
  double alloc_cpu = 0, dump_cpu = 0;
  int alloc_ok = 0, dump_ok = 0;
  for (int i = 0; i < kept_count; i++) {
    answered = 0;
    double w = now_us(CLOCK_MONOTONIC), c = now_us(CLOCK_THREAD_CPUTIME_ID);
    jint rc = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, kept[i]);
    alloc_wall[i] = now_us(CLOCK_MONOTONIC) - w;
    alloc_cpu += now_us(CLOCK_THREAD_CPUTIME_ID) - c;
    if (rc == JVMPI_SUCCESS && answered && answered_class == node_class &&
        answered_object == kept[i]) {
      ++alloc_ok;
    }
    if (!dumps) continue;
    answered = 0;
    w = now_us(CLOCK_MONOTONIC);
    c = now_us(CLOCK_THREAD_CPUTIME_ID);
    rc = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_DUMP, kept[i]);
    dump_wall[i] = now_us(CLOCK_MONOTONIC) - w;
    dump_cpu += now_us(CLOCK_THREAD_CPUTIME_ID) - c;
    if (rc == JVMPI_SUCCESS && answered && answered_object == kept[i] &&
        answered_class == node_class) {
      ++dump_ok;
    }
  }
  const int n = kept_count > 0 ? kept_count : 1;
  fprintf(stderr,
          "REQUESTS nodes=%ld calls=%d alloc_us=%.1f alloc_cpu_us=%.1f dump_us=%.1f "
          "dump_cpu_us=%.1f alloc_ok=%d dump_ok=%d\n",
          nodes, kept_count, median(alloc_wall, kept_count), alloc_cpu / n,
          median(dump_wall, kept_count), dump_cpu / n, alloc_ok, dump_ok);
  free(alloc_wall);
  free(dump_wall);
}

static void notify(JVMPI_Event* ev) {
  const int requested = (ev->event_type & JVMPI_REQUESTED_EVENT) != 0;
  switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
      if (!requested) on_class_load(ev);
      break;
    case JVMPI_EVENT_OBJECT_ALLOC:
      if (requested) {
        answered = 1;
        answered_class = ev->u.obj_alloc.class_id;
        answered_object = ev->u.obj_alloc.obj_id;
      } else {
        on_alloc(ev);
      }
      break;
    case JVMPI_EVENT_OBJECT_DUMP:
      if (requested && ev->u.object_dump.data_len >= 1 + 2 * (jint)sizeof(jobjectID)) {
        answered = 1;
        memcpy(&answered_object, ev->u.object_dump.data + 1, sizeof(jobjectID));
        memcpy(&answered_class, ev->u.object_dump.data + 1 + sizeof(jobjectID), sizeof(jobjectID));
      }
      break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
      jvmpi->DisableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL);
      measure();
      break;
    default:
      break;
  }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* vm, char* options, void* reserved) {
  (void)reserved;
  if ((*vm)->GetEnv(vm, (void**)&jvmpi, JVMPI_VERSION_1) != JNI_OK) return JNI_ERR;
  const char* c = options != NULL ? strstr(options, "calls=") : NULL;
  if (c != NULL) calls = atoi(c + 6);
  if (calls < 1) calls = 1;
  if (options != NULL && strstr(options, "dumps=0") != NULL) dumps = 0;
  kept = calloc((size_t)calls, sizeof *kept);
  jvmpi->NotifyEvent = notify;
  jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
  return JNI_OK;
}
