// SPDX-License-Identifier: Apache-2.0
/*
 * Does what agents of the HPROF lineage do with JVMPI, and checks that every class ID and method ID
 * the runtime hands them is one a CLASS_LOAD told them about. Option mode= picks the pattern:
 *
 *   dump          CLASS_LOAD from the start; at JVM_SHUT_DOWN every event is disabled, then a
 *                 level-2 HEAP_DUMP is requested and parsed as such an agent parses it (a
 *                 CLASS_DUMP can only be read with its class's CLASS_LOAD: interface count and
 *                 static field types come from there). With fetch=1 it also does what such an
 *                 agent does for every object of the dump it has not heard of: RequestEvent
 *                 (OBJECT_ALLOC) for it, from the dump's handler. Log: DUMP (ms: the request's
 *                 wall time, handler included; fetched, fetch_failed: the object requests).
 *                 With chain=1 it loads classes while it switches CLASS_LOAD off: before, an
 *                 array class (held by an instance), and in the CLASS_LOAD of each such class, the
 *                 next one (an array of it, up to CHAIN_DEPTH), so that some are loaded after the
 *                 runtime's last look at the loaded classes; every one must be announced.
 *                 Log: CHAIN.
 *   thread_trace  GetCallTrace of the new thread in every THREAD_START (also those of the
 *                 start-up batch); every frame's method must be known. Log: TRACES.
 *   retransform   METHOD_ENTRY is enabled mid-run (Agent.hook(1)) while threads are inside the
 *                 methods it instruments; then (Agent.hook(2)) GetCallTrace of every thread and a
 *                 MONITOR_DUMP, whose every frame must be known. Log: TRACES.
 *   sample_retransform  METHOD_ENTRY is enabled (Agent.hook(3)) under a thread spinning inside a
 *                 program method, then CPU sampling (the extension interface) starts; the
 *                 samples drained (Agent.hook(4) drains, returns the spinner's count) must name
 *                 only methods a CLASS_LOAD listed (Agent.hook(5) logs it). Log: SAMPLES.
 *                 With monitors=1 it has monitor events on from the start and requests a
 *                 MONITOR_DUMP between the two, as such an agent with monitor profiling on does
 *                 (Log: MONITORS).
 *                 With classdump=1, for every instance of the dump it asks for the OBJECT_DUMP
 *                 of the instance's class, from the dump's handler, as such an agent does to learn
 *                 superclasses it could not place; each answer must be a CLASS_DUMP record equal
 *                 to that class's record in the dump (DUMP: class_requests, class_failed,
 *                 class_mismatched).
 *   gc_times      GC_START and GC_FINISH on, as a `cpu=times` agent of the lineage has them: each
 *                 handler looks up the per-thread state it keeps from THREAD_START for the event's
 *                 env_id (to charge the collection to that thread), GC_START enters the agent's
 *                 data lock and GC_FINISH leaves it. Such an agent returns early, lock held, when
 *                 the env_id is none of its threads (and the VM then deadlocks); this one counts
 *                 it and leaves the lock. At JVM_SHUT_DOWN every thread still started must still
 *                 have its state (stale_threads). Runs jvmpitest.GcProgram (hook 1: GC_FINISH
 *                 count, hook 2: RunGC). Log: GC.
 *   alloc_class   OBJ_ALLOC on from the start; the class (or element class) an OBJ_ALLOC names must
 *                 have had its CLASS_LOAD, and RequestEvent(CLASS_LOAD) for it must succeed right
 *                 then. Log: ALLOCS.
 *
 * Unknown IDs are logged as UNKNOWN lines (the first few) and counted.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent_common.h"
#include "jvmpi_ext.h"

static JVMPI_Interface* jvmpi;
static char mode[32];
static volatile int init_done;

/* ---- classes from CLASS_LOAD: what a dump reader needs of them ---- */

#define CLASS_SLOTS 65536 /* power of two; a JDK boots with ~5000 classes, a heap dump may add */

struct class_entry {
  jobjectID id;
  int num_interfaces;
  int num_statics;
  char* static_types; /* first character of each static field's signature */
};
static struct class_entry classes[CLASS_SLOTS];
static pthread_mutex_t classes_lock = PTHREAD_MUTEX_INITIALIZER;

static struct class_entry* class_slot(jobjectID id) {
  size_t h = ((size_t)id >> 3) * 2654435761u;
  for (size_t i = 0; i < CLASS_SLOTS; i++) {
    struct class_entry* e = &classes[(h + i) & (CLASS_SLOTS - 1)];
    if (e->id == id || e->id == NULL) return e;
  }
  return NULL;
}

static void chain_on_class_load(jobjectID id);

/* While set, a requested CLASS_LOAD only names an unknown class for the log: it is not learnt. */
static int naming;
static char named[256];

static void class_loaded(const JVMPI_Event* ev) {
  if (naming) {
    snprintf(named, sizeof named, "%s", ev->u.class_load.class_name);
    return;
  }
  names_add_class(ev);
  chain_on_class_load(ev->u.class_load.class_id);
  pthread_mutex_lock(&classes_lock);
  struct class_entry* e = class_slot(ev->u.class_load.class_id);
  if (e != NULL && e->id == NULL) {
    e->num_interfaces = ev->u.class_load.num_interfaces;
    e->num_statics = ev->u.class_load.num_static_fields;
    e->static_types = malloc((size_t)e->num_statics + 1);
    for (int i = 0; e->static_types != NULL && i < e->num_statics; i++) {
      e->static_types[i] = ev->u.class_load.statics[i].field_signature[0];
    }
    e->id = ev->u.class_load.class_id;
  }
  pthread_mutex_unlock(&classes_lock);
}

/* The class's entry, or NULL when no CLASS_LOAD named it. Entries are never removed. */
static const struct class_entry* class_known(jobjectID id) {
  pthread_mutex_lock(&classes_lock);
  struct class_entry* e = class_slot(id);
  if (e != NULL && (e->id != id || id == NULL)) e = NULL;
  pthread_mutex_unlock(&classes_lock);
  return e;
}

static long unknown_logged;
static void log_unknown(const char* what, const void* id, const char* where) {
  if (unknown_logged++ < 8) tl_log("UNKNOWN\twhat=%s\tid=0x%llx\twhere=%s", what, PTR(id), where);
}

/* ---- threads from THREAD_START ---- */

#define MAX_THREADS 512
static JNIEnv* thread_envs[MAX_THREADS];
static int thread_count;
static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- call traces: every frame must name a known method ---- */

static long traces, frames, unknown_frames;
static pthread_mutex_t traces_lock = PTHREAD_MUTEX_INITIALIZER;

static void check_trace(const JVMPI_CallTrace* t, const char* where) {
  pthread_mutex_lock(&traces_lock);
  traces++;
  for (jint i = 0; i < t->num_frames; i++) {
    frames++;
    if (names_method(t->frames[i].method_id) == NULL) {
      unknown_frames++;
      log_unknown("method", t->frames[i].method_id, where);
    }
  }
  pthread_mutex_unlock(&traces_lock);
}

static void trace_thread(JNIEnv* env, const char* where) {
  JVMPI_CallFrame f[64];
  JVMPI_CallTrace t = {env, 0, f};
  jvmpi->GetCallTrace(&t, 64);
  check_trace(&t, where);
}

static void log_traces(const char* when) {
  tl_log("TRACES\twhen=%s\ttraces=%ld\tframes=%ld\tunknown=%ld", when, traces, frames,
         unknown_frames);
}

/* ---- heap dump, read as a level-2 reader must ---- */

static uint32_t u4(const unsigned char* p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static jobjectID id_at(const unsigned char* p) {
  jobjectID id;
  memcpy(&id, p, sizeof id);
  return id;
}
static size_t value_size(int type) {
  switch (type) {
    case JVMPI_CLASS:
    case 'L':
    case '[':
      return sizeof(void*);
    case JVMPI_BOOLEAN:
    case JVMPI_BYTE:
    case 'Z':
    case 'B':
      return 1;
    case JVMPI_SHORT:
    case JVMPI_CHAR:
    case 'S':
    case 'C':
      return 2;
    case JVMPI_INT:
    case JVMPI_FLOAT:
    case 'I':
    case 'F':
      return 4;
    case JVMPI_LONG:
    case JVMPI_DOUBLE:
    case 'J':
    case 'D':
      return 8;
    default:
      return 0;
  }
}

static long dump_records, class_dumps, unknown_classes;
static int dump_complete;

/* ---- chain=1: array classes loaded while CLASS_LOAD is switched off ---- */

#define CHAIN_DEPTH 4
static JavaVM* java_vm;
static int chain;
static volatile int chaining;
static int chain_made;
static jobjectID chain_last; /* the class of the last array made */

/* Makes an array whose elements are of `element`, held for good (a JNI global reference, so the
 * exit dump has it and its class), and remembers its class. */
static void chain_next(JNIEnv* env, jclass element) {
  jobjectArray array = (*env)->NewObjectArray(env, 1, element, NULL);
  if (array == NULL) {
    (*env)->ExceptionClear(env);
    return;
  }
  (*env)->NewGlobalRef(env, array);
  jclass cls = (*env)->GetObjectClass(env, array);
  chain_last = jvmpi->jobject2jobjectID(cls);
  chain_made++;
  (*env)->DeleteLocalRef(env, cls);
  (*env)->DeleteLocalRef(env, array);
}

static void chain_on_class_load(jobjectID id) {
  if (!chaining || id != chain_last || chain_made >= CHAIN_DEPTH) return;
  JNIEnv* env = NULL;
  if ((*java_vm)->GetEnv(java_vm, (void**)&env, JNI_VERSION_1_2) != JNI_OK) return;
  jobject cls = jvmpi->jobjectID2jobject(id);
  if (cls != NULL) chain_next(env, (jclass)cls);
}

static void chain_start(void) {
  JNIEnv* env = NULL;
  if ((*java_vm)->GetEnv(java_vm, (void**)&env, JNI_VERSION_1_2) != JNI_OK) return;
  /* Deep enough that no program makes it. */
  jclass base = (*env)->FindClass(env, "[[[[[[Ljvmpitest/ArrayInitProgram;");
  if (base == NULL) {
    (*env)->ExceptionClear(env);
    return;
  }
  chain_next(env, base);
  chaining = 1;
}

/* ---- fetch=1: objects the agent has heard of, by ID (an open-addressing set that grows) ---- */

static int fetch;
static jobjectID* objects;
static size_t object_slots, object_count;
static long fetched, fetch_failed, fetch_mismatched;
/* What the last requested OBJECT_ALLOC said (it is delivered inside RequestEvent, on its thread).
 */
static jobjectID answered_class;
static jint answered_is_array;

static jobjectID* object_slot(jobjectID* table, size_t slots, jobjectID id) {
  size_t h = ((size_t)id >> 3) * 0x9E3779B97F4A7C15ull;
  for (size_t i = 0;; i++) {
    jobjectID* e = &table[(h + i) & (slots - 1)];
    if (*e == id || *e == NULL) return e;
  }
}

static void object_learnt(jobjectID id) {
  if (id == NULL) return;
  if (2 * (object_count + 1) > object_slots) {
    const size_t slots = object_slots == 0 ? 1 << 16 : 2 * object_slots;
    jobjectID* table = calloc(slots, sizeof *table);
    if (table == NULL) return;
    for (size_t i = 0; i < object_slots; i++)
      if (objects[i] != NULL) *object_slot(table, slots, objects[i]) = objects[i];
    free(objects);
    objects = table;
    object_slots = slots;
  }
  jobjectID* e = object_slot(objects, object_slots, id);
  if (*e == NULL) {
    *e = id;
    object_count++;
  }
}

/* An object the dump names: asked for, as the agent asks for every object it has not seen. The
 * answer must describe the object as its record does: `cls` and `is_array` as OBJECT_ALLOC names
 * them (an instance's class, an object array's element class, a primitive array's type). */
static void object_met(jobjectID id, jobjectID cls, jint is_array) {
  if (!fetch || id == NULL) return;
  if (object_slots > 0 && *object_slot(objects, object_slots, id) == id) return;
  fetched++;
  answered_class = NULL;
  answered_is_array = -1;
  if (jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, id) != JVMPI_SUCCESS || object_slots == 0 ||
      *object_slot(objects, object_slots, id) != id) {
    fetch_failed++;
  } else if (answered_class != cls || answered_is_array != is_array) {
    if (fetch_mismatched++ < 8) {
      tl_log(
          "FETCH_MISMATCH	id=0x%llx	class=0x%llx	is_array=%d	"
          "answered_class=0x%llx"
          "	answered_is_array=%d",
          PTR(id), PTR(cls), (int)is_array, PTR(answered_class), (int)answered_is_array);
    }
  }
}

static void check_class(jobjectID id, const char* where) {
  if (id == NULL || class_known(id) != NULL) return;
  unknown_classes++;
  if (unknown_logged < 8) {
    naming = 1;
    strcpy(named, "?");
    jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, id);
    naming = 0;
    tl_log("UNKNOWN_CLASS_NAME\tid=0x%llx\tname=%s", PTR(id), named);
  }
  log_unknown("class", id, where);
}

/* ---- classdump=1: OBJECT_DUMP of each instance's class, against the dump's own record ---- */

static int classdump;
static int monitors;
static long class_requests, class_failed, class_mismatched;
static const unsigned char* answer_data; /* the last OBJECT_DUMP answer (copied) */
static size_t answer_len;
static unsigned char answer_copy[1 << 16];

/* The CLASS_DUMP record of each class in the dump (kept per class: where it starts and ends). */
#define RECORD_SLOTS 65536
static struct {
  jobjectID id;
  const unsigned char *begin, *end;
} class_records[RECORD_SLOTS];

static size_t record_slot(jobjectID id) {
  size_t h = ((size_t)id >> 3) * 2654435761u;
  for (size_t i = 0;; i++) {
    size_t slot = (h + i) & (RECORD_SLOTS - 1);
    if (class_records[slot].id == id || class_records[slot].id == NULL) return slot;
  }
}

/* The instances' classes, asked for once the dump has been read (their records may come later in
 * the dump than their instances), one request per instance. */
static jobjectID* instance_classes;
static size_t instance_count, instance_capacity;

static void instance_met(jobjectID cls) {
  if (!classdump || cls == NULL) return;
  if (instance_count == instance_capacity) {
    const size_t capacity = instance_capacity == 0 ? 1 << 16 : 2 * instance_capacity;
    jobjectID* grown = realloc(instance_classes, capacity * sizeof *grown);
    if (grown == NULL) return;
    instance_classes = grown;
    instance_capacity = capacity;
  }
  instance_classes[instance_count++] = cls;
}

static void ask_for_classes(void) {
  for (size_t i = 0; i < instance_count; i++) {
    const jobjectID cls = instance_classes[i];
    const size_t slot = record_slot(cls);
    if (class_records[slot].id != cls) continue; /* no record of it: nothing to compare with */
    class_requests++;
    answer_data = NULL;
    if (jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_DUMP, cls) != JVMPI_SUCCESS || answer_data == NULL) {
      class_failed++;
      continue;
    }
    const size_t len = (size_t)(class_records[slot].end - class_records[slot].begin);
    if (answer_len != len || memcmp(answer_data, class_records[slot].begin, len) != 0) {
      if (class_mismatched++ < 8) {
        tl_log("CLASS_MISMATCH\tclass=0x%llx\trecord_bytes=%zu\tanswer_bytes=%zu", PTR(cls), len,
               answer_len);
      }
    }
  }
}

static void object_dump_answer(const JVMPI_Event* ev) {
  answer_len = (size_t)ev->u.object_dump.data_len;
  if (answer_len > sizeof answer_copy) answer_len = sizeof answer_copy;
  memcpy(answer_copy, ev->u.object_dump.data, answer_len);
  answer_data = answer_copy;
}

/* ---- gc_times: GC events on a thread the agent knows ---- */

static JVMPI_RawMonitor data_lock;
static long gc_starts, gc_finishes, gc_unknown_env, gc_env_changed;
static JNIEnv* gc_env; /* the env_id of the open GC_START */
static volatile long finishes_seen;

/* The threads with THREAD_START and no THREAD_END yet: at JVM_SHUT_DOWN such an agent bills the
 * state of each (GetThreadLocalStorage must still answer for every one). */
static JNIEnv* live_envs[MAX_THREADS];
static int live_count;

static void live_thread(JNIEnv* env, int started) {
  pthread_mutex_lock(&threads_lock);
  if (started && live_count < MAX_THREADS) {
    live_envs[live_count++] = env;
  } else if (!started) {
    for (int i = 0; i < live_count; i++) {
      if (live_envs[i] == env) {
        live_envs[i] = live_envs[--live_count];
        break;
      }
    }
  }
  pthread_mutex_unlock(&threads_lock);
}

static long stale_threads(void) {
  long stale = 0;
  pthread_mutex_lock(&threads_lock);
  for (int i = 0; i < live_count; i++) {
    if (jvmpi->GetThreadLocalStorage(live_envs[i]) == NULL) stale++;
  }
  pthread_mutex_unlock(&threads_lock);
  return stale;
}

static void gc_event(const JVMPI_Event* ev, int start) {
  if (start) {
    jvmpi->RawMonitorEnter(data_lock);
    gc_starts++;
    gc_env = ev->env_id;
  } else {
    gc_finishes++;
    if (ev->env_id != gc_env) gc_env_changed++;
  }
  /* A `cpu=times` agent's per-thread state, set in THREAD_START. */
  if (ev->env_id == NULL || jvmpi->GetThreadLocalStorage(ev->env_id) == NULL) {
    if (gc_unknown_env++ < 8) {
      tl_log("UNKNOWN\tkind=env\tid=0x%llx\twhere=%s", PTR(ev->env_id),
             start ? "GC_START" : "GC_FINISH");
    }
  }
  if (!start) {
    finishes_seen++;
    jvmpi->RawMonitorExit(data_lock);
  }
}

static void read_heap_dump(const unsigned char* p, const unsigned char* end) {
  const size_t id = sizeof(void*);
  while (p < end) {
    const int type = *p++;
    dump_records++;
    switch (type) {
      case JVMPI_GC_ROOT_UNKNOWN:
      case JVMPI_GC_ROOT_MONITOR_USED:
        p += id;
        break;
      case JVMPI_GC_ROOT_STICKY_CLASS:
        check_class(id_at(p), "ROOT_STICKY_CLASS");
        p += id;
        break;
      case JVMPI_GC_ROOT_JNI_GLOBAL:
      case JVMPI_GC_ROOT_NATIVE_STACK:
      case JVMPI_GC_ROOT_THREAD_BLOCK:
        p += 2 * id;
        break;
      case JVMPI_GC_ROOT_JNI_LOCAL:
      case JVMPI_GC_ROOT_JAVA_FRAME:
        p += 2 * id + 4;
        break;
      case JVMPI_GC_CLASS_DUMP: {
        class_dumps++;
        const unsigned char* record = p - 1;
        const struct class_entry* c = class_known(id_at(p));
        if (c == NULL) {
          /* Its interfaces and statics cannot be skipped: the rest of the dump is unreadable. */
          check_class(id_at(p), "CLASS_DUMP");
          return;
        }
        check_class(id_at(p + id), "CLASS_DUMP super");
        p += 7 * id + 4 + (size_t)c->num_interfaces * id;
        uint32_t pool = (uint32_t)p[0] << 8 | p[1];
        p += 2;
        for (uint32_t i = 0; i < pool; i++) p += 3 + value_size(p[2]);
        for (int i = 0; i < c->num_statics; i++) p += value_size(c->static_types[i]);
        if (classdump) {
          const size_t slot = record_slot(id_at(record + 1));
          class_records[slot].id = id_at(record + 1);
          class_records[slot].begin = record;
          class_records[slot].end = p;
        }
        break;
      }
      case JVMPI_GC_INSTANCE_DUMP:
        check_class(id_at(p + id), "INSTANCE_DUMP");
        /* java.lang.Class's own class object is an instance of itself: OBJECT_ALLOC names no
         * class for it (as the runtime answers it from the object too). */
        object_met(id_at(p), id_at(p + id) == id_at(p) ? NULL : id_at(p + id), JVMPI_NORMAL_OBJECT);
        instance_met(id_at(p + id));
        p += 2 * id + 4 + u4(p + 2 * id);
        break;
      case JVMPI_GC_OBJ_ARRAY_DUMP:
        check_class(id_at(p + id + 4), "OBJ_ARRAY_DUMP");
        object_met(id_at(p), id_at(p + id + 4), JVMPI_CLASS);
        p += 2 * id + 4 + (size_t)u4(p + id) * id;
        break;
      case JVMPI_GC_PRIM_ARRAY_DUMP:
        object_met(id_at(p), NULL, p[id + 4]);
        p += id + 5 + (size_t)u4(p + id) * value_size(p[id + 4]);
        break;
      default:
        tl_log("BAD_RECORD\ttype=0x%x", type);
        return;
    }
  }
  dump_complete = p == end;
}

/* ---- allocations ---- */

static long allocs_named, allocs_unknown, requests, requests_failed;

static void object_alloc(JVMPI_Event* ev) {
  jobjectID cls = ev->u.obj_alloc.class_id;
  if (cls == NULL) return; /* primitive arrays, java.lang.Class's own class */
  allocs_named++;
  if (class_known(cls) != NULL) return;
  allocs_unknown++;
  log_unknown("class", cls, init_done ? "OBJ_ALLOC" : "OBJ_ALLOC before JVM_INIT_DONE");
  /* What the agent does with a class it has not heard of: ask for it, there and then. */
  requests++;
  if (jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, cls) != JVMPI_SUCCESS ||
      class_known(cls) == NULL) {
    requests_failed++;
    tl_log("REQUEST_FAILED\tclass=0x%llx\tinit_done=%d", PTR(cls), init_done);
  }
}

/* ---- sample_retransform: CPU samples, every frame known ---- */

static JVMPI_ExtInterface* ext;
static long samples, spinner_samples, sample_frames, sample_unknown;

static void JNICALL on_samples(void* arg, const JVMPIExt_CpuSample* batch, jint count) {
  JNIEnv* spinner = (JNIEnv*)arg;
  for (jint i = 0; i < count; i++) {
    const JVMPI_CallTrace* t = &batch[i].trace;
    samples++;
    if (t->env_id != spinner || t->num_frames == 0) continue;
    spinner_samples++;
    for (jint f = 0; f < t->num_frames; f++) {
      sample_frames++;
      if (names_method(t->frames[f].method_id) == NULL) {
        sample_unknown++;
        log_unknown("method", t->frames[f].method_id, "CPU sample");
      }
    }
  }
}

static jlong sample_hook(jint code) {
  if (ext == NULL) return -1;
  JNIEnv* spinner = threads_find("jvmpitest-spinner");
  switch (code) {
    case 3: {
      /* Sampling from when the classes are instrumented: every sample of the spinner is then
       * inside the obsolete spin(). */
      const jint rc = jvmpi->EnableEvent(JVMPI_EVENT_METHOD_ENTRY, NULL);
      if (rc != JVMPI_SUCCESS) return rc;
      return ext->StartCpuSampling(1000000, 64);
    }
    case 4:
      ext->DrainCpuSamples(on_samples, spinner);
      return spinner_samples;
    case 5:
      ext->StopCpuSampling();
      ext->DrainCpuSamples(on_samples, spinner);
      tl_log("SAMPLES\tsamples=%ld\tspinner=%ld\tframes=%ld\tunknown=%ld", samples, spinner_samples,
             sample_frames, sample_unknown);
      return 0;
    default:
      return -1;
  }
}

/* ---- events ---- */

static void shut_down(void) {
  if (strcmp(mode, "dump") == 0) {
    if (chain) chain_start();
    for (jint e = 1; e <= JVMPI_MAX_EVENT_TYPE_VAL; e++) jvmpi->DisableEvent(e, NULL);
    chaining = 0;
    if (chain) tl_log("CHAIN\tmade=%d", chain_made);
    /* monitors=1: the monitor dump first, as an agent with monitor profiling on writes it. */
    if (monitors)
      tl_log("MONITORS\trc=%d", (int)jvmpi->RequestEvent(JVMPI_EVENT_MONITOR_DUMP, NULL));
    JVMPI_HeapDumpArg arg = {JVMPI_DUMP_LEVEL_2};
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    const jint rc = jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &arg);
    clock_gettime(CLOCK_MONOTONIC, &end);
    const double ms =
        (double)(end.tv_sec - start.tv_sec) * 1e3 + (double)(end.tv_nsec - start.tv_nsec) / 1e6;
    tl_log(
        "DUMP\trc=%d\trecords=%ld\tclass_dumps=%ld\tunknown=%ld\tcomplete=%d\tms=%.1f"
        "\tfetched=%ld\tfetch_failed=%ld\tfetch_mismatched=%ld\tclass_requests=%ld"
        "\tclass_failed=%ld\tclass_mismatched=%ld",
        (int)rc, dump_records, class_dumps, unknown_classes, dump_complete, ms, fetched,
        fetch_failed, fetch_mismatched, class_requests, class_failed, class_mismatched);
    log_traces("dump");
  } else if (strcmp(mode, "gc_times") == 0) {
    tl_log("GC\tstarts=%ld\tfinishes=%ld\tunknown_env=%ld\tenv_changed=%ld\tstale_threads=%ld",
           gc_starts, gc_finishes, gc_unknown_env, gc_env_changed, stale_threads());
  } else if (strcmp(mode, "alloc_class") == 0) {
    tl_log("ALLOCS\tnamed=%ld\tunknown=%ld\trequests=%ld\tfailed=%ld", allocs_named, allocs_unknown,
           requests, requests_failed);
  } else {
    log_traces("shutdown");
  }
}

static void notify_event(JVMPI_Event* ev) {
  switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
      class_loaded(ev);
      break;
    case JVMPI_EVENT_THREAD_START: {
      JNIEnv* env = ev->u.thread_start.thread_env_id;
      pthread_mutex_lock(&threads_lock);
      if (thread_count < MAX_THREADS) thread_envs[thread_count++] = env;
      pthread_mutex_unlock(&threads_lock);
      threads_add(env, ev->u.thread_start.thread_name);
      jvmpi->SetThreadLocalStorage(env, env); /* any non-NULL state */
      live_thread(env, 1);
      if (strcmp(mode, "thread_trace") == 0) trace_thread(env, ev->u.thread_start.thread_name);
      break;
    }
    case JVMPI_EVENT_THREAD_END:
      threads_remove(ev->env_id);
      live_thread(ev->env_id, 0);
      break;
    case JVMPI_EVENT_OBJECT_ALLOC:
      if (ev->event_type & JVMPI_REQUESTED_EVENT) {
        object_learnt(ev->u.obj_alloc.obj_id);
        answered_class = ev->u.obj_alloc.class_id;
        answered_is_array = ev->u.obj_alloc.is_array;
      } else {
        object_alloc(ev);
      }
      break;
    case JVMPI_EVENT_HEAP_DUMP:
      read_heap_dump((const unsigned char*)ev->u.heap_dump.begin,
                     (const unsigned char*)ev->u.heap_dump.end);
      ask_for_classes();
      for (jint i = 0; i < ev->u.heap_dump.num_traces; i++) {
        check_trace(&ev->u.heap_dump.traces[i], "HEAP_DUMP");
      }
      break;
    case JVMPI_EVENT_MONITOR_DUMP:
      for (jint i = 0; i < ev->u.monitor_dump.num_traces; i++) {
        check_trace(&ev->u.monitor_dump.traces[i], "MONITOR_DUMP");
      }
      break;
    case JVMPI_EVENT_OBJECT_DUMP:
      object_dump_answer(ev);
      break;
    case JVMPI_EVENT_GC_START:
      gc_event(ev, 1);
      break;
    case JVMPI_EVENT_GC_FINISH:
      gc_event(ev, 0);
      break;
    case JVMPI_EVENT_JVM_INIT_DONE:
      init_done = 1;
      break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
      shut_down();
      break;
    default:
      break;
  }
}

/* retransform: hook(1) enables METHOD_ENTRY, hook(2) traces every live thread and dumps monitors.
 */
JNIEXPORT jlong JNICALL Java_jvmpitest_Agent_hook(JNIEnv* env, jclass cls, jint code, jlong arg,
                                                  jobject obj) {
  (void)env;
  (void)cls;
  (void)arg;
  (void)obj;
  if (strcmp(mode, "gc_times") == 0) {
    if (code == 1) return finishes_seen;
    if (code == 2) {
      jvmpi->RunGC();
      return 0;
    }
    return -1;
  }
  if (code >= 3) return sample_hook(code);
  if (code == 1) return jvmpi->EnableEvent(JVMPI_EVENT_METHOD_ENTRY, NULL);
  if (code != 2) return -1;
  JNIEnv* envs[MAX_THREADS];
  pthread_mutex_lock(&threads_lock);
  const int n = thread_count;
  memcpy(envs, thread_envs, sizeof(JNIEnv*) * (size_t)n);
  pthread_mutex_unlock(&threads_lock);
  for (int i = 0; i < n; i++) {
    if (threads_known(envs[i])) trace_thread(envs[i], "GetCallTrace");
  }
  const jint rc = jvmpi->RequestEvent(JVMPI_EVENT_MONITOR_DUMP, NULL);
  log_traces("hook");
  return rc;
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* vm, char* options, void* reserved) {
  (void)reserved;
  if (!tl_open(options)) return JNI_ERR;
  if (!opt_value(options, "mode", mode, sizeof mode)) return JNI_ERR;
  java_vm = vm;
  char chain_option[8];
  chain = opt_value(options, "chain", chain_option, sizeof chain_option) &&
          strcmp(chain_option, "1") == 0;
  char fetch_option[8];
  fetch = opt_value(options, "fetch", fetch_option, sizeof fetch_option) &&
          strcmp(fetch_option, "1") == 0;
  char monitors_option[8];
  monitors = opt_value(options, "monitors", monitors_option, sizeof monitors_option) &&
             strcmp(monitors_option, "1") == 0;
  char classdump_option[8];
  classdump = opt_value(options, "classdump", classdump_option, sizeof classdump_option) &&
              strcmp(classdump_option, "1") == 0;
  if ((*vm)->GetEnv(vm, (void**)&jvmpi, JVMPI_VERSION_1) != JNI_OK) return JNI_ERR;
  if (strcmp(mode, "sample_retransform") == 0 &&
      (*vm)->GetEnv(vm, (void**)&ext, JVMPI_EXT_VERSION_1) != JNI_OK) {
    return JNI_ERR;
  }
  jvmpi->NotifyEvent = notify_event;
  jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_THREAD_END, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
  if (strcmp(mode, "alloc_class") == 0) jvmpi->EnableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL);
  if (monitors) {
    /* Monitor profiling as such an agent has it, from the start (MONITOR_CONTENDED_EXIT is a
     * bytecode-inserted event). */
    static const jint monitor_events[] = {JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER,
                                          JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED,
                                          JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT,
                                          JVMPI_EVENT_MONITOR_CONTENDED_ENTER,
                                          JVMPI_EVENT_MONITOR_CONTENDED_ENTERED,
                                          JVMPI_EVENT_MONITOR_CONTENDED_EXIT,
                                          JVMPI_EVENT_MONITOR_WAIT,
                                          JVMPI_EVENT_MONITOR_WAITED};
    for (size_t i = 0; i < sizeof monitor_events / sizeof monitor_events[0]; i++) {
      jvmpi->EnableEvent(monitor_events[i], NULL);
    }
  }
  if (strcmp(mode, "gc_times") == 0) {
    data_lock = jvmpi->RawMonitorCreate("_hprof_data_access_lock");
    jvmpi->EnableEvent(JVMPI_EVENT_GC_START, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_GC_FINISH, NULL);
  }
  return JNI_OK;
}
