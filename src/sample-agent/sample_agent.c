// SPDX-License-Identifier: Apache-2.0
/*
 * A sample JVMPI agent, written in plain C against jvmpi.h the way agents of the JDK 1.2 era were.
 *
 * It listens to the thread, class, monitor and GC events, samples the running threads every 10 ms
 * and at JVM_SHUT_DOWN writes what it observed: event counts, threads, the hottest methods and the
 * contended monitors.
 *
 * It also shows the runtime's extensions (jvmpi_ext.h), which an agent asks for with GetEnv and
 * may do without: when they are there, CPU samples come from the runtime's CPU-time sampler
 * (AsyncGetCallTrace in a per-thread CPU timer's signal), drained by this agent's system thread;
 * otherwise, or with sampler=suspend, the thread samples the JDK 1.2 way (SuspendThread,
 * ThreadHasRun, GetCallTrace). With alloc=<bytes> it also receives sampled allocations and
 * reports the estimated bytes allocated per class; exact_alloc=y adds JVMPI's exact OBJECT_ALLOC
 * events beside them, so each class shows both.
 *
 * Options: file=<path> (default: standard error), interval=<ms> (default 10),
 * sampler=cputime|suspend (default cputime when available), alloc=<bytes> (default off),
 * exact_alloc=y|n (default n).
 */
#include <jvmpi.h>
#include <jvmpi_ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 256
#define METHOD_SLOTS 65536 /* power of two */
#define MAX_FRAMES 1

static JVMPI_Interface* jvmpi;
static JVMPI_ExtInterface* ext; /* NULL when the runtime has no extensions */
static int use_cpu_time = 1;    /* sampler=cputime (if ext allows) */
static int cpu_time_on;         /* StartCpuSampling succeeded */
static int alloc_interval;      /* alloc=<bytes>; 0 = off */
static int exact_alloc;         /* exact_alloc=y */
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

/* Sampled allocations: estimated bytes per class (class_id -> name from CLASS_LOAD). */
#define CLASS_SLOTS 16384 /* power of two */
struct class_entry {
  jobjectID id;
  char* name;
  long long est_bytes;
  long samples;
  long long exact_bytes;
};
static struct class_entry classes[CLASS_SLOTS];
static struct class_entry primitive_arrays[16]; /* by type code: they have no class ID */

static struct class_entry* class_slot(jobjectID id) {
  size_t h = ((size_t)id >> 3) * 2654435761u;
  for (size_t i = 0; i < CLASS_SLOTS; i++) {
    struct class_entry* e = &classes[(h + i) & (CLASS_SLOTS - 1)];
    if (e->id == id || e->id == NULL) return e;
  }
  return NULL;
}

static struct method_entry* method_slot(jmethodID id) {
  size_t h = ((size_t)id >> 3) * 2654435761u;
  for (size_t i = 0; i < METHOD_SLOTS; i++) {
    struct method_entry* e = &methods[(h + i) & (METHOD_SLOTS - 1)];
    if (e->id == id || e->id == NULL) return e;
  }
  return NULL;
}

static void remember_class(JVMPI_Event* ev) {
  struct class_entry* c = class_slot(ev->u.class_load.class_id);
  classes_loaded++;
  if (c != NULL && c->id == NULL) {
    c->id = ev->u.class_load.class_id;
    c->name = strdup(ev->u.class_load.class_name);
  }
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

/* Charges one CPU sample (the top frame) to its method and thread. Caller holds lock. */
static void charge(JNIEnv* env, const JVMPI_CallFrame* top, long count) {
  struct method_entry* e = method_slot(top->method_id);
  struct thread_entry* t = find_thread(env);
  if (e != NULL && e->id != NULL) e->samples += count;
  if (t != NULL) t->samples += count;
  total_samples += count;
}

static const char* primitive_array_name(jint type) {
  switch (type) {
    case JVMPI_BOOLEAN:
      return "boolean[]";
    case JVMPI_CHAR:
      return "char[]";
    case JVMPI_FLOAT:
      return "float[]";
    case JVMPI_DOUBLE:
      return "double[]";
    case JVMPI_BYTE:
      return "byte[]";
    case JVMPI_SHORT:
      return "short[]";
    case JVMPI_INT:
      return "int[]";
    case JVMPI_LONG:
      return "long[]";
    default:
      return "?[]";
  }
}

/* The entry an OBJECT_ALLOC(-shaped) event counts in: its class, or for arrays of a primitive
 * type (which have no class ID) an entry per type. Caller holds lock. */
static struct class_entry* alloc_entry(const JVMPI_Event* ev) {
  jint type = ev->u.obj_alloc.is_array;
  struct class_entry* c;
  if (type != JVMPI_NORMAL_OBJECT && type != JVMPI_CLASS) {
    if (type < 0 || type >= 16) return NULL;
    c = &primitive_arrays[type];
    if (c->name == NULL) c->name = strdup(primitive_array_name(type));
    return c;
  }
  if (ev->u.obj_alloc.class_id == NULL) return NULL;
  c = class_slot(ev->u.obj_alloc.class_id);
  if (c != NULL && c->id == NULL) c->id = ev->u.obj_alloc.class_id;
  return c;
}

/* The runtime's CPU-time samples, drained on our sampler thread. */
static void JNICALL on_cpu_samples(void* arg, const JVMPIExt_CpuSample* samples, jint count) {
  jlong interval_ns = (jlong)interval_ms * 1000000;
  (void)arg;
  jvmpi->RawMonitorEnter(lock);
  for (jint i = 0; i < count; i++) {
    /* A signal may stand for several intervals of CPU (timers fire at the kernel's tick). */
    long weight = (long)((samples[i].cpu_time + interval_ns / 2) / interval_ns);
    if (samples[i].trace.num_frames > 0) {
      charge(samples[i].trace.env_id, &samples[i].trace.frames[0], weight > 0 ? weight : 1);
    }
  }
  jvmpi->RawMonitorExit(lock);
}

/* A sampled allocation, on the allocating thread: weight_bytes is what it stands for. */
static void JNICALL on_alloc_sample(void* arg, const JVMPIExt_AllocSample* s) {
  struct class_entry* c;
  (void)arg;
  jvmpi->RawMonitorEnter(lock);
  c = alloc_entry(&s->event);
  if (c != NULL) {
    c->est_bytes += s->weight_bytes;
    c->samples++;
  }
  jvmpi->RawMonitorExit(lock);
}

/* The sampler: every interval, suspend each live application thread, and if it ran since the
 * previous sample, charge its top frame. With the CPU-time sampler, drain its samples instead. */
static void sampler(void* unused) {
  JNIEnv* envs[MAX_THREADS];
  JVMPI_CallFrame frames[MAX_FRAMES];
  JNIEnv* self = NULL;
  (void)unused;
  while (cpu_time_on && !shutting_down) {
    jvmpi->RawMonitorEnter(lock);
    jvmpi->RawMonitorWait(lock, interval_ms < 10 ? 10 : interval_ms);
    jvmpi->RawMonitorExit(lock);
    ext->DrainCpuSamples(on_cpu_samples, NULL);
  }
  while (!cpu_time_on && !shutting_down) {
    int n = 0;
    jvmpi->RawMonitorEnter(lock);
    jvmpi->RawMonitorWait(lock, interval_ms);
    if (shutting_down) {
      jvmpi->RawMonitorExit(lock);
      break;
    }
    for (int i = 0; i < thread_count; i++) {
      if (threads[i].alive && threads[i].env != self && strcmp(threads[i].name, "sampler") != 0) {
        envs[n++] = threads[i].env;
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
        if (trace.num_frames > 0) charge(envs[i], &frames[0], 1);
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
  fprintf(out, "\nHottest methods (%ld samples in all, %s):\n", total_samples,
          cpu_time_on ? "CPU-time sampler" : "suspend sampler");
  for (int i = 0; i < hot_count; i++) {
    fprintf(out, "  %5.1f%%  %6ld  %s\n", 100.0 * (double)hot[i]->samples / (double)total_samples,
            hot[i]->samples, hot[i]->name);
  }
  if (cpu_time_on) {
    JVMPIExt_CpuSamplingStats s;
    memset(&s, 0, sizeof s);
    ext->GetCpuSamplingStats(&s, (jint)sizeof s);
    fprintf(out, "\nCPU-time sampler: %lld signals, %lld stacks taken, %lld delivered\n",
            (long long)s.signals, (long long)s.samples_taken, (long long)s.samples_delivered);
    for (jint k = 0; k < JVMPI_EXT_FAIL_KINDS; k++) {
      if (s.failures[k] > 0) {
        fprintf(out, "  no stack: %-24s %8lld\n", ext->CpuSamplingFailureName(k),
                (long long)s.failures[k]);
      }
    }
  }
  if (alloc_interval > 0) {
    fprintf(out, "\nSampled allocations (every ~%d bytes), bytes per class:\n", alloc_interval);
    fprintf(out, "  %14s  %14s  %8s  %s\n", "estimated", exact_alloc ? "exact" : "-", "samples",
            "class");
    for (size_t i = 0; i < CLASS_SLOTS + 16; i++) {
      struct class_entry* c = i < CLASS_SLOTS ? &classes[i] : &primitive_arrays[i - CLASS_SLOTS];
      if (c->samples == 0 && c->exact_bytes == 0) continue;
      fprintf(out, "  %14lld  %14lld  %8ld  %s\n", c->est_bytes, c->exact_bytes, c->samples,
              c->name != NULL ? c->name : "?");
    }
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
    case JVMPI_EVENT_OBJECT_ALLOC: {
      struct class_entry* c = alloc_entry(ev);
      if (c != NULL) c->exact_bytes += ev->u.obj_alloc.size;
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
      if (ext != NULL && use_cpu_time) {
        cpu_time_on =
            ext->StartCpuSampling((jlong)interval_ms * 1000000, MAX_FRAMES) == JVMPI_SUCCESS;
      }
      if (jvmpi->CreateSystemThread("sampler", JVMPI_MAXIMUM_PRIORITY, sampler) != JNI_OK) {
        fprintf(stderr, "sample agent: cannot start the sampler thread\n");
      }
      return;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
      shutting_down = 1;
      jvmpi->RawMonitorNotifyAll(lock);
      jvmpi->RawMonitorExit(lock);
      /* The runtime stopped its timers before JVM_SHUT_DOWN: take the last samples. */
      if (cpu_time_on) ext->DrainCpuSamples(on_cpu_samples, NULL);
      if (alloc_interval > 0) ext->StopAllocationSampling();
      jvmpi->RawMonitorEnter(lock);
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
    } else if (strcmp(opt, "sampler=suspend") == 0 || strcmp(opt, "sampler=cputime") == 0) {
      use_cpu_time = strcmp(opt, "sampler=cputime") == 0;
    } else if (strcmp(opt, "exact_alloc=y") == 0 || strcmp(opt, "exact_alloc=n") == 0) {
      exact_alloc = opt[12] == 'y';
    } else if (strncmp(opt, "alloc=", 6) == 0) {
      alloc_interval = atoi(opt + 6);
      if (alloc_interval < 1024) {
        fprintf(stderr, "sample agent: alloc= takes a number of bytes of 1024 or more\n");
        return JNI_ERR;
      }
    } else if (*opt != '\0') {
      fprintf(stderr, "sample agent: unknown option '%s'\n", opt);
      return JNI_ERR;
    }
  }
  /* The extensions are optional: an older runtime answers JNI_EVERSION. Entries added after
   * version 1 would be checked with JVMPI_EXT_HAS(ext, Entry) before use. */
  if ((*jvm)->GetEnv(jvm, (void**)&ext, JVMPI_EXT_VERSION_1) != JNI_OK) ext = NULL;
  if (alloc_interval > 0 && ext == NULL) {
    fprintf(stderr, "sample agent: alloc= needs the runtime's extensions\n");
    return JNI_ERR;
  }
  lock = jvmpi->RawMonitorCreate("_sample agent lock");
  jvmpi->NotifyEvent = notify_event;
  for (size_t i = 0; i < sizeof events / sizeof events[0]; i++) {
    if (jvmpi->EnableEvent(events[i], NULL) != JVMPI_SUCCESS) {
      fprintf(stderr, "sample agent: event %d not available\n", (int)events[i]);
    }
  }
  if (exact_alloc && jvmpi->EnableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL) != JVMPI_SUCCESS) {
    fprintf(stderr, "sample agent: OBJECT_ALLOC not available\n");
    return JNI_ERR;
  }
  if (alloc_interval > 0 &&
      ext->StartAllocationSampling(alloc_interval, on_alloc_sample, NULL) != JVMPI_SUCCESS) {
    fprintf(stderr, "sample agent: sampled allocations are not available\n");
    return JNI_ERR;
  }
  return JNI_OK;
}
