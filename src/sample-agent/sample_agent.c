/*
 * A sample JVMPI agent, written in plain C against jvmpi.h the way agents of the JDK 1.2 era were.
 *
 * It listens to the thread, class, monitor and GC events, samples the running threads every 10 ms
 * from a system thread (SuspendThread, ThreadHasRun, GetCallTrace), and at JVM_SHUT_DOWN writes
 * what it observed: event counts, threads, the hottest methods and the contended monitors.
 *
 * Options: file=<path> (default: standard error), interval=<ms> (default 10).
 */
#include <jvmpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 256
#define METHOD_SLOTS 65536 /* power of two */
#define MAX_FRAMES 1

static JVMPI_Interface* jvmpi;
static JVMPI_RawMonitor lock;
static FILE* out;
static int interval_ms = 10;
static volatile int shutting_down;

static long event_counts[JVMPI_MAX_EVENT_TYPE_VAL + 1];
static long classes_loaded;
static long gc_count;
static jlong last_used_space, last_total_space, last_used_objects;

struct thread_entry {
  JNIEnv* env;
  char name[64];
  int alive;
  long samples;
};
static struct thread_entry threads[MAX_THREADS];
static int thread_count;

struct method_entry {
  jmethodID id;
  char* name; /* "Class.method" */
  long samples;
};
static struct method_entry methods[METHOD_SLOTS];
static long total_samples;

static struct method_entry* method_slot(jmethodID id) {
  size_t h = ((size_t)id >> 3) * 2654435761u;
  for (size_t i = 0; i < METHOD_SLOTS; i++) {
    struct method_entry* e = &methods[(h + i) & (METHOD_SLOTS - 1)];
    if (e->id == id || e->id == NULL) return e;
  }
  return NULL;
}

static void remember_class(JVMPI_Event* ev) {
  classes_loaded++;
  for (int i = 0; i < ev->u.class_load.num_methods; i++) {
    JVMPI_Method* m = &ev->u.class_load.methods[i];
    struct method_entry* e = method_slot(m->method_id);
    if (e == NULL || e->id != NULL) continue;
    size_t len = strlen(ev->u.class_load.class_name) + strlen(m->method_name) + 2;
    e->name = malloc(len);
    if (e->name == NULL) return;
    snprintf(e->name, len, "%s.%s", ev->u.class_load.class_name, m->method_name);
    e->id = m->method_id;
  }
}

static struct thread_entry* find_thread(JNIEnv* env) {
  for (int i = 0; i < thread_count; i++) {
    if (threads[i].env == env && threads[i].alive) return &threads[i];
  }
  return NULL;
}

/* The sampler: every interval, suspend each live application thread, and if it ran since the
 * previous sample, charge its top frame. */
static void sampler(void* unused) {
  JNIEnv* envs[MAX_THREADS];
  struct thread_entry* entries[MAX_THREADS];
  JVMPI_CallFrame frames[MAX_FRAMES];
  JNIEnv* self = NULL;
  (void)unused;
  while (!shutting_down) {
    int n = 0;
    jvmpi->RawMonitorEnter(lock);
    jvmpi->RawMonitorWait(lock, interval_ms);
    if (shutting_down) {
      jvmpi->RawMonitorExit(lock);
      break;
    }
    for (int i = 0; i < thread_count; i++) {
      if (threads[i].alive && threads[i].env != self && strcmp(threads[i].name, "sampler") != 0) {
        envs[n] = threads[i].env;
        entries[n++] = &threads[i];
      }
    }
    for (int i = 0; i < n; i++) {
      JVMPI_CallTrace trace;
      jvmpi->SuspendThread(envs[i]);
      if (jvmpi->ThreadHasRun(envs[i])) {
        trace.env_id = envs[i];
        trace.frames = frames;
        trace.num_frames = 0;
        jvmpi->GetCallTrace(&trace, MAX_FRAMES);
        if (trace.num_frames > 0) {
          struct method_entry* e = method_slot(frames[0].method_id);
          if (e != NULL && e->id != NULL) e->samples++;
          entries[i]->samples++;
          total_samples++;
        }
      }
      jvmpi->ResumeThread(envs[i]);
    }
    jvmpi->RawMonitorExit(lock);
  }
}

static int by_samples(const void* a, const void* b) {
  long sa = (*(struct method_entry* const*)a)->samples;
  long sb = (*(struct method_entry* const*)b)->samples;
  return sa < sb ? 1 : sa > sb ? -1 : 0;
}

static void write_report(void) {
  static const char* names[JVMPI_MAX_EVENT_TYPE_VAL + 1];
  struct method_entry* hot[20];
  int hot_count = 0;
  names[JVMPI_EVENT_THREAD_START] = "THREAD_START";
  names[JVMPI_EVENT_THREAD_END] = "THREAD_END";
  names[JVMPI_EVENT_CLASS_LOAD] = "CLASS_LOAD";
  names[JVMPI_EVENT_MONITOR_CONTENDED_ENTER] = "MONITOR_CONTENDED_ENTER";
  names[JVMPI_EVENT_MONITOR_CONTENDED_ENTERED] = "MONITOR_CONTENDED_ENTERED";
  names[JVMPI_EVENT_MONITOR_WAIT] = "MONITOR_WAIT";
  names[JVMPI_EVENT_MONITOR_WAITED] = "MONITOR_WAITED";
  names[JVMPI_EVENT_GC_START] = "GC_START";
  names[JVMPI_EVENT_GC_FINISH] = "GC_FINISH";
  names[JVMPI_EVENT_JVM_INIT_DONE] = "JVM_INIT_DONE";
  names[JVMPI_EVENT_COMPILED_METHOD_LOAD] = "COMPILED_METHOD_LOAD";

  fprintf(out, "JVMPI sample agent report\n=========================\n\nEvents received:\n");
  for (int t = 1; t <= JVMPI_MAX_EVENT_TYPE_VAL; t++) {
    if (event_counts[t] > 0) {
      fprintf(out, "  %-28s %8ld\n", names[t] != NULL ? names[t] : "?", event_counts[t]);
    }
  }
  fprintf(out, "\nClasses loaded: %ld\n", classes_loaded);
  fprintf(out, "Garbage collections: %ld (last: %lld objects, %lld of %lld bytes used)\n", gc_count,
          (long long)last_used_objects, (long long)last_used_space, (long long)last_total_space);
  fprintf(out, "\nThreads (CPU samples):\n");
  for (int i = 0; i < thread_count; i++) {
    fprintf(out, "  %-30s %6ld\n", threads[i].name, threads[i].samples);
  }
  for (size_t i = 0; i < METHOD_SLOTS; i++) {
    struct method_entry* e = &methods[i];
    if (e->id == NULL || e->samples == 0) continue;
    if (hot_count < 20) {
      hot[hot_count++] = e;
    } else {
      qsort(hot, (size_t)hot_count, sizeof hot[0], by_samples);
      if (e->samples > hot[hot_count - 1]->samples) hot[hot_count - 1] = e;
    }
  }
  qsort(hot, (size_t)hot_count, sizeof hot[0], by_samples);
  fprintf(out, "\nHottest methods (%ld samples in all):\n", total_samples);
  for (int i = 0; i < hot_count; i++) {
    fprintf(out, "  %5.1f%%  %6ld  %s\n", 100.0 * (double)hot[i]->samples / (double)total_samples,
            hot[i]->samples, hot[i]->name);
  }
  fflush(out);
}

static void notify_event(JVMPI_Event* ev) {
  jint type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
  jvmpi->RawMonitorEnter(lock);
  if (type > 0 && type <= JVMPI_MAX_EVENT_TYPE_VAL) event_counts[type]++;
  switch (type) {
    case JVMPI_EVENT_CLASS_LOAD:
      remember_class(ev);
      break;
    case JVMPI_EVENT_THREAD_START:
      if (thread_count < MAX_THREADS) {
        struct thread_entry* t = &threads[thread_count++];
        t->env = ev->u.thread_start.thread_env_id;
        snprintf(t->name, sizeof t->name, "%s",
                 ev->u.thread_start.thread_name ? ev->u.thread_start.thread_name : "?");
        t->alive = 1;
      }
      break;
    case JVMPI_EVENT_THREAD_END: {
      struct thread_entry* t = find_thread(ev->env_id);
      if (t != NULL) t->alive = 0;
      break;
    }
    case JVMPI_EVENT_GC_FINISH:
      gc_count++;
      last_used_objects = ev->u.gc_info.used_objects;
      last_used_space = ev->u.gc_info.used_object_space;
      last_total_space = ev->u.gc_info.total_object_space;
      break;
    case JVMPI_EVENT_JVM_INIT_DONE:
      jvmpi->RawMonitorExit(lock);
      if (jvmpi->CreateSystemThread("sampler", JVMPI_MAXIMUM_PRIORITY, sampler) != JNI_OK) {
        fprintf(stderr, "sample agent: cannot start the sampler thread\n");
      }
      return;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
      shutting_down = 1;
      jvmpi->RawMonitorNotifyAll(lock);
      write_report();
      break;
    default:
      break;
  }
  jvmpi->RawMonitorExit(lock);
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* jvm, char* options, void* reserved) {
  static const jint events[] = {JVMPI_EVENT_CLASS_LOAD,
                                JVMPI_EVENT_THREAD_START,
                                JVMPI_EVENT_THREAD_END,
                                JVMPI_EVENT_MONITOR_CONTENDED_ENTER,
                                JVMPI_EVENT_MONITOR_CONTENDED_ENTERED,
                                JVMPI_EVENT_MONITOR_WAIT,
                                JVMPI_EVENT_MONITOR_WAITED,
                                JVMPI_EVENT_GC_START,
                                JVMPI_EVENT_GC_FINISH,
                                JVMPI_EVENT_COMPILED_METHOD_LOAD,
                                JVMPI_EVENT_JVM_INIT_DONE,
                                JVMPI_EVENT_JVM_SHUT_DOWN};
  char* opt;
  (void)reserved;
  if ((*jvm)->GetEnv(jvm, (void**)&jvmpi, JVMPI_VERSION_1) != JNI_OK) {
    fprintf(stderr, "sample agent: no JVMPI interface\n");
    return JNI_ERR;
  }
  out = stderr;
  for (opt = strtok(options, ","); opt != NULL; opt = strtok(NULL, ",")) {
    if (strncmp(opt, "file=", 5) == 0) {
      out = fopen(opt + 5, "w");
      if (out == NULL) {
        fprintf(stderr, "sample agent: cannot write %s\n", opt + 5);
        return JNI_ERR;
      }
    } else if (strncmp(opt, "interval=", 9) == 0) {
      interval_ms = atoi(opt + 9) > 0 ? atoi(opt + 9) : 10;
    } else if (*opt != '\0') {
      fprintf(stderr, "sample agent: unknown option '%s'\n", opt);
      return JNI_ERR;
    }
  }
  lock = jvmpi->RawMonitorCreate("_sample agent lock");
  jvmpi->NotifyEvent = notify_event;
  for (size_t i = 0; i < sizeof events / sizeof events[0]; i++) {
    if (jvmpi->EnableEvent(events[i], NULL) != JVMPI_SUCCESS) {
      fprintf(stderr, "sample agent: event %d not available\n", (int)events[i]);
    }
  }
  return JNI_OK;
}
