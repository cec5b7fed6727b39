// SPDX-License-Identifier: Apache-2.0
/*
 * API torture: every function of the interface, called from every kind of thread an agent meets
 * (a handler of the VM-init CLASS_LOAD batch, JVM_INIT_DONE, THREAD_START, a system thread of
 * CreateSystemThread, GC_START and GC_FINISH, a JNI native, JVM_SHUT_DOWN) with valid, NULL,
 * never-issued and stale (freed) IDs. Each answer the conformance table documents is checked; the
 * others need only not crash or hang. TortureProgram drives it through Agent.hook:
 *   1: remember the object as the victim (its ID turns stale once OBJECT_FREE names it);
 *   2: answers 1 once the victim's OBJECT_FREE has arrived;
 *   3: run the battery here (a JNI native);
 *   4: ProfilerExit(arg) — the program's last act;
 *   5: answers the stages run so far, one bit each (enum order).
 *
 * Log: STAGE name=… calls=N bad=M for each battery, BAD stage=… call=… got=… per answer the
 * table does not allow, SUMMARY at JVM_SHUT_DOWN.
 */
#include <stdint.h>
#include <string.h>

#include "agent_common.h"

static JavaVM* vm;
static JVMPI_Interface* jvmpi;

/* IDs learned along the way. */
static jobjectID known_class_id; /* a class announced by CLASS_LOAD (java.lang.Object) */
static jmethodID known_method;   /* one of its methods */
static jobjectID victim_id;      /* an object the program let go */
static volatile int victim_freed;
static int init_done;

/* Never issued by the runtime: object IDs are tags from a counter, and no JNIEnv lives here. */
static const jobjectID kNeverIssued = (jobjectID)(uintptr_t)0x0ffffffffffff0f8ull;
static char fake_env_storage[256];
#define FAKE_ENV ((JNIEnv*)(void*)fake_env_storage)

/* Batteries run on several threads at once (the system thread, the GC reporter, main). */
static __thread int stage_calls, stage_bad;
static __thread const char* stage_name;
static volatile int stages_run[16];

enum { kBatch, kInitDone, kThreadStart, kSystem, kGcStart, kGcFinish, kJni, kShutdown, kStages };
static const char* const kStageNames[kStages] = {
    "batch", "init_done", "thread_start", "system", "gc_start", "gc_finish", "jni", "shutdown"};

static void check(const char* call, int ok, long long got) {
  stage_calls++;
  if (!ok) {
    stage_bad++;
    tl_log("BAD\tstage=%s\tcall=%s\tgot=%lld", stage_name, call, got);
  }
}

/* The calling thread's JNIEnv, or NULL when it is not attached. */
static JNIEnv* own_env(void) {
  JNIEnv* env = NULL;
  if ((*vm)->GetEnv(vm, (void**)&env, JNI_VERSION_1_2) != JNI_OK) return NULL;
  return env;
}

static void system_thread(void* arg);

static void battery(int stage, JNIEnv* event_env) {
  if (stages_run[stage]) return;
  stages_run[stage] = 1;
  stage_name = kStageNames[stage];
  stage_calls = 0;
  stage_bad = 0;
  const int live = stage != kBatch;
  JNIEnv* env = own_env();
  JNIEnv* envs[] = {NULL, FAKE_ENV, env};
  jobjectID bad_ids[3] = {NULL, kNeverIssued, victim_freed ? victim_id : NULL};
  const int bad_id_count = victim_freed ? 3 : 2;

  /* Event control: unknown numbers and request-only dumps are not available. */
  check("EnableEvent(0)", jvmpi->EnableEvent(0, NULL) == JVMPI_NOT_AVAILABLE, 0);
  check("EnableEvent(999)", jvmpi->EnableEvent(999, NULL) == JVMPI_NOT_AVAILABLE, 0);
  check("EnableEvent(HEAP_DUMP)",
        jvmpi->EnableEvent(JVMPI_EVENT_HEAP_DUMP, NULL) == JVMPI_NOT_AVAILABLE, 0);
  check("DisableEvent(-1)", jvmpi->DisableEvent(-1, NULL) == JVMPI_NOT_AVAILABLE, 0);
  check("EnableEvent(ARENA_NEW)", jvmpi->EnableEvent(JVMPI_EVENT_ARENA_NEW, NULL) == JVMPI_SUCCESS,
        0);
  check("DisableEvent(ARENA_NEW)",
        jvmpi->DisableEvent(JVMPI_EVENT_ARENA_NEW, NULL) == JVMPI_SUCCESS, 0);

  /* Requests with IDs that name nothing fail; unknown types are not available. */
  for (int i = 0; i < bad_id_count; i++) {
    jint rc = jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, bad_ids[i]);
    check("RequestEvent(CLASS_LOAD, bad)", rc == JVMPI_FAIL, rc);
    rc = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, bad_ids[i]);
    check("RequestEvent(OBJECT_ALLOC, bad)", rc == JVMPI_FAIL, rc);
    rc = jvmpi->RequestEvent(JVMPI_EVENT_THREAD_START, bad_ids[i]);
    check("RequestEvent(THREAD_START, bad)", rc == JVMPI_FAIL, rc);
    rc = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_DUMP, bad_ids[i]);
    check("RequestEvent(OBJECT_DUMP, bad)", rc == JVMPI_FAIL, rc);
    check("jobjectID2jobject(bad)", jvmpi->jobjectID2jobject(bad_ids[i]) == NULL, i);
  }
  check("RequestEvent(12345)", jvmpi->RequestEvent(12345, NULL) == JVMPI_NOT_AVAILABLE, 0);
  check("jobject2jobjectID(NULL)", jvmpi->jobject2jobjectID(NULL) == NULL, 0);
  if (known_class_id != NULL) {
    jint rc = jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, known_class_id);
    check("RequestEvent(CLASS_LOAD, Object)", rc == JVMPI_SUCCESS, rc);
    jobject ref = jvmpi->jobjectID2jobject(known_class_id);
    check("jobjectID2jobject(Object)", ref != NULL, 0);
    if (ref != NULL && env != NULL) {
      check("jobject2jobjectID(Object)", jvmpi->jobject2jobjectID(ref) == known_class_id, 0);
      (*env)->DeleteLocalRef(env, ref);
    }
  }
  if (live) {
    jint rc = jvmpi->RequestEvent(JVMPI_EVENT_MONITOR_DUMP, NULL);
    check("RequestEvent(MONITOR_DUMP)", rc == JVMPI_SUCCESS, rc);
    JVMPI_HeapDumpArg level0 = {JVMPI_DUMP_LEVEL_0};
    rc = jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &level0);
    check("RequestEvent(HEAP_DUMP level 0)", rc == JVMPI_SUCCESS, rc);
  }

  /* Methods: NULL names no class. */
  check("GetMethodClass(NULL)", jvmpi->GetMethodClass(NULL) == NULL, 0);
  if (known_method != NULL && live) {
    check("GetMethodClass(Object method)", jvmpi->GetMethodClass(known_method) == known_class_id,
          0);
  }

  /* Threads: a NULL or unknown env_id is no thread. */
  for (int i = 0; i < 2; i++) {
    JVMPI_CallFrame frames[8];
    JVMPI_CallTrace trace = {envs[i], 99, frames};
    jvmpi->GetCallTrace(&trace, 8);
    check("GetCallTrace(bad env)", trace.num_frames == 0, trace.num_frames);
    check("GetThreadObject(bad env)", jvmpi->GetThreadObject(envs[i]) == NULL, i);
    check("GetThreadLocalStorage(bad env)", jvmpi->GetThreadLocalStorage(envs[i]) == NULL, i);
    jvmpi->SetThreadLocalStorage(envs[i], (void*)&stage_calls);
    jvmpi->GetThreadStatus(envs[i]);
    jvmpi->ThreadHasRun(envs[i]);
    jvmpi->SuspendThread(envs[i]);
    jvmpi->ResumeThread(envs[i]);
  }
  {
    JNIEnv* list[2] = {NULL, FAKE_ENV};
    jint results[2] = {77, 77};
    jvmpi->SuspendThreadList(2, list, results);
    check("SuspendThreadList(bad envs)", results[0] == JVMPI_FAIL && results[1] == JVMPI_FAIL,
          results[0]);
    results[0] = results[1] = 77;
    jvmpi->ResumeThreadList(2, list, results);
    check("ResumeThreadList(bad envs)", results[0] == JVMPI_FAIL && results[1] == JVMPI_FAIL,
          results[0]);
    jvmpi->SuspendThreadList(0, NULL, NULL);
    jvmpi->ResumeThreadList(0, NULL, NULL);
  }
  /* The calling thread itself, while the agent knows it: between its THREAD_START and THREAD_END
     (a thread that halts the VM has ended when it delivers JVM_SHUT_DOWN). */
  if (event_env != NULL && live && envs[2] != NULL && threads_known(event_env)) {
    JVMPI_CallFrame frames[8];
    JVMPI_CallTrace trace = {event_env, -1, frames};
    jvmpi->GetCallTrace(&trace, 8);
    check("GetCallTrace(own)", trace.num_frames >= 0 && trace.num_frames <= 8, trace.num_frames);
    void* before = jvmpi->GetThreadLocalStorage(event_env);
    jvmpi->SetThreadLocalStorage(event_env, (void*)&stage_bad);
    check("ThreadLocalStorage round trip", jvmpi->GetThreadLocalStorage(event_env) == &stage_bad,
          0);
    jvmpi->SetThreadLocalStorage(event_env, before);
    jint status =
        jvmpi->GetThreadStatus(event_env) & ~(JVMPI_THREAD_SUSPENDED | JVMPI_THREAD_INTERRUPTED);
    check("GetThreadStatus(own)", status == JVMPI_THREAD_RUNNABLE, status);
    check("GetThreadObject(own)", jvmpi->GetThreadObject(event_env) != NULL, 0);
  }
  check("GetCurrentThreadCpuTime", jvmpi->GetCurrentThreadCpuTime() >= 0, 0);

  /* Raw monitors: the full life cycle, and the calls that misuse one. */
  JVMPI_RawMonitor m = jvmpi->RawMonitorCreate("jvmpitest.torture");
  check("RawMonitorCreate", m != NULL, 0);
  if (m != NULL) {
    jvmpi->RawMonitorEnter(m);
    jvmpi->RawMonitorEnter(m); /* re-entrant */
    jvmpi->RawMonitorWait(m, 1);
    jvmpi->RawMonitorNotifyAll(m);
    jvmpi->RawMonitorExit(m);
    jvmpi->RawMonitorExit(m);
    jvmpi->RawMonitorExit(m);      /* not the owner any more */
    jvmpi->RawMonitorNotifyAll(m); /* not the owner */
    jvmpi->RawMonitorWait(m, 1);   /* not the owner */
    jvmpi->RawMonitorDestroy(m);
  }

  /* GC control. RunGC from a GC handler would start the next collection from its report. */
  jvmpi->DisableGC();
  jvmpi->DisableGC();
  jvmpi->EnableGC();
  jvmpi->EnableGC();
  jvmpi->EnableGC(); /* one more than disabled */
  if (stage == kInitDone || stage == kJni || stage == kSystem) jvmpi->RunGC();

  /* A system thread: refused before JVM_INIT_DONE, as specified. */
  if (stage == kBatch) {
    jint rc =
        jvmpi->CreateSystemThread("jvmpitest-torture-early", JVMPI_NORMAL_PRIORITY, system_thread);
    check("CreateSystemThread before JVM_INIT_DONE", rc == JNI_ERR, rc);
  } else if (stage == kInitDone) {
    jint rc =
        jvmpi->CreateSystemThread("jvmpitest-torture-system", JVMPI_NORMAL_PRIORITY, system_thread);
    check("CreateSystemThread", rc == JNI_OK, rc);
  }
  tl_log("STAGE\tname=%s\tcalls=%d\tbad=%d\tstale=%d\town=%d", stage_name, stage_calls, stage_bad,
         bad_id_count == 3, event_env != NULL && threads_known(event_env));
}

static void system_thread(void* arg) {
  battery(kSystem, (JNIEnv*)arg);
}

static void notify_event(JVMPI_Event* ev) {
  switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
      if ((ev->event_type & JVMPI_REQUESTED_EVENT) == 0 &&
          strcmp(ev->u.class_load.class_name, "java.lang.Object") == 0) {
        known_class_id = ev->u.class_load.class_id;
        if (ev->u.class_load.num_methods > 0) known_method = ev->u.class_load.methods[0].method_id;
      }
      if (!init_done && known_class_id != NULL) battery(kBatch, ev->env_id);
      break;
    case JVMPI_EVENT_JVM_INIT_DONE:
      init_done = 1;
      battery(kInitDone, ev->env_id);
      break;
    case JVMPI_EVENT_THREAD_END:
      threads_remove(ev->env_id);
      break;
    case JVMPI_EVENT_THREAD_START:
      threads_add(ev->u.thread_start.thread_env_id, ev->u.thread_start.thread_name);
      if (strcmp(ev->u.thread_start.thread_name, "jvmpitest-torture-worker") == 0) {
        battery(kThreadStart, ev->u.thread_start.thread_env_id);
      }
      break;
    case JVMPI_EVENT_GC_START:
      if (init_done) battery(kGcStart, ev->env_id);
      break;
    case JVMPI_EVENT_GC_FINISH:
      if (init_done) battery(kGcFinish, ev->env_id);
      break;
    case JVMPI_EVENT_OBJECT_FREE:
      if (victim_id != NULL && ev->u.obj_free.obj_id == victim_id) victim_freed = 1;
      break;
    case JVMPI_EVENT_JVM_SHUT_DOWN: {
      battery(kShutdown, ev->env_id);
      int missing = 0;
      for (int i = 0; i < kStages; i++) {
        if (!stages_run[i]) {
          missing++;
          tl_log("MISSING\tstage=%s", kStageNames[i]);
        }
      }
      tl_log("SUMMARY\tmissing=%d\tvictim_freed=%d", missing, victim_freed);
      break;
    }
    default:
      break;
  }
}

JNIEXPORT jlong JNICALL Java_jvmpitest_Agent_hook(JNIEnv* env, jclass cls, jint code, jlong arg,
                                                  jobject obj) {
  (void)cls;
  switch (code) {
    case 1:
      victim_id = jvmpi->jobject2jobjectID(obj);
      return victim_id != NULL;
    case 2:
      return victim_freed;
    case 3:
      battery(kJni, env);
      return stages_run[kJni];
    case 4:
      jvmpi->ProfilerExit((jint)arg);
      return -1; /* not reached */
    case 5: {
      jlong bits = 0;
      for (int i = 0; i < kStages; i++) bits |= (jlong)(stages_run[i] != 0) << i;
      return bits;
    }
    default:
      return -1;
  }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* jvm, char* options, void* reserved) {
  (void)reserved;
  vm = jvm;
  if (!tl_open(options)) return JNI_ERR;
  if ((*jvm)->GetEnv(jvm, (void**)&jvmpi, JVMPI_VERSION_1_2) != JNI_OK) return JNI_ERR;
  jvmpi->NotifyEvent = notify_event;
  jint events[] = {JVMPI_EVENT_CLASS_LOAD,  JVMPI_EVENT_JVM_INIT_DONE, JVMPI_EVENT_THREAD_START,
                   JVMPI_EVENT_THREAD_END,  JVMPI_EVENT_GC_START,      JVMPI_EVENT_GC_FINISH,
                   JVMPI_EVENT_OBJECT_FREE, JVMPI_EVENT_JVM_SHUT_DOWN};
  for (size_t i = 0; i < sizeof events / sizeof events[0]; i++) {
    tl_log("ENABLE\tevent=%d\trc=%d", (int)events[i], (int)jvmpi->EnableEvent(events[i], NULL));
  }
  return JNI_OK;
}
