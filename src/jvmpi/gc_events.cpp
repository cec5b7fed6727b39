// SPDX-License-Identifier: Apache-2.0
#include "gc_events.h"

#include <jvmpi.h>
#include <semaphore.h>
#include <time.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <mutex>
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

// The GC-finish and ObjectFree callbacks run where a JVMTI raw monitor could deadlock (a Java
// thread holding it can be stopped at the very safepoint whose GC callback then waits for it), so
// they only touch an atomic counter, a plain mutex around a vector push, and a semaphore.
std::atomic<long> g_collections_finished{0};
std::mutex g_freed_mutex;
std::vector<jlong> g_freed_tags;  // guarded by g_freed_mutex
sem_t g_wakeup;
std::atomic<bool> g_stopping{false};
std::mutex g_state_mutex;
std::condition_variable g_state_changed;
bool g_running = false;  // guarded by g_state_mutex

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

// `env`: the reporter's own JNIEnv when the agent was told about the reporter, else NULL.
void send_gc_finish(JNIEnv* jni, JNIEnv* env) {
  if (!gate::wants(JVMPI_EVENT_GC_FINISH)) return;
  // A heap walk gives the object count and the space they use after this collection, both from
  // the same snapshot; the committed heap size is the total object space.
  HeapFigures figures;
  jvmtiHeapCallbacks callbacks{};
  callbacks.heap_iteration_callback = count_object;
  jvmti_ok(jvmti()->IterateThroughHeap(0, nullptr, &callbacks, &figures), "IterateThroughHeap");
  JVMPI_Event event{};
  event.event_type = JVMPI_EVENT_GC_FINISH;
  event.env_id = env;
  event.u.gc_info.used_objects = figures.objects;
  event.u.gc_info.used_object_space = figures.bytes;
  event.u.gc_info.total_object_space = std::max(committed_heap_bytes(jni), figures.bytes);
  gate::deliver(&event);
}

void send_gc_start(JNIEnv* env) {
  if (!gate::wants(JVMPI_EVENT_GC_START)) return;
  JVMPI_Event event{};
  event.event_type = JVMPI_EVENT_GC_START;
  event.env_id = env;
  gate::deliver(&event);
}

void deliver_freed(std::vector<jlong>& tags) {
  // Classes are taken out first, in one pass; what remains are the objects.
  for (jlong tag : class_events::take_classes(tags)) {
    allocation_events::forget_class(tag);
    class_layouts::forget(tag);
  }
  if (!gate::wants(JVMPI_EVENT_OBJECT_FREE)) return;
  for (jlong tag : tags) {
    JVMPI_Event event;  // obj_free has one field, set below
    event.event_type = JVMPI_EVENT_OBJECT_FREE;
    event.env_id = nullptr;  // freed by the collector, in no thread the agent knows
    event.u.obj_free.obj_id = object_ids::from_tag(tag);
    gate::deliver(&event);
  }
}

// JVMTI posts ObjectFree events lazily (from the VM's service thread). A heap walk that starts at
// one object and follows nothing first posts all that are pending, on the calling thread, which
// puts everything a collection freed inside its pair. Only done when the agent wants OBJECT_FREE:
// on JDK 17 each walk also iterates over the whole heap at a safepoint to reset its marks, and
// without the walk late frees (and class unloads) still come, in a pair of their own.
// (Enabling ObjectFree again would post them too, but the VM then waits for its service thread
// without a safepoint check; a safepoint requested meanwhile deadlocks it, seen on JDK 17 and 25.)
jint JNICALL visit_nothing(jvmtiHeapReferenceKind, const jvmtiHeapReferenceInfo*, jlong, jlong,
                           jlong, jlong*, jlong*, jint, void*) {
  return 0;
}

void flush_object_free_events(JNIEnv* jni) {
  if (!gate::wants(JVMPI_EVENT_OBJECT_FREE)) return;
  jthread self = nullptr;
  if (jvmti()->GetCurrentThread(&self) != JVMTI_ERROR_NONE || self == nullptr) return;
  jvmtiHeapCallbacks callbacks{};
  callbacks.heap_reference_callback = visit_nothing;
  jvmti()->FollowReferences(0, nullptr, self, &callbacks, nullptr);
  jni->DeleteLocalRef(self);
}

bool take_freed(std::vector<jlong>& out) {
  std::lock_guard lock(g_freed_mutex);
  out.insert(out.end(), g_freed_tags.begin(), g_freed_tags.end());
  const bool any = !g_freed_tags.empty();
  g_freed_tags.clear();
  return any;
}

void JNICALL reporter_main(jvmtiEnv*, JNIEnv* jni, void*) {
  long reported = 0;
  // Frees not yet delivered. OBJECT_FREE and CLASS_UNLOAD always arrive between a GC_START and a
  // GC_FINISH: with their collection's pair, or, when the VM posts them later, in a pair of
  // their own.
  std::vector<jlong> pending;
  for (;;) {
    // Woken by each collection's end, and at least every 100 ms for frees the VM posts late.
    timespec until{};
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 100 * 1000 * 1000;
    if (until.tv_nsec >= 1000000000L) {
      until.tv_sec += 1;
      until.tv_nsec -= 1000000000L;
    }
    while (sem_timedwait(&g_wakeup, &until) != 0 && errno == EINTR) {
    }
    // This thread never returns to Java: each round's local references (the agent's handlers',
    // too) are released with the round.
    LocalFrame frame(jni);
    const bool stopping = g_stopping.load();
    const long finished = g_collections_finished.load();
    if (finished != reported || stopping) flush_object_free_events(jni);
    take_freed(pending);
    // The pairs carry the reporter's env_id once the agent knows this thread (it is announced
    // before its first pair), so that the agent's GC_START and GC_FINISH handlers find the
    // per-thread state they keep for every thread; both events of a pair carry the same one.
    JNIEnv* const env =
        (finished != reported || !pending.empty()) &&
                (gate::wants(JVMPI_EVENT_GC_START) || gate::wants(JVMPI_EVENT_GC_FINISH)) &&
                thread_events::announce_reporter_thread(jni)
            ? jni
            : nullptr;

    if (finished != reported) {
      // Collections that finished while the previous batch was being delivered are reported as
      // separate pairs; what they freed goes inside the last pair.
      for (; reported < finished - 1; ++reported) {
        send_gc_start(env);
        send_gc_finish(jni, env);
      }
      send_gc_start(env);
      deliver_freed(pending);
      send_gc_finish(jni, env);
      reported = finished;
      pending.clear();
    } else if (!pending.empty()) {
      // Frees of a collection whose pair was already delivered (the VM posted them late): they
      // come at once, in a pair of their own, rather than wait for the next collection.
      send_gc_start(env);
      deliver_freed(pending);
      send_gc_finish(jni, env);
      pending.clear();
    }
    if (stopping) {
      // What the last collection freed but the VM posted only now still comes inside a pair.
      take_freed(pending);
      if (!pending.empty()) {
        JNIEnv* const last_env = thread_events::announce_reporter_thread(jni) ? jni : nullptr;
        send_gc_start(last_env);
        deliver_freed(pending);
        send_gc_finish(jni, last_env);
      }
      thread_events::end_reporter_thread(jni);
      break;
    }
  }
  std::lock_guard lock(g_state_mutex);
  g_running = false;
  g_state_changed.notify_all();
}

}  // namespace

bool initialize() {
  return sem_init(&g_wakeup, 0, 0) == 0;
}

void JNICALL on_gc_finish(jvmtiEnv*) {
  g_collections_finished.fetch_add(1);
  sem_post(&g_wakeup);
}

void JNICALL on_object_free(jvmtiEnv*, jlong tag) {
  // No wake-up: frees are delivered with the collection that freed them, after its finish.
  std::lock_guard lock(g_freed_mutex);
  g_freed_tags.push_back(tag);
}

void start(JNIEnv* jni) {
  {
    std::lock_guard lock(g_state_mutex);
    g_running = true;
  }
  g_stopping.store(false);  // after a detach, the next attach starts the reporter again
  if (!thread_events::start_thread(jni, "JVMPI GC reporter", JVMTI_THREAD_MAX_PRIORITY,
                                   reporter_main, nullptr, /*internal=*/true)) {
    log_warning("could not start the GC reporter thread; GC and class-unload events are lost");
    std::lock_guard lock(g_state_mutex);
    g_running = false;
  }
}

void stop() {
  g_stopping.store(true);
  sem_post(&g_wakeup);
  // Bounded: a stuck agent handler on the reporter thread must not hang the VM's exit.
  std::unique_lock lock(g_state_mutex);
  g_state_changed.wait_for(lock, std::chrono::seconds(5), [] { return !g_running; });
}

}  // namespace jvmpi::gc_events
