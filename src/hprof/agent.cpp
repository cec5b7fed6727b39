// SPDX-License-Identifier: Apache-2.0
// libhprof.so: HPROF as a JVMPI agent on libjvmpi.
//
// -agentlib:hprof=<options> (or -Xrunhprof:<options>) loads this library as a JVMTI agent. Its
// Agent_OnLoad loads libjvmpi.so from the same directory and hands it this library as the JVMPI
// agent, so the VM then calls our JVM_OnLoad through the JVMPI runtime, exactly as any other JVMPI
// agent is started. Agent_OnAttach does the same in a running VM (jcmd PID JVMTI.agent_load
// libhprof.so <options>); the option string `stop` writes the report and detaches
// (docs/attach.md).

#include <dlfcn.h>
#include <jni.h>
#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "allocation_site_memo.h"
#include "command_listener.h"
#include "identity.h"
#include "jvmpi_client.h"
#include "object_classes.h"
#include "period_report.h"
#include "pre_attach_site.h"
#include "profile.h"
#include "reports.h"
#include "text_report.h"

namespace hprof::agent {
namespace {

JVMPI_Interface* g_jvmpi = nullptr;
JVMPI_ExtInterface* g_jvmpi_ext = nullptr;
// The running session's profile; a new one for each attach.
Profile* g_profile = nullptr;
// Loaded into a running VM: start-up errors fail the attach instead of ending the process.
bool g_attached = false;
bool g_session_running = false;

// The class of the object a RequestEvent(OBJECT_ALLOC) on this thread asked about.
thread_local bool t_expect_requested_alloc = false;
thread_local jobjectID t_requested_class = nullptr;
thread_local jint t_requested_type = 0;

void error(const std::string& message) {
  std::fprintf(stderr, "hprof: error: %s\n", message.c_str());
}

// The serial of a thread; one HPROF has not heard of yet (its THREAD_START was not delivered, e.g.
// it started before the VM could describe threads) is asked for, as JVMPI intends.
unsigned thread_serial(JNIEnv* env) {
  Profile& p = profile();
  unsigned serial = p.threads.serial_of(env);
  if (serial != kUnknownThreadSerial || env == nullptr) return serial;
  if (jobjectID thread = jvmpi()->GetThreadObject(env); thread != nullptr) {
    jvmpi()->RequestEvent(JVMPI_EVENT_THREAD_START, thread);
    serial = p.threads.serial_of(env);
  }
  return serial;
}

// Calls f(frames, count, thread serial for traces) with the calling thread's stack to the
// profile's depth.
// With `locations`, the frames carry bytecode indexes (GetCallTraceLocations), not lines.
template <typename F>
unsigned with_current_stack(JNIEnv* env, F&& f, bool locations = false) {
  Profile& p = profile();
  // Every allocation comes here: the usual depths need no heap allocation.
  constexpr int kOnStack = 64;
  JVMPI_CallFrame on_stack[kOnStack];
  std::vector<JVMPI_CallFrame> on_heap;
  JVMPI_CallFrame* frames = on_stack;
  if (p.options.depth > kOnStack) {
    on_heap.resize(static_cast<size_t>(p.options.depth));
    frames = on_heap.data();
  }
  JVMPI_CallTrace trace{env, 0, frames};
  if (locations) {
    g_jvmpi_ext->GetCallTraceLocations(&trace, p.options.depth);
  } else {
    jvmpi()->GetCallTrace(&trace, p.options.depth);
  }
  // A thread nobody can name (one still being attached, allocating its own Thread object) puts
  // no thread in the trace, like JDK 8's serial 0.
  unsigned thread = p.options.thread_in_traces ? thread_serial(env) : 0;
  if (thread == kUnknownThreadSerial) thread = 0;
  return f(frames, trace.num_frames, thread);
}

unsigned current_trace(JNIEnv* env) {
  Profile& p = profile();
  if (p.options.depth == 0) return kEmptyTraceSerial;
  return with_current_stack(env, [&](const JVMPI_CallFrame* frames, int count, unsigned thread) {
    return p.traces.intern(frames, count, thread);
  });
}

// The site of an allocation of `class_id` on the calling thread. Where the runtime has
// GetCallTraceLocations, the site finder keys on bytecode indexes and looks lines up only for a
// stack it has not seen (the allocation event comes on the allocating thread).
uint32_t current_site(JNIEnv* env, jint type, jobjectID class_id) {
  Profile& p = profile();
  if (p.options.depth == 0) return p.sites.site_index({type, class_id, kEmptyTraceSerial});
  static const bool by_location =
      g_jvmpi_ext != nullptr && JVMPI_EXT_HAS(g_jvmpi_ext, LineOfLocation);
  return with_current_stack(
      env,
      [&](const JVMPI_CallFrame* frames, int count, unsigned thread) {
        return p.site_finder.find(p.sites, p.traces, frames, count, thread, type, class_id,
                                  by_location ? g_jvmpi_ext->LineOfLocation : nullptr);
      },
      by_location);
}

void on_thread_start(const JVMPI_Event& e) {
  Profile& p = profile();
  const unsigned serial = p.threads.on_thread_start(e);
  const char* name = e.u.thread_start.thread_name != nullptr ? e.u.thread_start.thread_name : "";
  const char* group = e.u.thread_start.group_name != nullptr ? e.u.thread_start.group_name : "";
  if (p.options.binary) {
    // A slow front end never blocks the starting thread: with its queue full the record is
    // dropped (and counted).
    Output::EventScope event(p.output, 64 + std::strlen(name) + std::strlen(group));
    if (!event.admitted()) return;
    p.binary.start_thread(serial, e.u.thread_start.thread_id,
                          p.threads.find(e.u.thread_start.thread_env_id));
    return;
  }
  if (p.options.cpu == CpuMode::kOld) return;
  const std::string line = text::thread_start(serial, e.u.thread_start.thread_id, name, group);
  Output::EventScope event(p.output, line.size());
  if (event.admitted()) p.output.write(line);
}

void on_thread_end(const JVMPI_Event& e) {
  Profile& p = profile();
  const unsigned serial = p.threads.on_thread_end(e.env_id);
  if (serial == 0 || p.options.cpu == CpuMode::kOld) return;
  if (p.options.binary) {
    Output::EventScope event(p.output, 16);
    if (event.admitted()) p.binary.end_thread(serial);
    return;
  }
  const std::string line = text::thread_end(serial);
  Output::EventScope event(p.output, line.size());
  if (event.admitted()) p.output.write(line);
}

void on_object_alloc(const JVMPI_Event& e, bool requested) {
  if (requested) {
    if (t_expect_requested_alloc) {
      t_requested_class = e.u.obj_alloc.class_id;
      t_requested_type = e.u.obj_alloc.is_array;
    }
    return;
  }
  const auto& a = e.u.obj_alloc;
  profile().sites.on_alloc_at(a.obj_id, current_site(e.env_id, a.is_array, a.class_id), a.size);
}

// heap=sites,sample=: a sampled allocation from the runtime, on the allocating thread.
void JNICALL on_alloc_sample(void*, const JVMPIExt_AllocSample* sample) {
  const auto& e = sample->event.u.obj_alloc;
  Profile& p = profile();
  // The sites recompute the sample's weight from its size (as the runtime did), so that the
  // object's OBJECT_FREE can take the same amount away.
  p.sites.on_alloc_at(e.obj_id, current_site(sample->event.env_id, e.is_array, e.class_id), e.size);
}

void write_wait_line(const JVMPI_Event& e, bool waited) {
  Profile& p = profile();
  if (p.options.binary) return;
  const unsigned serial = thread_serial(e.env_id);
  // Threads the VM started before it could describe them have no THREAD START yet.
  const std::string thread = serial == kUnknownThreadSerial ? std::string("<unknown thread>")
                                                            : "thread " + std::to_string(serial);
  const auto& w = e.u.monitor_wait;
  char line[512];
  if (w.object == nullptr) {
    if (waited) return;  // a finished sleep has no line of its own
    std::snprintf(line, sizeof line, "SLEEP: timeout=%lld, %s\n", static_cast<long long>(w.timeout),
                  thread.c_str());
  } else {
    const std::string sig = monitor_signature(class_name_of_object(w.object));
    std::snprintf(line, sizeof line, "%s: MONITOR %s, %s=%lld, %s\n", waited ? "WAITED" : "WAIT",
                  sig.c_str(), waited ? "time_waited" : "timeout",
                  static_cast<long long>(w.timeout), thread.c_str());
  }
  const size_t length = std::strlen(line);
  Output::EventScope event(p.output, length);
  if (event.admitted()) p.output.write(line, length);
}

bool enable(jint type, const char* what) {
  if (jvmpi()->EnableEvent(type, nullptr) == JVMPI_SUCCESS) return true;
  error(std::string("the JVMPI runtime cannot deliver ") + what);
  return false;
}

// OBJECT_ALLOC and OBJECT_FREE (or sampled allocations, sample=) for heap=sites and heap=dump.
bool enable_allocation_events(Profile& p) {
  if (p.options.sample_bytes > 0) {
    if (!enable(JVMPI_EVENT_OBJECT_FREE, "object frees")) return false;
    if (g_jvmpi_ext == nullptr ||
        g_jvmpi_ext->StartAllocationSampling(p.options.sample_bytes, on_alloc_sample, nullptr) !=
            JVMPI_SUCCESS) {
      error("sampled allocations (sample=) are not available with this JVMPI runtime or VM");
      return false;
    }
    return true;
  }
  if (!p.options.object_tracking()) return true;
  return enable(JVMPI_EVENT_OBJECT_ALLOC, "object allocations") &&
         enable(JVMPI_EVENT_OBJECT_FREE, "object frees");
}

void on_init_done() {
  Profile& p = profile();
  if (g_attached && p.options.alloc_sites) {
    // Counted before allocations are reported, so that no object counts twice (docs/attach.md).
    std::string message;
    if (!count_objects_allocated_before(p, message)) error(message);
    if (!enable_allocation_events(p)) error("allocation sites (heap=sites) stay empty");
  }
  if (p.options.cpu_samples() && !p.sampler.start()) {
    error("cannot start the CPU sampling thread; no CPU samples will be taken");
  }
  if (p.options.net() && !start_command_listener()) {
    error("cannot start the command listener; commands from the front end are ignored");
  }
  if (!start_periods()) error("cannot start the period thread; only the last period is sent");
}

void on_shut_down() {
  Profile& p = profile();
  p.sampler.stop();
  finish_periods();
  if (p.options.dump_on_exit) write_all_reports();
  if (p.options.binary) {
    // The stream's last word on what was dropped, once the queue has room again (so that events
    // of the last moments are not dropped after it).
    p.output.drain();
    p.binary.note_drops();
  }
  p.output.close();
}

// The timer of method events, set before they are enabled: the hot path of cpu=times goes to it
// without the profile's lookup or the switch below.
CpuTimer* g_method_timer = nullptr;

void notify_event(JVMPI_Event* event) {
  if (CpuTimer* timer = g_method_timer; timer != nullptr) [[likely]] {
    if (event->event_type == JVMPI_EVENT_METHOD_ENTRY) [[likely]] {
      timer->on_entry(event->env_id, event->u.method.method_id);
      return;
    }
    if (event->event_type == JVMPI_EVENT_METHOD_EXIT) [[likely]] {
      timer->on_exit(event->env_id, event->u.method.method_id);
      return;
    }
  }
  const bool requested = (event->event_type & JVMPI_REQUESTED_EVENT) != 0;
  const jint type = event->event_type & ~JVMPI_REQUESTED_EVENT;
  Profile& p = profile();
  switch (type) {
    case JVMPI_EVENT_THREAD_START:
      on_thread_start(*event);
      break;
    case JVMPI_EVENT_THREAD_END:
      if (p.options.cpu_timing()) p.timer.on_thread_end(event->env_id);
      on_thread_end(*event);
      break;
    case JVMPI_EVENT_METHOD_ENTRY:
      p.timer.on_entry(event->env_id, event->u.method.method_id);
      break;
    case JVMPI_EVENT_METHOD_EXIT:
      p.timer.on_exit(event->env_id, event->u.method.method_id);
      break;
    case JVMPI_EVENT_CLASS_LOAD: {
      bool is_new = false;
      // Heap dumps name each class's load trace, as JDK 8's did; a stack walk per loaded class is
      // paid only when a heap dump is asked for.
      const unsigned load_trace = p.options.heap_dump && !requested && event->env_id != nullptr
                                      ? current_trace(event->env_id)
                                      : kEmptyTraceSerial;
      const ClassInfo info = p.classes.on_class_load(*event, &is_new, load_trace);
      if (is_new && p.options.binary) {
        // Later records name the class: never dropped, but never waiting for the front end.
        Output::EventScope scope(p.output, 0, /*droppable=*/false);
        p.binary.load_class(info, event->u.class_load.class_id);
      }
      break;
    }
    case JVMPI_EVENT_CLASS_UNLOAD: {
      const unsigned serial = p.classes.on_class_unload(event->u.class_unload.class_id);
      if (serial != 0 && p.options.binary) {
        Output::EventScope scope(p.output, 0, /*droppable=*/false);
        p.binary.unload_class(serial);
      }
      break;
    }
    case JVMPI_EVENT_OBJECT_ALLOC:
      on_object_alloc(*event, requested);
      break;
    case JVMPI_EVENT_OBJECT_FREE:
      p.sites.on_free(event->u.obj_free.obj_id);
      break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER:
      p.monitors.on_contended_enter(event->env_id, event->u.monitor.object);
      break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
      p.monitors.on_contended_entered(
          event->env_id, current_trace(event->env_id),
          MonitorProfile::class_of(event->u.monitor.object, class_name_of_object));
      break;
    case JVMPI_EVENT_MONITOR_WAIT:
      write_wait_line(*event, false);
      break;
    case JVMPI_EVENT_MONITOR_WAITED:
      write_wait_line(*event, true);
      break;
    case JVMPI_EVENT_HEAP_DUMP:
      on_heap_dump_event(*event);
      break;
    case JVMPI_EVENT_MONITOR_DUMP:
      on_monitor_dump_event(*event);
      break;
    case JVMPI_EVENT_DATA_DUMP_REQUEST:
      write_all_reports();
      break;
    case JVMPI_EVENT_DATA_RESET_REQUEST:
      p.cpu_samples.clear();
      p.timer.clear();
      p.sites.clear_counts();
      break;
    case JVMPI_EVENT_JVM_INIT_DONE:
      on_init_done();
      break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
      on_shut_down();
      break;
    default:
      break;
  }
}

jint start(JavaVM* vm, char* text) {
  JVMPI_Interface* table = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&table), JVMPI_VERSION_1_2) != JNI_OK) {
    error("no JVMPI interface (libhprof.so must run on libjvmpi.so)");
    return JNI_ERR;
  }
  set_jvmpi(table);
  if (g_attached) begin_profile();
  JVMPI_ExtInterface* ext = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&ext), JVMPI_EXT_VERSION_1) == JNI_OK) g_jvmpi_ext = ext;
  Profile& p = profile();
  std::string message;
  // Start-up errors end the process with status 1 after one line saying why, as JDK 8 did,
  // rather than adding the runtime's and the VM's own failure lines. An attach only fails: the
  // program it was attached to runs on.
  if (!parse_options(text, p.options, message)) {
    if (g_attached) {
      error(message + " (not attached; the option string is -agentlib:hprof's, e.g. cpu=samples)");
      return JNI_ERR;
    }
    std::fputs(help_text(), stderr);
    error(message);
    jvmpi()->ProfilerExit(1);
  }
  if (p.options.help) {
    std::fputs(help_text(), stdout);
    std::fflush(stdout);
    if (g_attached) return JNI_ERR;
    jvmpi()->ProfilerExit(0);
  }
  if (!p.output.open(p.options, message)) {
    error(message);
    if (g_attached) return JNI_ERR;
    jvmpi()->ProfilerExit(1);
  }
  if (p.options.binary) {
    p.binary.begin(p.output, p.options);
  } else if (p.options.cpu != CpuMode::kOld) {
    p.output.write(text::header());
  }
  if (p.options.net() && (p.options.binary || p.options.cpu != CpuMode::kOld)) {
    const std::string identity = identity_text(vm, p.options);
    remember_identity(identity);
    if (p.options.binary) {
      p.binary.note(BinaryReport::kIdentityNoteId, identity);
    } else {
      p.output.write(identity + "\n");
    }
  }

  table->NotifyEvent = notify_event;
  bool ok = enable(JVMPI_EVENT_THREAD_START, "thread starts") &&
            enable(JVMPI_EVENT_THREAD_END, "thread ends") &&
            enable(JVMPI_EVENT_CLASS_LOAD, "class loads") &&
            enable(JVMPI_EVENT_CLASS_UNLOAD, "class unloads") &&
            enable(JVMPI_EVENT_JVM_INIT_DONE, "VM start-up") &&
            enable(JVMPI_EVENT_JVM_SHUT_DOWN, "VM shut-down") &&
            enable(JVMPI_EVENT_DATA_DUMP_REQUEST, "dump requests") &&
            enable(JVMPI_EVENT_DATA_RESET_REQUEST, "reset requests");
  if (ok && p.options.sample_bytes > 0) p.sites.set_sample_interval(p.options.sample_bytes);
  if (ok && g_attached && p.options.alloc_sites) {
    // Attached: the objects that exist are counted first (at JVM_INIT_DONE), then allocations
    // are reported; refuse now what could not be done then.
    if (g_jvmpi_ext == nullptr || !JVMPI_EXT_HAS(g_jvmpi_ext, ClassHistogram)) {
      error("this JVMPI runtime cannot count the objects allocated before the attach");
      ok = false;
    }
  } else if (ok) {
    ok = enable_allocation_events(p);
  }
  if (ok && p.options.monitor) {
    ok = enable(JVMPI_EVENT_MONITOR_CONTENDED_ENTER, "monitor contention") &&
         enable(JVMPI_EVENT_MONITOR_CONTENDED_ENTERED, "monitor contention") &&
         enable(JVMPI_EVENT_MONITOR_WAIT, "monitor waits") &&
         enable(JVMPI_EVENT_MONITOR_WAITED, "monitor waits");
  }
  if (ok && p.options.cpu_timing()) {
    g_method_timer = &p.timer;
    ok = enable(JVMPI_EVENT_METHOD_ENTRY, "method entries (cpu=times)") &&
         enable(JVMPI_EVENT_METHOD_EXIT, "method exits (cpu=times)");
  }
  if (!ok) {
    if (g_attached) return JNI_ERR;
    jvmpi()->ProfilerExit(1);
  }
  g_session_running = true;
  return JNI_OK;
}

}  // namespace

JVMPI_Interface* jvmpi() {
  return g_jvmpi;
}
void set_jvmpi(JVMPI_Interface* table) {
  g_jvmpi = table;
}
JVMPI_ExtInterface* jvmpi_ext() {
  return g_jvmpi_ext;
}

Profile& profile() {
  // Never destroyed while its session runs: VM threads may still report events while the
  // process exits. A detach ends the session first (end_profile).
  if (g_profile == nullptr) g_profile = new Profile;
  return *g_profile;
}

void set_attached() {
  g_attached = true;
}
bool session_running() {
  return g_session_running;
}
void set_session_running(bool running) {
  g_session_running = running;
}

void begin_profile() {
  g_method_timer = nullptr;
  g_profile = new Profile;
}

void end_profile() {
  g_method_timer = nullptr;
  Profile* p = g_profile;
  g_profile = nullptr;
  delete p;
}

std::string class_name_of_object(jobjectID object) {
  if (object == nullptr) return "<Unknown Class>";
  t_expect_requested_alloc = true;
  t_requested_class = nullptr;
  t_requested_type = -1;
  jvmpi()->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, object);
  t_expect_requested_alloc = false;
  if (t_requested_type < 0) return "<Unknown Class>";
  return text::site_class_name(profile().classes, SiteKey{t_requested_type, t_requested_class, 0});
}

}  // namespace hprof::agent

namespace {

// HPROF's JVMPI entry point. Deliberately not exported as JVM_OnLoad: for -Xrunhprof the VM would
// then call it directly, with a JavaVM that no longer offers JVMPI.
jint JNICALL hprof_on_load(JavaVM* vm, char* options, void*) {
  return hprof::agent::start(vm, options);
}

// libjvmpi.so from beside this library, and the path of this library; null (one line on stderr)
// when either cannot be found.
void* load_runtime(std::string& self_path) {
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&hprof_on_load), &self) == 0 || self.dli_fname == nullptr) {
    std::fprintf(stderr, "hprof: error: cannot find where libhprof.so was loaded from\n");
    return nullptr;
  }
  self_path = self.dli_fname;
  const std::string runtime = self_path.substr(0, self_path.rfind('/') + 1) + "libjvmpi.so";
  void* handle = dlopen(runtime.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    std::fprintf(stderr, "hprof: error: cannot load the JVMPI runtime %s: %s\n", runtime.c_str(),
                 dlerror());
  }
  return handle;
}

template <typename F>
F runtime_function(void* handle, const char* name) {
  auto f = reinterpret_cast<F>(dlsym(handle, name));
  if (f == nullptr) std::fprintf(stderr, "hprof: error: libjvmpi.so has no %s\n", name);
  return f;
}

using StartAgent = jint(JNICALL*)(JavaVM*, const char*, jint(JNICALL*)(JavaVM*, char*, void*),
                                  const char*);
using StopAgent = jint(JNICALL*)();

jint start_with_runtime(JavaVM* vm, const char* options) {
  std::string path;
  void* handle = load_runtime(path);
  if (handle == nullptr) return JNI_ERR;
  auto start_agent = runtime_function<StartAgent>(handle, "JVMPI_StartAgent");
  if (start_agent == nullptr) return JNI_ERR;
  return start_agent(vm, path.c_str(), hprof_on_load, options != nullptr ? options : "");
}

// The option string `stop`: the report (JVM_SHUT_DOWN), then the runtime detaches; the session's
// profile is freed once every thread of it has ended.
jint stop_attached() {
  std::string path;
  void* handle = load_runtime(path);
  if (handle == nullptr) return JNI_ERR;
  auto stop_agent = runtime_function<StopAgent>(handle, "JVMPI_StopAgent");
  if (stop_agent == nullptr) return JNI_ERR;
  if (!hprof::agent::session_running()) {
    std::fprintf(stderr, "hprof: error: no HPROF session runs in this VM; nothing to stop\n");
    return JNI_ERR;
  }
  const jint result = stop_agent();
  if (result != JNI_OK) return result;
  hprof::agent::set_session_running(false);
  if (hprof::agent::wait_for_command_listener_end()) {
    hprof::agent::end_profile();
    malloc_trim(0);  // the profile's memory back to the system
  } else {
    std::fprintf(stderr,
                 "hprof: warning: the command listener did not end; its profile stays in memory\n");
  }
  return JNI_OK;
}

}  // namespace

extern "C" JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM* vm, char* options, void*) {
  // Find libjvmpi.so beside this library, and start it with HPROF as its JVMPI agent.
  return start_with_runtime(vm, options);
}

// jcmd PID JVMTI.agent_load /path/libhprof.so '<hprof options>', or '... stop'.
extern "C" JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM* vm, char* options, void*) {
  if (options != nullptr && std::strcmp(options, "stop") == 0) return stop_attached();
  hprof::agent::set_attached();
  const jint result = start_with_runtime(vm, options);
  if (result != JNI_OK && hprof::agent::jvmpi() != nullptr) {
    // Nothing of the failed session runs (the runtime undid what its JVM_OnLoad enabled).
    hprof::agent::profile().output.close();
    hprof::agent::end_profile();
  }
  return result;
}
