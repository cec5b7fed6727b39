#include "gc_events.h"

#include <jvmpi.h>

#include <vector>

#include "allocation_events.h"
#include "class_events.h"
#include "class_layouts.h"
#include "event_gate.h"
#include "jvmti_access.h"
#include "log.h"
#include "object_ids.h"
#include "thread_events.h"

namespace jvmpi::gc_events {
namespace {

jrawMonitorID g_lock = nullptr;
// Guarded by g_lock.
long g_collections_finished = 0;
std::vector<jlong> g_freed_tags;
bool g_stopping = false;
bool g_running = false;

struct HeapFigures {
  jlong objects = 0;
  jlong bytes = 0;
};

jint JNICALL count_object(jlong, jlong size, jlong*, jint, void* user_data) {
  auto* figures = static_cast<HeapFigures*>(user_data);
  ++figures->objects;
  figures->bytes += size;
  return 0;
}

jlong committed_heap_bytes(JNIEnv* jni) {
  jclass runtime_class = jni->FindClass("java/lang/Runtime");
  if (runtime_class == nullptr) {
    jni->ExceptionClear();
    return 0;
  }
  LocalRef class_ref(jni, runtime_class);
  jmethodID get_runtime =
      jni->GetStaticMethodID(runtime_class, "getRuntime", "()Ljava/lang/Runtime;");
  jmethodID total = jni->GetMethodID(runtime_class, "totalMemory", "()J");
  if (get_runtime == nullptr || total == nullptr) {
    jni->ExceptionClear();
    return 0;
  }
  LocalRef runtime(jni, jni->CallStaticObjectMethod(runtime_class, get_runtime));
  jlong bytes = runtime.get() != nullptr ? jni->CallLongMethod(runtime.get(), total) : 0;
  if (jni->ExceptionCheck()) {
    jni->ExceptionClear();
    return 0;
  }
  return bytes;
}

void send_gc_finish(JNIEnv* jni) {
  if (!gate::wants(JVMPI_EVENT_GC_FINISH)) return;
  // A heap walk gives the object count and the space they use after this collection, both from
  // the same snapshot; the committed heap size is the total object space.
  HeapFigures figures;
  jvmtiHeapCallbacks callbacks{};
  callbacks.heap_iteration_callback = count_object;
  jvmti_ok(jvmti()->IterateThroughHeap(0, nullptr, &callbacks, &figures), "IterateThroughHeap");
  JVMPI_Event event{};
  event.event_type = JVMPI_EVENT_GC_FINISH;
  event.env_id = nullptr;  // the collector runs in no Java thread the agent knows
  event.u.gc_info.used_objects = figures.objects;
  event.u.gc_info.used_object_space = figures.bytes;
  event.u.gc_info.total_object_space = std::max(committed_heap_bytes(jni), figures.bytes);
  gate::deliver(&event);
}

void send_gc_start() {
  if (!gate::wants(JVMPI_EVENT_GC_START)) return;
  JVMPI_Event event{};
  event.event_type = JVMPI_EVENT_GC_START;
  event.env_id = nullptr;
  gate::deliver(&event);
}

void deliver_freed(const std::vector<jlong>& tags) {
  const bool objects_wanted = gate::wants(JVMPI_EVENT_OBJECT_FREE);
  for (jlong tag : tags) {
    if (class_events::on_object_freed(tag)) {
      allocation_events::forget_class(tag);
      class_layouts::forget(tag);
    } else if (objects_wanted) {
      JVMPI_Event event{};
      event.event_type = JVMPI_EVENT_OBJECT_FREE;
      event.env_id = nullptr;  // freed by the collector, in no thread the agent knows
      event.u.obj_free.obj_id = object_ids::from_tag(tag);
      gate::deliver(&event);
    }
  }
}

// JVMTI posts ObjectFree events lazily; any tag-map operation posts the pending ones at once, on
// the calling thread. Doing one right after a collection puts all it freed inside its pair.
void flush_object_free_events() {
  jthread self = nullptr;
  if (jvmti()->GetCurrentThread(&self) != JVMTI_ERROR_NONE || self == nullptr) return;
  jlong tag = 0;
  jvmti()->GetTag(self, &tag);
  if (JNIEnv* jni = current_jni_env(); jni != nullptr) jni->DeleteLocalRef(self);
}

void JNICALL reporter_main(jvmtiEnv*, JNIEnv* jni, void*) {
  long reported = 0;
  // Frees not yet delivered. OBJECT_FREE and CLASS_UNLOAD always arrive between a GC_START and a
  // GC_FINISH, so frees that show up without a new collection wait for the next one.
  std::vector<jlong> pending;
  for (;;) {
    jvmti()->RawMonitorEnter(g_lock);
    while (!g_stopping && reported == g_collections_finished && g_freed_tags.empty()) {
      jvmti()->RawMonitorWait(g_lock, 0);
    }
    const long finished = g_collections_finished;
    const bool stopping = g_stopping;
    jvmti()->RawMonitorExit(g_lock);

    if (finished != reported) flush_object_free_events();
    jvmti()->RawMonitorEnter(g_lock);
    pending.insert(pending.end(), g_freed_tags.begin(), g_freed_tags.end());
    g_freed_tags.clear();
    jvmti()->RawMonitorExit(g_lock);

    if (finished != reported) {
      // Collections that finished while the previous batch was being delivered are reported as
      // separate pairs; what they freed goes inside the last pair.
      for (; reported < finished - 1; ++reported) {
        send_gc_start();
        send_gc_finish(jni);
      }
      send_gc_start();
      deliver_freed(pending);
      send_gc_finish(jni);
      reported = finished;
      pending.clear();
    } else if (stopping) {
      deliver_freed(pending);  // the VM is going away; no collection will follow
      pending.clear();
    }

    if (stopping) {
      jvmti()->RawMonitorEnter(g_lock);
      const bool done = reported == g_collections_finished && g_freed_tags.empty();
      jvmti()->RawMonitorExit(g_lock);
      if (done) break;
    }
  }
  jvmti()->RawMonitorEnter(g_lock);
  g_running = false;
  jvmti()->RawMonitorNotifyAll(g_lock);
  jvmti()->RawMonitorExit(g_lock);
}

}  // namespace

bool initialize() {
  return jvmti_ok(jvmti()->CreateRawMonitor("JVMPI GC events", &g_lock), "CreateRawMonitor");
}

void JNICALL on_gc_start(jvmtiEnv*) {}

void JNICALL on_gc_finish(jvmtiEnv* env) {
  env->RawMonitorEnter(g_lock);
  ++g_collections_finished;
  env->RawMonitorNotifyAll(g_lock);
  env->RawMonitorExit(g_lock);
}

void JNICALL on_object_free(jvmtiEnv* env, jlong tag) {
  env->RawMonitorEnter(g_lock);
  g_freed_tags.push_back(tag);
  env->RawMonitorNotifyAll(g_lock);
  env->RawMonitorExit(g_lock);
}

void start(JNIEnv* jni) {
  jvmti()->RawMonitorEnter(g_lock);
  g_running = true;
  jvmti()->RawMonitorExit(g_lock);
  if (!thread_events::start_thread(jni, "JVMPI GC reporter", JVMTI_THREAD_MAX_PRIORITY,
                                   reporter_main, nullptr, /*internal=*/true)) {
    log_warning("could not start the GC reporter thread; GC and class-unload events are lost");
    jvmti()->RawMonitorEnter(g_lock);
    g_running = false;
    jvmti()->RawMonitorExit(g_lock);
  }
}

void stop() {
  jvmti()->RawMonitorEnter(g_lock);
  g_stopping = true;
  jvmti()->RawMonitorNotifyAll(g_lock);
  // Bounded: a stuck agent handler on the reporter thread must not hang the VM's exit.
  for (int i = 0; i < 50 && g_running; ++i) jvmti()->RawMonitorWait(g_lock, 100);
  jvmti()->RawMonitorExit(g_lock);
}

}  // namespace jvmpi::gc_events
