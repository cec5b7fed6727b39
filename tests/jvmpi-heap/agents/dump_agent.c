// SPDX-License-Identifier: Apache-2.0
/*
 * Dump agent: requests HEAP_DUMP (levels 0-2), OBJECT_DUMP and MONITOR_DUMP when the Java program
 * asks (natives of jvmpiheap.DumpAgent, below), and writes each dump's raw buffer to <base>.bin and
 * what a front end needs to read it to <base>.txt: the class table from CLASS_LOAD (names,
 * interface counts, static and instance field lists), the thread table from THREAD_START, the
 * dump's call traces and (monitor dump) thread status words, as described in heap_agent.h, plus
 *   level <n> / size <bytes> / status <env> <word> / rawmonitor <id> <name pointer> <name>
 *
 * It also sets up a raw-monitor scenario for the monitor dump: a system thread "raw-owner" holds
 * the JVMPI raw monitor "heaptest-raw" while a second one, "raw-waiter", is blocked entering it.
 */
#include <jni.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "heap_agent.h"

static JVMPI_Interface* jvmpi;
static char out_dir[512];
static char dump_base[1024]; /* where the next requested dump goes */
static int dump_written;

static JVMPI_RawMonitor raw_monitor;
static const char raw_monitor_name[] = "heaptest-raw";
static pthread_mutex_t scenario_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t scenario_cond = PTHREAD_COND_INITIALIZER;
static int owner_holds, waiter_contending, release_owner, owner_done, waiter_done;
static JNIEnv* waiter_env;

static FILE* open_side_file(void) {
  char path[1100];
  snprintf(path, sizeof path, "%s.txt", dump_base);
  return fopen(path, "w");
}

static void write_bin(const void* data, size_t len) {
  char path[1100];
  snprintf(path, sizeof path, "%s.bin", dump_base);
  write_bytes(path, data, len);
}

static void on_heap_dump(const JVMPI_Event* ev) {
  const char* begin = ev->u.heap_dump.begin;
  const char* end = ev->u.heap_dump.end;
  write_bin(begin, (size_t)(end - begin));
  FILE* f = open_side_file();
  if (f == NULL) return;
  fprintf(f, "level %d\nsize %lld\n", ev->u.heap_dump.dump_level, (long long)(end - begin));
  tables_write_classes(f);
  tables_write_threads(f);
  write_traces(f, ev->u.heap_dump.num_traces, ev->u.heap_dump.traces);
  fclose(f);
  dump_written = 1;
}

static void on_object_dump(const JVMPI_Event* ev) {
  write_bin(ev->u.object_dump.data, (size_t)ev->u.object_dump.data_len);
  FILE* f = open_side_file();
  if (f == NULL) return;
  fprintf(f, "size %d\n", ev->u.object_dump.data_len);
  tables_write_classes(f);
  tables_write_threads(f);
  fclose(f);
  dump_written = 1;
}

static void on_monitor_dump(const JVMPI_Event* ev) {
  const char* begin = ev->u.monitor_dump.begin;
  const char* end = ev->u.monitor_dump.end;
  write_bin(begin, (size_t)(end - begin));
  FILE* f = open_side_file();
  if (f == NULL) return;
  fprintf(f, "size %lld\n", (long long)(end - begin));
  fprintf(f, "rawmonitor 0x%llx 0x%llx %s\n", PTR(raw_monitor), PTR(raw_monitor_name),
          raw_monitor_name);
  /* Raw monitor names are pointers only valid in this process: resolve them here. */
  for (const char* p = begin; p < end;) {
    const unsigned char type = (unsigned char)*p++;
    if (type == JVMPI_MONITOR_RAW) {
      const char* name;
      memcpy(&name, p, sizeof name);
      fprintf(f, "rawname_0x%llx %s\n", PTR(name), name != NULL ? name : "(null)");
      p += sizeof(char*) + sizeof(JVMPI_RawMonitor);
    } else if (type == JVMPI_MONITOR_JAVA) {
      p += sizeof(jobjectID);
    } else {
      break;
    }
    p += sizeof(JNIEnv*) + 4; /* owner, entry count */
    for (int list = 0; list < 2 && p + 4 <= end; list++) {
      const unsigned char* u = (const unsigned char*)p;
      const unsigned n =
          ((unsigned)u[0] << 24) | ((unsigned)u[1] << 16) | ((unsigned)u[2] << 8) | u[3];
      p += 4 + (size_t)n * sizeof(JNIEnv*);
    }
  }
  tables_write_threads(f);
  write_traces(f, ev->u.monitor_dump.num_traces, ev->u.monitor_dump.traces);
  for (int i = 0; i < ev->u.monitor_dump.num_traces; i++) {
    fprintf(f, "status_of_0x%llx %d\n", PTR(ev->u.monitor_dump.traces[i].env_id),
            ev->u.monitor_dump.threads_status != NULL ? ev->u.monitor_dump.threads_status[i] : -1);
  }
  fclose(f);
  dump_written = 1;
}

static void notify(JVMPI_Event* ev) {
  switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
      tables_add_class(ev);
      break;
    case JVMPI_EVENT_THREAD_START:
      tables_add_thread(ev->u.thread_start.thread_env_id, ev->u.thread_start.thread_name);
      break;
    case JVMPI_EVENT_HEAP_DUMP:
      on_heap_dump(ev);
      break;
    case JVMPI_EVENT_OBJECT_DUMP:
      on_object_dump(ev);
      break;
    case JVMPI_EVENT_MONITOR_DUMP:
      on_monitor_dump(ev);
      break;
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER:
      if (ev->u.raw_monitor.id == raw_monitor && raw_monitor != NULL) {
        pthread_mutex_lock(&scenario_lock);
        waiter_contending = 1;
        waiter_env = ev->env_id;
        pthread_cond_broadcast(&scenario_cond);
        pthread_mutex_unlock(&scenario_lock);
      }
      break;
    default:
      break;
  }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* vm, char* options, void* reserved) {
  (void)reserved;
  jvmpi = get_jvmpi(vm);
  if (jvmpi == NULL || !opt_value(options, "out", out_dir, sizeof out_dir)) return JNI_ERR;
  tables_init();
  jvmpi->NotifyEvent = notify;
  jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER, NULL);
  return JNI_OK;
}

/* ---- natives of jvmpiheap.DumpAgent ---- */

static void set_base(JNIEnv* env, jstring base) {
  const char* s = (*env)->GetStringUTFChars(env, base, NULL);
  snprintf(dump_base, sizeof dump_base, "%s", s);
  (*env)->ReleaseStringUTFChars(env, base, s);
  dump_written = 0;
}

JNIEXPORT jlong JNICALL Java_jvmpiheap_DumpAgent_idOf(JNIEnv* env, jclass cls, jobject o) {
  (void)env;
  (void)cls;
  jvmpi->DisableGC();
  const jobjectID id = jvmpi->jobject2jobjectID(o);
  jvmpi->EnableGC();
  return (jlong)(uintptr_t)id;
}

/* RequestEvent's result, or -100 when it succeeded but no dump arrived. */
JNIEXPORT jint JNICALL Java_jvmpiheap_DumpAgent_heapDump(JNIEnv* env, jclass cls, jint level,
                                                         jstring base) {
  (void)cls;
  set_base(env, base);
  JVMPI_HeapDumpArg arg;
  arg.heap_dump_level = level;
  const jint rc = jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &arg);
  return rc == JVMPI_SUCCESS && !dump_written ? -100 : rc;
}

JNIEXPORT jint JNICALL Java_jvmpiheap_DumpAgent_objectDump(JNIEnv* env, jclass cls, jobject o,
                                                           jstring base) {
  (void)cls;
  set_base(env, base);
  jvmpi->DisableGC();
  const jobjectID id = jvmpi->jobject2jobjectID(o);
  const jint rc = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_DUMP, id);
  jvmpi->EnableGC();
  return rc == JVMPI_SUCCESS && !dump_written ? -100 : rc;
}

JNIEXPORT jint JNICALL Java_jvmpiheap_DumpAgent_monitorDump(JNIEnv* env, jclass cls, jstring base) {
  (void)cls;
  set_base(env, base);
  const jint rc = jvmpi->RequestEvent(JVMPI_EVENT_MONITOR_DUMP, NULL);
  return rc == JVMPI_SUCCESS && !dump_written ? -100 : rc;
}

static void raw_owner_main(void* arg) {
  (void)arg;
  jvmpi->RawMonitorEnter(raw_monitor);
  pthread_mutex_lock(&scenario_lock);
  owner_holds = 1;
  pthread_cond_broadcast(&scenario_cond);
  while (!release_owner) pthread_cond_wait(&scenario_cond, &scenario_lock);
  pthread_mutex_unlock(&scenario_lock);
  jvmpi->RawMonitorExit(raw_monitor);
  pthread_mutex_lock(&scenario_lock);
  owner_done = 1;
  pthread_cond_broadcast(&scenario_cond);
  pthread_mutex_unlock(&scenario_lock);
}

static void raw_waiter_main(void* arg) {
  (void)arg;
  jvmpi->RawMonitorEnter(raw_monitor); /* blocks while raw-owner holds it */
  jvmpi->RawMonitorExit(raw_monitor);
  pthread_mutex_lock(&scenario_lock);
  waiter_done = 1;
  pthread_cond_broadcast(&scenario_cond);
  pthread_mutex_unlock(&scenario_lock);
}

/* Waits for a scenario flag, at most 20 s; 1 when it was set. */
static int await_flag(volatile int* flag) {
  const long long deadline = now_ms() + 20000;
  pthread_mutex_lock(&scenario_lock);
  while (!*flag && now_ms() < deadline) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 50 * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&scenario_cond, &scenario_lock, &ts);
  }
  const int set = *flag;
  pthread_mutex_unlock(&scenario_lock);
  return set;
}

/* Starts the raw-monitor scenario; returns the raw monitor's ID, or 0 on failure. */
JNIEXPORT jlong JNICALL Java_jvmpiheap_DumpAgent_startRawScenario(JNIEnv* env, jclass cls) {
  (void)env;
  (void)cls;
  raw_monitor = jvmpi->RawMonitorCreate((char*)raw_monitor_name);
  if (raw_monitor == NULL) return 0;
  if (jvmpi->CreateSystemThread("raw-owner", JVMPI_NORMAL_PRIORITY, raw_owner_main) != JNI_OK) {
    return 0;
  }
  if (!await_flag(&owner_holds)) return 0;
  if (jvmpi->CreateSystemThread("raw-waiter", JVMPI_NORMAL_PRIORITY, raw_waiter_main) != JNI_OK) {
    return 0;
  }
  /* RAW_MONITOR_CONTENDED_ENTER: the waiter is about to block on the monitor. */
  if (!await_flag(&waiter_contending)) return 0;
  return (jlong)(uintptr_t)raw_monitor;
}

/* Lets raw-owner leave the monitor; returns 1 once both agent threads are through. */
JNIEXPORT jint JNICALL Java_jvmpiheap_DumpAgent_endRawScenario(JNIEnv* env, jclass cls) {
  (void)env;
  (void)cls;
  pthread_mutex_lock(&scenario_lock);
  release_owner = 1;
  pthread_cond_broadcast(&scenario_cond);
  pthread_mutex_unlock(&scenario_lock);
  return await_flag(&owner_done) && await_flag(&waiter_done);
}
