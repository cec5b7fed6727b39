// SPDX-License-Identifier: Apache-2.0
/*
 * Raw monitors. Hook 1 starts two system threads, A and B, which play out, in order:
 *  1. contention on "jvmpitest.rawlock": A holds it, B tries to enter; A leaves only once B is
 *     blocked (B's CONTENDED_ENTER handler ran and B sleeps in the kernel);
 *  2. the same on "_jvmpitest.hidden", whose contention events must not be sent;
 *  3. RawMonitorWait/NotifyAll on "jvmpitest.waitlock", and a timed RawMonitorWait;
 *  4. RawMonitorDestroy of all three.
 * The threads coordinate through a pthread mutex, which JVMPI never sees.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent_common.h"

static JVMPI_Interface* jvmpi;
static JVMPI_RawMonitor rawlock, hidden, waitlock;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int step; /* protocol progress, see the steps below */
static volatile int b_contending;
static pid_t b_tid;
static volatile int a_waiting, notified;
static int threads_done;

static void set_step(int s) {
  pthread_mutex_lock(&mu);
  step = s;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
}

/* Waits (bounded) until step >= s; 1 if reached. */
static int await_step(int s) {
  struct timespec deadline;
  int ok;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 20;
  pthread_mutex_lock(&mu);
  while (step < s) {
    if (pthread_cond_timedwait(&cv, &mu, &deadline) != 0) break;
  }
  ok = step >= s;
  pthread_mutex_unlock(&mu);
  if (!ok) tl_log("TIMEOUT\tstep=%d", s);
  return ok;
}

/* Whether thread tid is asleep in the kernel (state S or D in /proc). */
static int is_blocked(pid_t tid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
  FILE* f = fopen(path, "r");
  if (f == NULL) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  char* p = strrchr(buf, ')');
  return p != NULL && p[1] == ' ' && (p[2] == 'S' || p[2] == 'D');
}

/* Polls, bounded, until B sleeps inside RawMonitorEnter. */
static int await_b_blocked(int need_event) {
  long long deadline = now_ms() + 20000;
  while (now_ms() < deadline) {
    if ((!need_event || b_contending) && is_blocked(b_tid)) return 1;
    usleep(1000);
  }
  tl_log("B_NEVER_BLOCKED\tneed_event=%d\tb_contending=%d", need_event, (int)b_contending);
  return 0;
}

static void finish_thread(void) {
  pthread_mutex_lock(&mu);
  threads_done++;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
}

static void thread_a(void* arg) {
  (void)arg;
  /* 1: contention on a named monitor. Entered twice: raw monitors are re-entrant. */
  jvmpi->RawMonitorEnter(rawlock);
  jvmpi->RawMonitorEnter(rawlock);
  jvmpi->RawMonitorExit(rawlock);
  set_step(1);
  await_b_blocked(1);
  tl_log("A_EXITS\tmonitor=jvmpitest.rawlock");
  jvmpi->RawMonitorExit(rawlock);
  await_step(2); /* B has entered and left */

  /* 2: the same on a monitor whose name starts with '_'. */
  jvmpi->RawMonitorEnter(hidden);
  set_step(3);
  await_b_blocked(0);
  tl_log("A_EXITS\tmonitor=_jvmpitest.hidden");
  jvmpi->RawMonitorExit(hidden);
  await_step(4);

  /* 3: wait until B notifies, then a timed wait nobody ends early. */
  long long start = now_ms();
  jvmpi->RawMonitorEnter(waitlock);
  a_waiting = 1;
  while (!notified && now_ms() - start < 20000) jvmpi->RawMonitorWait(waitlock, 20000);
  jvmpi->RawMonitorExit(waitlock);
  tl_log("WAIT_NOTIFIED\tnotified=%d", (int)notified);
  jvmpi->RawMonitorEnter(waitlock);
  start = now_ms();
  jvmpi->RawMonitorWait(waitlock, 100);
  long long elapsed = now_ms() - start;
  jvmpi->RawMonitorExit(waitlock);
  tl_log("TIMED_WAIT\tms=100\telapsed=%lld", elapsed);
  finish_thread();
}

static void thread_b(void* arg) {
  (void)arg;
  b_tid = (pid_t)syscall(SYS_gettid);
  if (!await_step(1)) goto out;
  jvmpi->RawMonitorEnter(rawlock); /* blocks: A holds it */
  tl_log("B_ENTERED\tmonitor=jvmpitest.rawlock");
  jvmpi->RawMonitorExit(rawlock);
  set_step(2);

  if (!await_step(3)) goto out;
  jvmpi->RawMonitorEnter(hidden); /* blocks: A holds it */
  tl_log("B_ENTERED\tmonitor=_jvmpitest.hidden");
  jvmpi->RawMonitorExit(hidden);
  set_step(4);

  /* A is waiting once a_waiting is set and we own the monitor (A released it in Wait). */
  for (long long deadline = now_ms() + 20000; now_ms() < deadline;) {
    jvmpi->RawMonitorEnter(waitlock);
    if (a_waiting) {
      notified = 1;
      jvmpi->RawMonitorNotifyAll(waitlock);
      jvmpi->RawMonitorExit(waitlock);
      break;
    }
    jvmpi->RawMonitorExit(waitlock);
    usleep(1000);
  }
out:
  finish_thread();
}

static void notify_event(JVMPI_Event* ev) {
  char thread[128];
  const char* tag = NULL;
  switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_THREAD_START:
      threads_add(ev->u.thread_start.thread_env_id, ev->u.thread_start.thread_name);
      return;
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER:
      tag = "RAW_ENTER";
      if (ev->u.raw_monitor.id == rawlock) b_contending = 1;
      break;
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED:
      tag = "RAW_ENTERED";
      break;
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT:
      tag = "RAW_EXIT";
      break;
    default:
      return;
  }
  threads_name(ev->env_id, thread, sizeof thread);
  tl_log("%s\tname=%s\tid=0x%llx\tthread=%s", tag,
         ev->u.raw_monitor.name ? ev->u.raw_monitor.name : "(null)", PTR(ev->u.raw_monitor.id),
         thread);
}

JNIEXPORT jlong JNICALL Java_jvmpitest_Agent_hook(JNIEnv* env, jclass cls, jint code, jlong arg,
                                                  jobject obj) {
  (void)env;
  (void)cls;
  (void)arg;
  (void)obj;
  if (code != 1) return -1;
  rawlock = jvmpi->RawMonitorCreate("jvmpitest.rawlock");
  hidden = jvmpi->RawMonitorCreate("_jvmpitest.hidden");
  waitlock = jvmpi->RawMonitorCreate("jvmpitest.waitlock");
  tl_log("CREATED\trawlock=0x%llx\thidden=0x%llx\twaitlock=0x%llx", PTR(rawlock), PTR(hidden),
         PTR(waitlock));
  jint rc_b = jvmpi->CreateSystemThread("jvmpitest-raw-b", JVMPI_NORMAL_PRIORITY, thread_b);
  jint rc_a = jvmpi->CreateSystemThread("jvmpitest-raw-a", JVMPI_NORMAL_PRIORITY, thread_a);
  tl_log("THREADS\trc_a=%d\trc_b=%d", (int)rc_a, (int)rc_b);
  if (rc_a != JNI_OK || rc_b != JNI_OK) return 0;

  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 40;
  pthread_mutex_lock(&mu);
  while (threads_done < 2) {
    if (pthread_cond_timedwait(&cv, &mu, &deadline) != 0) break;
  }
  int all_done = threads_done == 2;
  pthread_mutex_unlock(&mu);
  if (all_done) {
    jvmpi->RawMonitorDestroy(rawlock);
    jvmpi->RawMonitorDestroy(hidden);
    jvmpi->RawMonitorDestroy(waitlock);
    tl_log("DESTROYED");
  }
  return all_done;
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* jvm, char* options, void* reserved) {
  (void)reserved;
  if (!tl_open(options)) return JNI_ERR;
  if ((*jvm)->GetEnv(jvm, (void**)&jvmpi, JVMPI_VERSION_1) != JNI_OK) return JNI_ERR;
  jvmpi->NotifyEvent = notify_event;
  jvmpi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT, NULL);
  return JNI_OK;
}
