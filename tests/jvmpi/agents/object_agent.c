// SPDX-License-Identifier: Apache-2.0
/*
 * Object events and dumps (runtime part 2): OBJECT_ALLOC of a known class on a known thread,
 * ARENA_NEW, OBJECT_FREE of those objects after they die, JNI global and weak global reference
 * events, and the request-only OBJECT_DUMP, HEAP_DUMP (level 0) and MONITOR_DUMP, whose buffers are
 * parsed here as a 1.2-era front end would (u2/u4/u8 big-endian, IDs native).
 *
 * Hooks: 1 = OBJECT_DUMP of the object passed; 2 = HEAP_DUMP level 0; 3 = MONITOR_DUMP (the object
 * passed is the monitor of interest); 4 = number of tracked objects freed so far; 5 = request
 * OBJECT_ALLOC for the last freed one; 9 = log the object's ID (arg labels it). At JVM_SHUT_DOWN
 * it requests a last HEAP_DUMP (level 0).
 */
#include <jvmpi_ext.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_common.h"

#define TRACKED_CLASS "jvmpitest.ObjectProgram$Tracked"
#define MAX_TRACKED 256
#define MAX_FIELDS 16

static JVMPI_Interface* jvmpi;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile jobjectID tracked_class;
static struct {
  char name[64];
  char sig[64];
} tracked_fields[MAX_FIELDS];
static int tracked_field_count;
static jobjectID tracked[MAX_TRACKED];
static int tracked_count;
static volatile int freed_count;
static jobjectID volatile last_freed;
static volatile int shutting_down;
static int arena_seen, alloc_before_arena;

/* Threads whose allocations arrived before their THREAD_START. */
#define MAX_EARLY 64
static struct {
  JNIEnv* env;
  long allocs;
} early[MAX_EARLY];
static int init_done;

static void note_unknown_thread(JNIEnv* env) {
  pthread_mutex_lock(&lock);
  for (int i = 0; i < MAX_EARLY; i++) {
    if (early[i].env == env || early[i].env == NULL) {
      early[i].env = env;
      early[i].allocs++;
      break;
    }
  }
  pthread_mutex_unlock(&lock);
}

static long take_early_allocs(JNIEnv* env) {
  long n = 0;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < MAX_EARLY; i++) {
    if (early[i].env == env) {
      n = early[i].allocs;
      early[i].env = NULL;
      early[i].allocs = 0;
    }
  }
  pthread_mutex_unlock(&lock);
  return n;
}

static int is_tracked(jobjectID id) {
  for (int i = 0; i < tracked_count; i++) {
    if (tracked[i] == id) return 1;
  }
  return 0;
}

static uint32_t u4(const unsigned char* p) {
  return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static uint64_t u8(const unsigned char* p) {
  return ((uint64_t)u4(p) << 32) | u4(p + 4);
}

static void* id_at(const unsigned char* p) {
  void* v;
  memcpy(&v, p, sizeof v);
  return v;
}

static void object_alloc(JVMPI_Event* ev) {
  char thread[128];
  jobjectID cls = ev->u.obj_alloc.class_id;
  threads_name(ev->env_id, thread, sizeof thread);
  if (ev->env_id != NULL && strcmp(thread, "?") == 0) note_unknown_thread(ev->env_id);
  if (!arena_seen && alloc_before_arena++ < 3) {
    tl_log(
        "OA_BEFORE_ARENA	thread=%s	env=0x%llx	class_id=0x%llx	is_array=%d	"
        "size=%d",
        thread, PTR(ev->env_id), PTR(cls), (int)ev->u.obj_alloc.is_array,
        (int)ev->u.obj_alloc.size);
  }
  if (tracked_class == NULL || cls != tracked_class) return;
  if (ev->u.obj_alloc.is_array == JVMPI_NORMAL_OBJECT) {
    pthread_mutex_lock(&lock);
    if (tracked_count < MAX_TRACKED) tracked[tracked_count++] = ev->u.obj_alloc.obj_id;
    pthread_mutex_unlock(&lock);
  }
  tl_log("OA\tthread=%s\tis_array=%d\tsize=%d\tarena=%d\tobj=0x%llx\trequested=%d", thread,
         (int)ev->u.obj_alloc.is_array, (int)ev->u.obj_alloc.size, (int)ev->u.obj_alloc.arena_id,
         PTR(ev->u.obj_alloc.obj_id), (ev->event_type & JVMPI_REQUESTED_EVENT) != 0);
}

/* Primitive arrays carry no class: log those of the allocator thread by type and size. */
static void primitive_array_alloc(JVMPI_Event* ev) {
  char thread[128];
  if (ev->u.obj_alloc.is_array != JVMPI_LONG) return;
  threads_name(ev->env_id, thread, sizeof thread);
  if (strcmp(thread, "jvmpitest-allocator") != 0) return;
  tl_log("OA_PRIM\tis_array=%d\tsize=%d\tclass_id=0x%llx", (int)ev->u.obj_alloc.is_array,
         (int)ev->u.obj_alloc.size, PTR(ev->u.obj_alloc.class_id));
}

static void object_free(JVMPI_Event* ev) {
  int hit;
  pthread_mutex_lock(&lock);
  hit = is_tracked(ev->u.obj_free.obj_id);
  pthread_mutex_unlock(&lock);
  if (hit) {
    last_freed = ev->u.obj_free.obj_id;
    freed_count++;
    tl_log("OF\tobj=0x%llx", PTR(ev->u.obj_free.obj_id));
  }
}

static void object_dump(JVMPI_Event* ev) {
  const unsigned char* d = (const unsigned char*)ev->u.object_dump.data;
  int len = ev->u.object_dump.data_len;
  if (d == NULL || len < 1) {
    tl_log("OBJDUMP\tlen=%d\tdata=0x%llx", len, PTR(d));
    return;
  }
  if (d[0] != JVMPI_GC_INSTANCE_DUMP || len < 21) {
    tl_log("OBJDUMP\tlen=%d\ttype=0x%x", len, d[0]);
    return;
  }
  uint32_t count = u4(d + 17);
  tl_log("OBJDUMP\tlen=%d\ttype=0x%x\tobj=0x%llx\tclass=0x%llx\tbytes=%u\trequested=%d", len, d[0],
         PTR(id_at(d + 1)), PTR(id_at(d + 9)), count,
         (ev->event_type & JVMPI_REQUESTED_EVENT) != 0);
  const unsigned char* p = d + 21;
  const unsigned char* end = d + 21 + count;
  for (int i = 0; i < tracked_field_count && p < end; i++) {
    char sig = tracked_fields[i].sig[0];
    if (sig == 'I') {
      tl_log("DUMPFIELD\tname=%s\tvalue=%d", tracked_fields[i].name, (int)(int32_t)u4(p));
      p += 4;
    } else if (sig == 'J') {
      tl_log("DUMPFIELD\tname=%s\tvalue=%lld", tracked_fields[i].name, (long long)(int64_t)u8(p));
      p += 8;
    } else if (sig == 'L' || sig == '[') {
      tl_log("DUMPFIELD\tname=%s\tvalue=0x%llx", tracked_fields[i].name, PTR(id_at(p)));
      p += sizeof(void*);
    } else {
      tl_log("DUMPFIELD\tname=%s\tunexpected_sig=%s", tracked_fields[i].name,
             tracked_fields[i].sig);
      return;
    }
  }
  tl_log("OBJDUMP_END\tconsumed=%ld", (long)(p - (d + 21)));
}

/* The streamed dump against the one-buffer HEAP_DUMP, at each level, on the same (quiet) heap:
 * the one-buffer dump is copied here while `capture` is set, the stream is collected in chunks
 * of the smallest size the runtime accepts (so the dump spans many of them). */
static JVMPI_ExtInterface* ext;
static int capture;
static unsigned char *captured, *streamed;
static size_t captured_len, streamed_len, streamed_cap;
static long chunks, chunks_whole, class_calls, finished_calls;

/* A class loaded while a streamed dump is prepared, too late for the runtime to learn it before the
 * walk: the stream's first class call defines LATE_FIRST (learnt just before the walk, which calls
 * again), that second call defines LATE_SECOND, which the walk meets unlearnt. This agent's
 * CLASS_LOAD of it then makes an object (an int[] of SEED_* values under a global reference), as
 * learning a class makes objects the walk could not see; the streamed dump must hold it. */
#define LATE_FIRST "JvmpiTestLateFirst"
#define LATE_SECOND "JvmpiTestLateSecond"
#define SEED_0 0x5EED0001
static JNIEnv* late_env;
static int late_stage; /* 1: define LATE_FIRST next, 2: LATE_SECOND next, 3: done */
static jobject late_seed;
static int late_defined;

static void define_empty_class(JNIEnv* env, const char* name) {
  /* public class <name> extends java.lang.Object {} (class file version 52) */
  unsigned char b[256];
  size_t n = 0, len = strlen(name);
  const unsigned char head[] = {0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 52, 0, 5, 1};
  memcpy(b, head, sizeof head);
  n = sizeof head;
  b[n++] = (unsigned char)(len >> 8);
  b[n++] = (unsigned char)len;
  memcpy(b + n, name, len);
  n += len;
  const unsigned char rest[] = {7,    0,   1,   1,   0,   16,  'j', 'a', 'v', 'a', '/', 'l', 'a',
                                'n',  'g', '/', 'O', 'b', 'j', 'e', 'c', 't', 7,   0,   3,   0,
                                0x21, 0,   2,   0,   4,   0,   0,   0,   0,   0,   0,   0,   0};
  memcpy(b + n, rest, sizeof rest);
  n += sizeof rest;
  jclass k = (*env)->DefineClass(env, name, NULL, (const jbyte*)b, (jsize)n);
  if (k == NULL) {
    (*env)->ExceptionClear(env);
    tl_log("LATE_DEFINE_FAILED	name=%s", name);
    return;
  }
  late_defined++;
  (*env)->DeleteLocalRef(env, k);
}

static void JNICALL stream_classes(void* arg, const JVMPIExt_DumpClass* c, jint n) {
  (void)arg;
  (void)c;
  if (n > 0 && late_stage == 0) class_calls++;
  if (late_stage == 1) {
    late_stage = 2;
    define_empty_class(late_env, LATE_FIRST);
  } else if (late_stage == 2) {
    late_stage = 3;
    define_empty_class(late_env, LATE_SECOND);
  }
}

static jboolean JNICALL stream_chunk(void* arg, const char* begin, const char* end) {
  (void)arg;
  const size_t n = (size_t)(end - begin);
  if (streamed_len + n > streamed_cap) {
    streamed_cap = (streamed_len + n) * 2;
    streamed = realloc(streamed, streamed_cap);
  }
  memcpy(streamed + streamed_len, begin, n);
  streamed_len += n;
  chunks++;
  if (n <= (64u << 10) + (1u << 20)) chunks_whole++; /* a chunk plus at most one record */
  return JNI_TRUE;
}

static void JNICALL stream_finished(void* arg, jint num_traces, JVMPI_CallTrace* traces) {
  (void)arg;
  (void)num_traces;
  (void)traces;
  finished_calls++;
}

static void compare_stream(jint level) {
  JVMPI_HeapDumpArg arg = {level};
  captured_len = streamed_len = 0;
  chunks = chunks_whole = class_calls = finished_calls = 0;
  capture = 1;
  const jint rc_buffer = jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &arg);
  capture = 0;
  JVMPIExt_HeapDumpSink sink = {NULL, stream_classes, stream_chunk, stream_finished};
  const jint rc_stream = ext->StreamHeapDump(level, 64 << 10, &sink);
  long first_diff = -1;
  for (size_t i = 0; i < captured_len && i < streamed_len; i++) {
    if (captured[i] != streamed[i]) {
      first_diff = (long)i;
      break;
    }
  }
  tl_log(
      "STREAMCMP\tlevel=%d\trc_buffer=%d\trc_stream=%d\tbuffer_bytes=%ld\tstream_bytes=%ld\t"
      "chunks=%ld\tchunks_bounded=%ld\tclass_calls=%ld\tfinished=%ld\tfirst_diff=%ld",
      (int)level, (int)rc_buffer, (int)rc_stream, (long)captured_len, (long)streamed_len, chunks,
      chunks_whole, class_calls, finished_calls, first_diff);
}

/* A streamed level-2 dump while classes are loaded late: is the seed array in it? */
static void stream_with_late_class(JNIEnv* env) {
  streamed_len = 0;
  late_env = env;
  late_stage = 1;
  JVMPIExt_HeapDumpSink sink = {NULL, stream_classes, stream_chunk, stream_finished};
  const jint rc = ext->StreamHeapDump(JVMPI_DUMP_LEVEL_2, 64 << 10, &sink);
  /* PRIM_ARRAY_DUMP: ... u4 count = 3, u1 JVMPI_INT, then the values big-endian. */
  unsigned char want[5 + 12] = {0, 0, 0, 3, JVMPI_INT};
  for (int i = 0; i < 3; i++) {
    const uint32_t v = SEED_0 + (uint32_t)i;
    for (int k = 0; k < 4; k++) want[5 + 4 * i + k] = (unsigned char)(v >> (24 - 8 * k));
  }
  int found = 0;
  for (size_t i = 0; i + sizeof want <= streamed_len && !found; i++) {
    found = memcmp(streamed + i, want, sizeof want) == 0;
  }
  tl_log("STREAMLATE	rc=%d	defined=%d	seed_made=%d	seed_in_dump=%d", (int)rc,
         late_defined, late_seed != NULL, found);
  /* The seed's global reference is kept: deleted, its slot could come back as the program's own
   * global reference, which the JNI reference test tells apart by value. */
  late_stage = 0;
}

static void heap_dump(JVMPI_Event* ev) {
  if (capture) {
    captured_len = (size_t)(ev->u.heap_dump.end - ev->u.heap_dump.begin);
    captured = realloc(captured, captured_len + 1);
    memcpy(captured, ev->u.heap_dump.begin, captured_len);
    return;
  }
  const unsigned char* p = (const unsigned char*)ev->u.heap_dump.begin;
  const unsigned char* end = (const unsigned char*)ev->u.heap_dump.end;
  long records = 0, found = 0, types_ok = 1;
  pthread_mutex_lock(&lock);
  while (p != NULL && p + 1 + sizeof(void*) <= end) {
    jobjectID id = id_at(p + 1);
    if (is_tracked(id)) {
      found++;
      if (p[0] != JVMPI_NORMAL_OBJECT) types_ok = 0;
    }
    records++;
    p += 1 + sizeof(void*);
  }
  pthread_mutex_unlock(&lock);
  tl_log(
      "HEAPDUMP\tlevel=%d\trecords=%ld\ttracked_found=%ld\ttracked_types_ok=%ld\tleftover=%ld\t"
      "at_shutdown=%d",
      ev->u.heap_dump.dump_level, records, found, types_ok, p != NULL ? (long)(end - p) : -1L,
      (int)shutting_down);
}

/* Reads a list of JNIEnv* into "name,name". */
static const unsigned char* env_list(const unsigned char* p, char* out, size_t len) {
  uint32_t n = u4(p);
  p += 4;
  out[0] = '\0';
  for (uint32_t i = 0; i < n; i++) {
    char name[128];
    threads_name((JNIEnv*)id_at(p), name, sizeof name);
    p += sizeof(void*);
    if (strlen(out) + strlen(name) + 2 < len) {
      if (i > 0) strcat(out, ",");
      strcat(out, name);
    }
  }
  return p;
}

static jobjectID monitor_of_interest;

static void monitor_dump(JVMPI_Event* ev) {
  const unsigned char* p = (const unsigned char*)ev->u.monitor_dump.begin;
  const unsigned char* end = (const unsigned char*)ev->u.monitor_dump.end;
  long java = 0, raw = 0;
  tl_log("MONDUMP\tnum_traces=%d\tstatus_null=%d", (int)ev->u.monitor_dump.num_traces,
         ev->u.monitor_dump.threads_status == NULL);
  while (p != NULL && p < end) {
    char owner[128], enter[512], notify[512];
    int type = *p++;
    if (type == JVMPI_MONITOR_JAVA) {
      jobjectID obj = id_at(p);
      threads_name((JNIEnv*)id_at(p + sizeof(void*)), owner, sizeof owner);
      uint32_t entries = u4(p + 2 * sizeof(void*));
      p = env_list(p + 2 * sizeof(void*) + 4, enter, sizeof enter);
      p = env_list(p, notify, sizeof notify);
      java++;
      if (obj == monitor_of_interest) {
        tl_log("MONDUMP_JAVA\towner=%s\tentries=%u\tenter=%s\tnotify=%s", owner, entries, enter,
               notify);
      }
    } else if (type == JVMPI_MONITOR_RAW) {
      const char* name = id_at(p);
      threads_name((JNIEnv*)id_at(p + 2 * sizeof(void*)), owner, sizeof owner);
      uint32_t entries = u4(p + 3 * sizeof(void*));
      p = env_list(p + 3 * sizeof(void*) + 4, enter, sizeof enter);
      p = env_list(p, notify, sizeof notify);
      raw++;
      tl_log("MONDUMP_RAW\tname=%s\towner=%s\tentries=%u", name ? name : "(null)", owner, entries);
    } else {
      tl_log("MONDUMP_BAD_TYPE\ttype=%d", type);
      return;
    }
  }
  tl_log("MONDUMP_END\tjava=%ld\traw=%ld\tleftover=%ld", java, raw,
         p != NULL ? (long)(end - p) : -1L);
}

static void notify_event(JVMPI_Event* ev) {
  switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_THREAD_START: {
      long allocs = take_early_allocs(ev->u.thread_start.thread_env_id);
      threads_add(ev->u.thread_start.thread_env_id, ev->u.thread_start.thread_name);
      tl_log("TS\tname=%s\tallocs_before=%ld\tinit_done=%d", ev->u.thread_start.thread_name, allocs,
             init_done);
      break;
    }
    case JVMPI_EVENT_JVM_INIT_DONE:
      init_done = 1;
      tl_log("INIT_DONE");
      break;
    case JVMPI_EVENT_JVM_SHUT_DOWN: {
      /* A last heap dump at shut-down, as HPROF does. */
      JVMPI_HeapDumpArg level0 = {JVMPI_DUMP_LEVEL_0};
      shutting_down = 1;
      tl_log("SHUT_DOWN_REQUEST\trc=%d", (int)jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &level0));
      break;
    }
    case JVMPI_EVENT_CLASS_LOAD:
      if (strcmp(ev->u.class_load.class_name, LATE_SECOND) == 0 && late_seed == NULL) {
        JNIEnv* env = ev->env_id;
        jintArray seed = (*env)->NewIntArray(env, 3);
        if (seed != NULL) {
          const jint values[3] = {SEED_0, SEED_0 + 1, SEED_0 + 2};
          (*env)->SetIntArrayRegion(env, seed, 0, 3, values);
          late_seed = (*env)->NewGlobalRef(env, seed);
          (*env)->DeleteLocalRef(env, seed);
        }
      }
      if (strcmp(ev->u.class_load.class_name, TRACKED_CLASS) == 0) {
        for (int i = 0; i < ev->u.class_load.num_instance_fields && i < MAX_FIELDS; i++) {
          snprintf(tracked_fields[i].name, sizeof tracked_fields[i].name, "%s",
                   ev->u.class_load.instances[i].field_name);
          snprintf(tracked_fields[i].sig, sizeof tracked_fields[i].sig, "%s",
                   ev->u.class_load.instances[i].field_signature);
        }
        tracked_field_count = ev->u.class_load.num_instance_fields;
        tracked_class = ev->u.class_load.class_id;
        tl_log("TRACKED_CLASS\tid=0x%llx", PTR(tracked_class));
      }
      break;
    case JVMPI_EVENT_ARENA_NEW:
      arena_seen++;
      tl_log("ARENA_NEW\tid=%d\tname=%s\tallocs_before=%d", (int)ev->u.new_arena.arena_id,
             ev->u.new_arena.arena_name ? ev->u.new_arena.arena_name : "(null)",
             alloc_before_arena);
      break;
    case JVMPI_EVENT_OBJECT_ALLOC:
      object_alloc(ev);
      primitive_array_alloc(ev);
      break;
    case JVMPI_EVENT_OBJECT_FREE:
      object_free(ev);
      break;
    case JVMPI_EVENT_GC_START:
      tl_log("GC_START");
      break;
    case JVMPI_EVENT_GC_FINISH:
      tl_log("GC_FINISH");
      break;
    case JVMPI_EVENT_JNI_GLOBALREF_ALLOC:
      tl_log("GREF_ALLOC\tobj=0x%llx\tref=0x%llx", PTR(ev->u.jni_globalref_alloc.obj_id),
             PTR(ev->u.jni_globalref_alloc.ref_id));
      break;
    case JVMPI_EVENT_JNI_GLOBALREF_FREE:
      tl_log("GREF_FREE\tref=0x%llx", PTR(ev->u.jni_globalref_free.ref_id));
      break;
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC:
      tl_log("WREF_ALLOC\tobj=0x%llx\tref=0x%llx", PTR(ev->u.jni_globalref_alloc.obj_id),
             PTR(ev->u.jni_globalref_alloc.ref_id));
      break;
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE:
      tl_log("WREF_FREE\tref=0x%llx", PTR(ev->u.jni_globalref_free.ref_id));
      break;
    case JVMPI_EVENT_OBJECT_DUMP:
      object_dump(ev);
      break;
    case JVMPI_EVENT_HEAP_DUMP:
      heap_dump(ev);
      break;
    case JVMPI_EVENT_MONITOR_DUMP:
      monitor_dump(ev);
      break;
    default:
      break;
  }
}

JNIEXPORT jlong JNICALL Java_jvmpitest_Agent_hook(JNIEnv* env, jclass cls, jint code, jlong arg,
                                                  jobject obj) {
  (void)cls;
  jint rc = -1;
  jvmpi->DisableGC();
  jobjectID id = obj != NULL ? jvmpi->jobject2jobjectID(obj) : NULL;
  if (code == 1) {
    rc = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_DUMP, id);
    tl_log("REQUEST\twhat=object_dump\trc=%d\tobj=0x%llx", (int)rc, PTR(id));
  } else if (code == 2) {
    JVMPI_HeapDumpArg level0 = {JVMPI_DUMP_LEVEL_0};
    rc = jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &level0);
    tl_log("REQUEST\twhat=heap_dump\trc=%d", (int)rc);
    if (ext != NULL && JVMPI_EXT_HAS(ext, StreamHeapDump)) {
      for (jint level = JVMPI_DUMP_LEVEL_0; level <= JVMPI_DUMP_LEVEL_2; level++) {
        compare_stream(level);
      }
      stream_with_late_class(env);
    }
  } else if (code == 3) {
    monitor_of_interest = id;
    rc = jvmpi->RequestEvent(JVMPI_EVENT_MONITOR_DUMP, NULL);
    tl_log("REQUEST\twhat=monitor_dump\trc=%d", (int)rc);
  } else if (code == 4) {
    rc = freed_count;
  } else if (code == 5) {
    /* The ID of a freed object names nothing any more. */
    rc = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, last_freed);
    tl_log("REQUEST\twhat=freed_alloc\trc=%d\tobj=0x%llx", (int)rc, PTR(last_freed));
  } else if (code == 9) {
    tl_log("OBJID\twhat=%lld\tid=0x%llx", (long long)arg, PTR(id));
    rc = 0;
  }
  jvmpi->EnableGC();
  return rc;
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* jvm, char* options, void* reserved) {
  (void)reserved;
  if (!tl_open(options)) return JNI_ERR;
  if ((*jvm)->GetEnv(jvm, (void**)&jvmpi, JVMPI_VERSION_1_1) != JNI_OK) return JNI_ERR;
  if ((*jvm)->GetEnv(jvm, (void**)&ext, JVMPI_EXT_VERSION_1) != JNI_OK) ext = NULL;
  jvmpi->NotifyEvent = notify_event;
  jint events[] = {JVMPI_EVENT_THREAD_START,
                   JVMPI_EVENT_JVM_INIT_DONE,
                   JVMPI_EVENT_JVM_SHUT_DOWN,
                   JVMPI_EVENT_CLASS_LOAD,
                   JVMPI_EVENT_ARENA_NEW,
                   JVMPI_EVENT_OBJECT_ALLOC,
                   JVMPI_EVENT_OBJECT_FREE,
                   JVMPI_EVENT_OBJECT_MOVE,
                   JVMPI_EVENT_GC_START,
                   JVMPI_EVENT_GC_FINISH,
                   JVMPI_EVENT_JNI_GLOBALREF_ALLOC,
                   JVMPI_EVENT_JNI_GLOBALREF_FREE,
                   JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC,
                   JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE};
  for (size_t i = 0; i < sizeof events / sizeof events[0]; i++) {
    tl_log("ENABLE\tevent=%d\trc=%d", (int)events[i], (int)jvmpi->EnableEvent(events[i], NULL));
  }
  return JNI_OK;
}
