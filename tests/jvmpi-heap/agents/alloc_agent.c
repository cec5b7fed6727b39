// SPDX-License-Identifier: Apache-2.0
/*
 * Allocation agent: OBJECT_ALLOC, OBJECT_FREE, CLASS_LOAD, ARENA_NEW/DELETE, OBJECT_MOVE and (with
 * option jniref=1) the JNI global and weak global reference events.
 *
 * Every OBJECT_ALLOC is remembered by object ID (class, type, size, and the "window" label the
 * allocating thread had set through AllocAgent.begin). OBJECT_FREE marks the record freed. The Java
 * side (class jvmpiheap.AllocAgent, natives below) opens windows, waits for frees, asks which of
 * its objects were reported, and has the agent write per-window statistics:
 *
 *   stat <label> <is_array> <class name or -> <total> <freed> <min size> <max size>
 *
 * plus counters (name value) of arena and move events. The same report is written to
 * <out>/final.txt at JVM_SHUT_DOWN. JNI reference events go to <out>/jniref.txt, one line each:
 *   <kind> ref=<ref> obj=<obj id> rc=<RequestEvent(OBJECT_ALLOC) result> class=<its class>
 */
#include <jni.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "heap_agent.h"

static JVMPI_Interface* jvmpi;
static char out_dir[512];
static int track_jni_refs;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t freed_cond = PTHREAD_COND_INITIALIZER;

typedef struct {
  jobjectID class_id;
  int is_array;
  int size;
  int label;
  int freed;
} obj_record;

static ptr_map objects; /* obj id -> record index + 1 */
static obj_record* records;
static size_t record_count, record_cap;

#define MAX_LABELS 64
static char* labels[MAX_LABELS + 1]; /* 1-based */
static int label_count;
static _Thread_local int t_label;

/* Event counters (guarded by lock). */
static long seq, alloc_events, free_events, free_unknown, window_freed;
static long arena_new_count, arena_new_seq, first_alloc_seq, arena_new_id = -1;
static long alloc_bad_arena, alloc_null_id, object_move_count, arena_delete_count;
static long alloc_before_arena, gc_starts, gc_finishes, free_outside_gc;
static int in_gc;
static jint enable_move_rc = -99, enable_arena_delete_rc = -99;
static FILE* jniref_log;

/* The answer to a RequestEvent(OBJECT_ALLOC) made on this thread. */
static _Thread_local jobjectID t_requested_class;
static _Thread_local int t_requested_is_array;
static _Thread_local int t_requested_seen;

static void on_alloc(const JVMPI_Event* ev) {
  pthread_mutex_lock(&lock);
  ++seq;
  ++alloc_events;
  if (first_alloc_seq == 0) first_alloc_seq = seq;
  if (arena_new_count == 0) ++alloc_before_arena;
  if (ev->u.obj_alloc.arena_id != 1) ++alloc_bad_arena;
  if (ev->u.obj_alloc.obj_id == NULL) {
    ++alloc_null_id;
    pthread_mutex_unlock(&lock);
    return;
  }
  if (record_count == record_cap) {
    record_cap = record_cap == 0 ? 1 << 16 : record_cap * 2;
    records = realloc(records, record_cap * sizeof(obj_record));
  }
  obj_record* r = &records[record_count++];
  r->class_id = ev->u.obj_alloc.class_id;
  r->is_array = ev->u.obj_alloc.is_array;
  r->size = ev->u.obj_alloc.size;
  r->label = t_label;
  r->freed = 0;
  /* An ID reported twice (a bug) keeps the newer record. */
  *map_slot(&objects, PTR(ev->u.obj_alloc.obj_id)) = record_count;
  pthread_mutex_unlock(&lock);
}

static void on_free(const JVMPI_Event* ev) {
  pthread_mutex_lock(&lock);
  ++seq;
  ++free_events;
  if (!in_gc) ++free_outside_gc;
  uint64_t* slot = map_find(&objects, PTR(ev->u.obj_free.obj_id));
  if (slot == NULL || *slot == 0) {
    ++free_unknown;
  } else {
    obj_record* r = &records[*slot - 1];
    if (!r->freed) {
      r->freed = 1;
      if (r->label != 0) {
        ++window_freed;
        pthread_cond_broadcast(&freed_cond);
      }
    }
  }
  pthread_mutex_unlock(&lock);
}

static void on_jni_ref(const JVMPI_Event* ev) {
  const jint type = ev->event_type;
  const int is_alloc =
      type == JVMPI_EVENT_JNI_GLOBALREF_ALLOC || type == JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC;
  const char* kind = type == JVMPI_EVENT_JNI_GLOBALREF_ALLOC        ? "galloc"
                     : type == JVMPI_EVENT_JNI_GLOBALREF_FREE       ? "gfree"
                     : type == JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC ? "walloc"
                                                                    : "wfree";
  if (!is_alloc) {
    pthread_mutex_lock(&lock);
    if (jniref_log != NULL) {
      fprintf(jniref_log, "%s ref=0x%llx\n", kind, PTR(ev->u.jni_globalref_free.ref_id));
      fflush(jniref_log);
    }
    pthread_mutex_unlock(&lock);
    return;
  }
  /* Which object is this? Ask for its defining event, as a JVMPI agent that missed it would. */
  t_requested_seen = 0;
  t_requested_class = NULL;
  const jint rc = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, ev->u.jni_globalref_alloc.obj_id);
  const char* name = NULL;
  if (rc == JVMPI_SUCCESS && t_requested_seen) {
    name = t_requested_class != NULL ? tables_class_name(t_requested_class) : "-";
  }
  pthread_mutex_lock(&lock);
  /* The class its OBJECT_ALLOC named, if this agent saw one for the ID. */
  const char* alloc_class = "-";
  int alloc_is_array = -1;
  uint64_t* slot = map_find(&objects, PTR(ev->u.jni_globalref_alloc.obj_id));
  jobjectID alloc_class_id = NULL;
  if (slot != NULL) {
    alloc_is_array = records[*slot - 1].is_array;
    alloc_class_id = records[*slot - 1].class_id;
  }
  pthread_mutex_unlock(&lock);
  if (alloc_class_id != NULL) alloc_class = tables_class_name(alloc_class_id);
  pthread_mutex_lock(&lock);
  if (jniref_log != NULL) {
    fprintf(jniref_log,
            "%s ref=0x%llx obj=0x%llx rc=%d class=%s type=%d alloc_class=%s alloc_type=%d\n", kind,
            PTR(ev->u.jni_globalref_alloc.ref_id), PTR(ev->u.jni_globalref_alloc.obj_id), rc,
            name != NULL ? name : "?", t_requested_seen ? t_requested_is_array : -1,
            alloc_class != NULL ? alloc_class : "?", alloc_is_array);
    fflush(jniref_log);
  }
  pthread_mutex_unlock(&lock);
}

/* ---- the report ---- */

typedef struct {
  int label;
  int is_array;
  jobjectID class_id;
  long total, freed;
  int min_size, max_size;
} stat_t;

static void write_report(const char* path) {
  pthread_mutex_lock(&lock);
  stat_t* stats = NULL;
  size_t nstats = 0, cap = 0;
  for (size_t i = 0; i < record_count; i++) {
    const obj_record* r = &records[i];
    if (r->label == 0) continue;
    stat_t* s = NULL;
    for (size_t k = 0; k < nstats; k++) {
      if (stats[k].label == r->label && stats[k].is_array == r->is_array &&
          stats[k].class_id == r->class_id) {
        s = &stats[k];
        break;
      }
    }
    if (s == NULL) {
      if (nstats == cap) {
        cap = cap == 0 ? 64 : cap * 2;
        stats = realloc(stats, cap * sizeof(stat_t));
      }
      s = &stats[nstats++];
      s->label = r->label;
      s->is_array = r->is_array;
      s->class_id = r->class_id;
      s->total = s->freed = 0;
      s->min_size = r->size;
      s->max_size = r->size;
    }
    s->total++;
    if (r->freed) s->freed++;
    if (r->size < s->min_size) s->min_size = r->size;
    if (r->size > s->max_size) s->max_size = r->size;
  }
  long counters[] = {alloc_events,       free_events,
                     free_unknown,       window_freed,
                     arena_new_count,    arena_new_seq,
                     first_alloc_seq,    arena_new_id,
                     alloc_bad_arena,    alloc_null_id,
                     object_move_count,  arena_delete_count,
                     enable_move_rc,     enable_arena_delete_rc,
                     alloc_before_arena, gc_starts,
                     gc_finishes,        free_outside_gc};
  const char* names[] = {"alloc_events",          "free_events",
                         "free_unknown",          "window_freed",
                         "arena_new_count",       "arena_new_seq",
                         "first_alloc_seq",       "arena_new_id",
                         "alloc_bad_arena",       "alloc_null_id",
                         "object_move_count",     "arena_delete_count",
                         "enable_object_move_rc", "enable_arena_delete_rc",
                         "alloc_before_arena",    "gc_starts",
                         "gc_finishes",           "free_outside_gc"};
  pthread_mutex_unlock(&lock);

  FILE* f = fopen(path, "w");
  if (f == NULL) return;
  for (size_t k = 0; k < nstats; k++) {
    const stat_t* s = &stats[k];
    const char* name = s->class_id == NULL ? "-" : tables_class_name(s->class_id);
    fprintf(f, "stat %s %d %s %ld %ld %d %d\n", labels[s->label], s->is_array,
            name != NULL ? name : "?", s->total, s->freed, s->min_size, s->max_size);
  }
  for (size_t k = 0; k < sizeof counters / sizeof counters[0]; k++) {
    fprintf(f, "%s %ld\n", names[k], counters[k]);
  }
  fclose(f);
  free(stats);
}

static void notify(JVMPI_Event* ev) {
  const jint type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
  const int requested = (ev->event_type & JVMPI_REQUESTED_EVENT) != 0;
  switch (type) {
    case JVMPI_EVENT_OBJECT_ALLOC:
      if (requested) {
        t_requested_seen = 1;
        t_requested_class = ev->u.obj_alloc.class_id;
        t_requested_is_array = ev->u.obj_alloc.is_array;
      } else {
        on_alloc(ev);
      }
      break;
    case JVMPI_EVENT_OBJECT_FREE:
      on_free(ev);
      break;
    case JVMPI_EVENT_CLASS_LOAD:
      tables_add_class(ev);
      break;
    case JVMPI_EVENT_THREAD_START:
      tables_add_thread(ev->u.thread_start.thread_env_id, ev->u.thread_start.thread_name);
      break;
    case JVMPI_EVENT_ARENA_NEW:
      pthread_mutex_lock(&lock);
      ++seq;
      if (arena_new_count++ == 0) {
        arena_new_seq = seq;
        arena_new_id = ev->u.new_arena.arena_id;
      }
      pthread_mutex_unlock(&lock);
      break;
    case JVMPI_EVENT_GC_START:
      pthread_mutex_lock(&lock);
      ++gc_starts;
      in_gc = 1;
      pthread_mutex_unlock(&lock);
      break;
    case JVMPI_EVENT_GC_FINISH:
      pthread_mutex_lock(&lock);
      ++gc_finishes;
      in_gc = 0;
      pthread_mutex_unlock(&lock);
      break;
    case JVMPI_EVENT_ARENA_DELETE:
      pthread_mutex_lock(&lock);
      ++arena_delete_count;
      pthread_mutex_unlock(&lock);
      break;
    case JVMPI_EVENT_OBJECT_MOVE:
      pthread_mutex_lock(&lock);
      ++object_move_count;
      pthread_mutex_unlock(&lock);
      break;
    case JVMPI_EVENT_JNI_GLOBALREF_ALLOC:
    case JVMPI_EVENT_JNI_GLOBALREF_FREE:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE:
      on_jni_ref(ev);
      break;
    case JVMPI_EVENT_JVM_SHUT_DOWN: {
      char path[600];
      snprintf(path, sizeof path, "%s/final.txt", out_dir);
      write_report(path);
      break;
    }
    default:
      break;
  }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* vm, char* options, void* reserved) {
  (void)reserved;
  jvmpi = get_jvmpi(vm);
  if (jvmpi == NULL || !opt_value(options, "out", out_dir, sizeof out_dir)) return JNI_ERR;
  char buf[16];
  track_jni_refs = opt_value(options, "jniref", buf, sizeof buf) && buf[0] == '1';
  tables_init();
  map_init(&objects, 1 << 18);
  if (track_jni_refs) {
    char path[600];
    snprintf(path, sizeof path, "%s/jniref.txt", out_dir);
    jniref_log = fopen(path, "w");
  }
  jvmpi->NotifyEvent = notify;
  jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_ARENA_NEW, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_OBJECT_FREE, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_GC_START, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_GC_FINISH, NULL);
  enable_move_rc = jvmpi->EnableEvent(JVMPI_EVENT_OBJECT_MOVE, NULL);
  enable_arena_delete_rc = jvmpi->EnableEvent(JVMPI_EVENT_ARENA_DELETE, NULL);
  if (track_jni_refs) {
    jvmpi->EnableEvent(JVMPI_EVENT_JNI_GLOBALREF_ALLOC, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JNI_GLOBALREF_FREE, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE, NULL);
  }
  return JNI_OK;
}

/* ---- natives of jvmpiheap.AllocAgent ---- */

JNIEXPORT void JNICALL Java_jvmpiheap_AllocAgent_begin(JNIEnv* env, jclass cls, jstring label) {
  (void)cls;
  const char* s = (*env)->GetStringUTFChars(env, label, NULL);
  int found = 0;
  pthread_mutex_lock(&lock);
  for (int i = 1; i <= label_count; i++) {
    if (strcmp(labels[i], s) == 0) found = i;
  }
  if (found == 0 && label_count < MAX_LABELS) {
    labels[++label_count] = strdup(s);
    found = label_count;
  }
  pthread_mutex_unlock(&lock);
  (*env)->ReleaseStringUTFChars(env, label, s);
  t_label = found;
}

JNIEXPORT void JNICALL Java_jvmpiheap_AllocAgent_end(JNIEnv* env, jclass cls) {
  (void)env;
  (void)cls;
  t_label = 0;
}

/* Waits until `expected` window objects have been freed, at most timeout_ms; returns the count. */
JNIEXPORT jlong JNICALL Java_jvmpiheap_AllocAgent_awaitFreed(JNIEnv* env, jclass cls,
                                                             jlong expected, jint timeout_ms) {
  (void)env;
  (void)cls;
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += timeout_ms / 1000;
  deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
  if (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_sec++;
    deadline.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&lock);
  while (window_freed < expected) {
    if (pthread_cond_timedwait(&freed_cond, &lock, &deadline) != 0) break;
  }
  const long n = window_freed;
  pthread_mutex_unlock(&lock);
  return n;
}

JNIEXPORT void JNICALL Java_jvmpiheap_AllocAgent_report(JNIEnv* env, jclass cls, jstring path) {
  (void)cls;
  const char* s = (*env)->GetStringUTFChars(env, path, NULL);
  write_report(s);
  (*env)->ReleaseStringUTFChars(env, path, s);
}

JNIEXPORT jlong JNICALL Java_jvmpiheap_AllocAgent_idOf(JNIEnv* env, jclass cls, jobject o) {
  (void)env;
  (void)cls;
  jvmpi->DisableGC();
  const jobjectID id = jvmpi->jobject2jobjectID(o);
  jvmpi->EnableGC();
  return (jlong)(uintptr_t)id;
}

/* How many of the array's objects were reported by OBJECT_ALLOC (by object ID). */
JNIEXPORT jint JNICALL Java_jvmpiheap_AllocAgent_countReported(JNIEnv* env, jclass cls,
                                                               jobjectArray objs) {
  (void)cls;
  const jsize n = (*env)->GetArrayLength(env, objs);
  jint reported = 0;
  jvmpi->DisableGC();
  for (jsize i = 0; i < n; i++) {
    jobject o = (*env)->GetObjectArrayElement(env, objs, i);
    if (o == NULL) continue;
    const jobjectID id = jvmpi->jobject2jobjectID(o);
    (*env)->DeleteLocalRef(env, o);
    pthread_mutex_lock(&lock);
    if (id != NULL && map_find(&objects, PTR(id)) != NULL) reported++;
    pthread_mutex_unlock(&lock);
  }
  jvmpi->EnableGC();
  return reported;
}
