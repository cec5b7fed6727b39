// SPDX-License-Identifier: Apache-2.0
// A JVMTI agent that only attaches (Agent_OnAttach), for testing `jvmprof attach|stop|record`
// apart from HPROF: it samples the stacks of the Java threads running Java code and, on `stop` or
// when the VM dies, writes them as HPROF's text report (TRACE and CPU SAMPLES sections) to
// file=PATH or to net=HOST:PORT, the way HPROF does. Options: net=HOST:PORT or file=PATH,
// interval=MS (default 10), cpu=samples (accepted: it is what the agent does), padding=BYTES
// (blank lines before the report, for a report larger than a socket's buffers). Exactly `stop`
// ends the session (non-zero when none runs). It can be attached again after a stop: HotSpot
// never unloads an agent library, so state is reset, not reloaded. Lines on stdout
// ("attach-test-agent: ...") tell the test what happened, in the target's own output.
#define _GNU_SOURCE  // getaddrinfo, strtok_r
#include <arpa/inet.h>
#include <jvmti.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_TRACES 4096
#define MAX_FRAMES 32

typedef struct {
  int depth;
  jmethodID frames[MAX_FRAMES];
  long count;
} TraceCount;

static jvmtiEnv* jvmti;     // the first attach's environment, kept for later attaches
static jrawMonitorID lock;  // guards everything below
static int session;         // a session runs
static int stopping;        // the sampler is asked to end
static int sampler_running;
static int interval_ms;
static FILE* net_out;  // net=: the connection, open from the attach to the stop
static char file_path[4096];
static TraceCount traces[MAX_TRACES];
static int trace_count;
static long total_samples;
static int announced;  // "first sample" said in this session
static long padding;   // blank lines' bytes written before the report (a report of that size)

static void say(const char* what) {
  printf("attach-test-agent: %s\n", what);
  fflush(stdout);
}

// Samples the runnable threads that have Java frames once.
static void sample_once(JNIEnv* jni) {
  jvmtiStackInfo* infos = NULL;
  jint count = 0;
  if ((*jni)->PushLocalFrame(jni, 16) != 0) return;
  if ((*jvmti)->GetAllStackTraces(jvmti, MAX_FRAMES, &infos, &count) != JVMTI_ERROR_NONE) {
    (*jni)->PopLocalFrame(jni, NULL);
    return;
  }
  (*jvmti)->RawMonitorEnter(jvmti, lock);
  int sampled = 0;
  for (jint i = 0; i < count; ++i) {
    const jvmtiStackInfo* s = &infos[i];
    // Threads blocked in a native method (the Reference Handler's wait, a socket read) are
    // RUNNABLE to JVMTI but use no CPU: a top frame without a bytecode location is skipped.
    if (!(s->state & JVMTI_THREAD_STATE_RUNNABLE) || s->frame_count == 0 ||
        s->frame_buffer[0].location < 0)
      continue;
    int slot = 0;
    for (; slot < trace_count; ++slot) {
      const TraceCount* t = &traces[slot];
      if (t->depth != s->frame_count) continue;
      int same = 1;
      for (int f = 0; f < t->depth && same; ++f) same = t->frames[f] == s->frame_buffer[f].method;
      if (same) break;
    }
    if (slot == trace_count) {
      if (trace_count == MAX_TRACES) continue;
      traces[slot].depth = s->frame_count;
      for (int f = 0; f < s->frame_count; ++f) traces[slot].frames[f] = s->frame_buffer[f].method;
      traces[slot].count = 0;
      ++trace_count;
    }
    ++traces[slot].count;
    ++total_samples;
    sampled = 1;
  }
  const int first = sampled && !announced;
  if (first) announced = 1;
  (*jvmti)->RawMonitorExit(jvmti, lock);
  (*jvmti)->Deallocate(jvmti, (unsigned char*)infos);
  (*jni)->PopLocalFrame(jni, NULL);
  if (first) say("first sample");
}

static void JNICALL sampler(jvmtiEnv* env, JNIEnv* jni, void* arg) {
  (void)env;
  (void)arg;
  (*jvmti)->RawMonitorEnter(jvmti, lock);
  while (!stopping) {
    (*jvmti)->RawMonitorExit(jvmti, lock);
    sample_once(jni);
    (*jvmti)->RawMonitorEnter(jvmti, lock);
    if (!stopping) (*jvmti)->RawMonitorWait(jvmti, lock, interval_ms);
  }
  sampler_running = 0;
  (*jvmti)->RawMonitorNotifyAll(jvmti, lock);
  (*jvmti)->RawMonitorExit(jvmti, lock);
}

// "Lattachtest/Spinner;" -> "attachtest.Spinner".
static void class_name(const char* sig, char* out, size_t size) {
  size_t n = 0;
  if (*sig == 'L') ++sig;
  for (; *sig && *sig != ';' && n + 1 < size; ++sig) out[n++] = *sig == '/' ? '.' : *sig;
  out[n] = '\0';
}

static void method_label(jmethodID m, char* out, size_t size) {
  char* name = NULL;
  char* sig = NULL;
  jclass klass = NULL;
  char cls[1024] = "?";
  if ((*jvmti)->GetMethodDeclaringClass(jvmti, m, &klass) == JVMTI_ERROR_NONE &&
      (*jvmti)->GetClassSignature(jvmti, klass, &sig, NULL) == JVMTI_ERROR_NONE) {
    class_name(sig, cls, sizeof cls);
    (*jvmti)->Deallocate(jvmti, (unsigned char*)sig);
  }
  if ((*jvmti)->GetMethodName(jvmti, m, &name, NULL, NULL) != JVMTI_ERROR_NONE) name = NULL;
  snprintf(out, size, "%s.%s", cls, name ? name : "?");
  if (name) (*jvmti)->Deallocate(jvmti, (unsigned char*)name);
}

static int by_count(const void* a, const void* b) {
  const TraceCount* x = *(TraceCount* const*)a;
  const TraceCount* y = *(TraceCount* const*)b;
  return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

// HPROF's text report: TRACEs, then CPU SAMPLES ranked by count. Called with `lock` held.
static void write_report(FILE* out, JNIEnv* jni) {
  if ((*jni)->PushLocalFrame(jni, 64) != 0) return;
  static TraceCount* order[MAX_TRACES];
  char label[2048];
  for (int i = 0; i < trace_count; ++i) {
    order[i] = &traces[i];
    fprintf(out, "TRACE %d:\n", 300001 + i);
    for (int f = 0; f < traces[i].depth; ++f) {
      method_label(traces[i].frames[f], label, sizeof label);
      fprintf(out, "\t%s(<Unknown Source>)\n", label);
    }
  }
  qsort(order, (size_t)trace_count, sizeof order[0], by_count);
  const time_t now = time(NULL);
  char date[64];
  strftime(date, sizeof date, "%a %b %e %H:%M:%S %Y", localtime(&now));
  fprintf(out, "CPU SAMPLES BEGIN (total = %ld) %s\n", total_samples, date);
  fprintf(out, "rank   self  accum   count trace method\n");
  double accum = 0;
  for (int i = 0; i < trace_count; ++i) {
    const double self = 100.0 * (double)order[i]->count / (double)total_samples;
    accum += self;
    method_label(order[i]->frames[0], label, sizeof label);
    fprintf(out, "%4d %5.2f%% %5.2f%% %7ld %d %s\n", i + 1, self, accum, order[i]->count,
            300001 + (int)(order[i] - traces), label);
  }
  fprintf(out, "CPU SAMPLES END\n");
  (*jni)->PopLocalFrame(jni, NULL);
}

static const char kHeader[] = "JAVA PROFILE 1.0.1, created by attach_test_agent\n\n--------\n\n";

// Ends the session: the sampler stops, the report is written, everything is reset. Returns 0, or
// 1 when no session runs.
static int end_session(JNIEnv* jni, int final_sample, const char* why) {
  (*jvmti)->RawMonitorEnter(jvmti, lock);
  if (!session) {
    (*jvmti)->RawMonitorExit(jvmti, lock);
    return 1;
  }
  stopping = 1;
  (*jvmti)->RawMonitorNotifyAll(jvmti, lock);
  while (sampler_running) (*jvmti)->RawMonitorWait(jvmti, lock, 0);
  // The raw monitor is reentrant: sample_once takes it again.
  if (final_sample) sample_once(jni);
  FILE* out = net_out;
  if (!out && file_path[0]) {
    out = fopen(file_path, "w");
    if (out) fputs(kHeader, out);
  }
  if (out) {
    for (long i = 0; i < padding; ++i) fputc('\n', out);
    write_report(out, jni);
    fclose(out);
  }
  net_out = NULL;
  session = 0;
  trace_count = 0;
  total_samples = 0;
  (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_VM_DEATH, NULL);
  (*jvmti)->RawMonitorExit(jvmti, lock);
  say(why);
  return 0;
}

static void JNICALL on_vm_death(jvmtiEnv* env, JNIEnv* jni) {
  (void)env;
  end_session(jni, 0, "report written at VM death");
}

static FILE* connect_to(const char* address) {
  char host[256];
  const char* colon = strrchr(address, ':');
  if (!colon || (size_t)(colon - address) >= sizeof host) return NULL;
  memcpy(host, address, (size_t)(colon - address));
  host[colon - address] = '\0';
  struct addrinfo hints = {0};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  struct addrinfo* res = NULL;
  if (getaddrinfo(host, colon + 1, &hints, &res) != 0) return NULL;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int ok = fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0;
  freeaddrinfo(res);
  if (!ok) {
    if (fd >= 0) close(fd);
    return NULL;
  }
  return fdopen(fd, "w");
}

static int start_session(JNIEnv* jni, const char* options) {
  char opts[4096];
  snprintf(opts, sizeof opts, "%s", options ? options : "");
  char net[512] = "";
  file_path[0] = '\0';
  interval_ms = 10;
  padding = 0;
  for (char *save = NULL, *word = strtok_r(opts, ",", &save); word;
       word = strtok_r(NULL, ",", &save)) {
    if (strncmp(word, "net=", 4) == 0) {
      snprintf(net, sizeof net, "%s", word + 4);
    } else if (strncmp(word, "file=", 5) == 0) {
      snprintf(file_path, sizeof file_path, "%s", word + 5);
    } else if (strncmp(word, "padding=", 8) == 0) {
      padding = atol(word + 8);
      if (padding < 0) return 2;
    } else if (strcmp(word, "cpu=samples") == 0) {
      // HPROF's option for what this agent does anyway (jvmprof record's default).
    } else if (strncmp(word, "interval=", 9) == 0) {
      interval_ms = atoi(word + 9);
      if (interval_ms <= 0) return 2;
    } else {
      fprintf(stderr, "attach-test-agent: unknown option '%s'\n", word);
      return 2;
    }
  }
  if (!net[0] == !file_path[0]) {
    fprintf(stderr, "attach-test-agent: give net=HOST:PORT or file=PATH\n");
    return 2;
  }
  (*jvmti)->RawMonitorEnter(jvmti, lock);
  if (session) {
    (*jvmti)->RawMonitorExit(jvmti, lock);
    fprintf(stderr, "attach-test-agent: a session already runs\n");
    return 3;
  }
  if (net[0]) {
    net_out = connect_to(net);
    if (!net_out) {
      (*jvmti)->RawMonitorExit(jvmti, lock);
      fprintf(stderr, "attach-test-agent: cannot connect to %s\n", net);
      return 4;
    }
    fputs(kHeader, net_out);
    fflush(net_out);
  }
  jclass thread_class = (*jni)->FindClass(jni, "java/lang/Thread");
  jmethodID init = thread_class
                       ? (*jni)->GetMethodID(jni, thread_class, "<init>", "(Ljava/lang/String;)V")
                       : NULL;
  jstring name = (*jni)->NewStringUTF(jni, "attach-test-agent sampler");
  jobject thread = init && name ? (*jni)->NewObject(jni, thread_class, init, name) : NULL;
  stopping = 0;
  announced = 0;
  sampler_running = 1;
  if (!thread || (*jvmti)->RunAgentThread(jvmti, thread, sampler, NULL,
                                          JVMTI_THREAD_MAX_PRIORITY) != JVMTI_ERROR_NONE) {
    sampler_running = 0;
    if (net_out) fclose(net_out);
    net_out = NULL;
    (*jvmti)->RawMonitorExit(jvmti, lock);
    fprintf(stderr, "attach-test-agent: cannot start the sampler thread\n");
    return 5;
  }
  session = 1;
  (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL);
  (*jvmti)->RawMonitorExit(jvmti, lock);
  char line[4200];
  snprintf(line, sizeof line, "attached (%s)", options);
  say(line);
  return 0;
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM* vm, char* options, void* reserved) {
  (void)reserved;
  JNIEnv* jni = NULL;
  if ((*vm)->GetEnv(vm, (void**)&jni, JNI_VERSION_1_8) != JNI_OK) return 10;
  if (!jvmti) {
    jvmtiEnv* env = NULL;
    if ((*vm)->GetEnv(vm, (void**)&env, JVMTI_VERSION_1_2) != JNI_OK) return 11;
    jvmtiEventCallbacks callbacks;
    memset(&callbacks, 0, sizeof callbacks);
    callbacks.VMDeath = on_vm_death;
    if ((*env)->CreateRawMonitor(env, "attach-test-agent", &lock) != JVMTI_ERROR_NONE ||
        (*env)->SetEventCallbacks(env, &callbacks, sizeof callbacks) != JVMTI_ERROR_NONE)
      return 12;
    jvmti = env;
  }
  if (options && strcmp(options, "stop") == 0) return end_session(jni, 1, "detached");
  return start_session(jni, options);
}
