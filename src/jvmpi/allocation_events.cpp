#include "allocation_events.h"

#include <jvmpi.h>

#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "class_events.h"
#include "event_gate.h"
#include "jvmti_access.h"
#include "object_events.h"
#include "object_ids.h"
#include "thread_events.h"

namespace jvmpi::allocation_events {
namespace {

// JVMTI's default sampling interval, restored when tracking stops.
constexpr jint kDefaultSamplingInterval = 512 * 1024;
// An interval of one byte makes every allocation cross a sampling point. (Interval 0 is specified
// to do the same, but JDK 17 then samples only allocations outside TLABs.)
constexpr jint kEveryAllocation = 1;

// What an allocation of a given class reports, computed once per class.
struct ClassAllocInfo {
  jint type_code = JVMPI_NORMAL_OBJECT;
  jobjectID class_id = nullptr;  // the element class for reference arrays, none for primitive
};

// While a thread primes its sampler (see prime_current_thread) its own samples are not reported.
thread_local bool t_priming = false;
// The runtime's own allocations (while it sets up at VM init) are not the program's.
thread_local int t_internal_allocations = 0;
thread_local bool t_primed = false;

std::shared_mutex g_mutex;
std::unordered_map<jlong, ClassAllocInfo> g_class_info;  // by the class's tag

ClassAllocInfo compute_info(JNIEnv* jni, jclass klass, jobjectID klass_id) {
  ClassAllocInfo info;
  JvmtiPtr<char> signature;
  if (jvmti()->GetClassSignature(klass, signature.out(), nullptr) != JVMTI_ERROR_NONE) return info;
  info.type_code = object_events::type_code(signature.get(), nullptr);
  if (info.type_code == JVMPI_NORMAL_OBJECT) {
    info.class_id = class_events::ensure_announced(jni, klass);
    if (info.class_id == nullptr) info.class_id = klass_id;
  } else if (info.type_code == JVMPI_CLASS) {
    info.class_id = object_events::element_class_id(jni, klass);
  }
  return info;
}

ClassAllocInfo info_of(JNIEnv* jni, jclass klass) {
  jobjectID klass_id = object_ids::id_of(klass);
  const jlong tag = object_ids::to_tag(klass_id);
  {
    std::shared_lock lock(g_mutex);
    auto it = g_class_info.find(tag);
    if (it != g_class_info.end()) return it->second;
  }
  ClassAllocInfo info = compute_info(jni, klass, klass_id);
  std::unique_lock lock(g_mutex);
  g_class_info.emplace(tag, info);
  return info;
}

}  // namespace

namespace {

void report(JNIEnv* jni, jthread thread, jobject object, jclass klass, jlong size, jobjectID id) {
  object_events::ensure_heap_arena_announced();
  if (!thread_events::ensure_known(jni, thread)) return;
  const ClassAllocInfo info = info_of(jni, klass);
  JVMPI_Event event;  // every field of obj_alloc is set below; zeroing the union costs per object
  event.event_type = JVMPI_EVENT_OBJECT_ALLOC;
  event.env_id = jni;
  auto& e = event.u.obj_alloc;
  e.arena_id = object_events::kHeapArena;
  e.class_id = info.class_id;
  e.is_array = info.type_code;
  e.size = static_cast<jint>(size);
  e.obj_id = id != nullptr ? id : object_ids::tag_new_object(object);
  gate::deliver(&event);
}

}  // namespace

void JNICALL on_sampled_object_alloc(jvmtiEnv*, JNIEnv* jni, jthread thread, jobject object,
                                     jclass klass, jlong size) {
  if (t_priming) {
    t_primed = true;
    return;
  }
  if (t_internal_allocations > 0 || !gate::wants(JVMPI_EVENT_OBJECT_ALLOC)) return;
  report(jni, thread, object, klass, size, nullptr);
}

void JNICALL on_vm_object_alloc(jvmtiEnv*, JNIEnv* jni, jthread thread, jobject object,
                                jclass klass, jlong size) {
  // The VM's own allocations (clone, reflection, ...) usually reached the sampler already and
  // carry their ID; some (clone on JDK 21+) reach only this event.
  if (t_priming || t_internal_allocations > 0 || !gate::wants(JVMPI_EVENT_OBJECT_ALLOC)) return;
  if (object_ids::existing_id_of(object) != nullptr) return;
  report(jni, thread, object, klass, size, nullptr);
}

void forget_class(jlong class_tag) {
  std::unique_lock lock(g_mutex);
  g_class_info.erase(class_tag);
}

InternalAllocations::InternalAllocations() {
  ++t_internal_allocations;
}
InternalAllocations::~InternalAllocations() {
  --t_internal_allocations;
}

void prime_current_thread(JNIEnv* jni) {
  // A thread that existed when the interval changed keeps its old next sampling point (on JDK 17,
  // up to a few MiB of allocation away, 512 KiB on average) and samples nothing until it gets
  // there. Allocating garbage until the first sample moves it there; from then on the thread
  // samples every allocation. Bounded, and in small arrays, so it cannot exhaust a small heap.
  constexpr jint kChunk = 64 * 1024;
  constexpr int kMaxChunks = 256;
  t_priming = true;
  t_primed = false;
  for (int i = 0; i < kMaxChunks && !t_primed; ++i) {
    LocalRef chunk(jni, jni->NewByteArray(kChunk));
    if (chunk.get() == nullptr) {
      jni->ExceptionClear();
      break;
    }
  }
  t_priming = false;
}

void set_tracking(bool on) {
  jvmti_ok(jvmti()->SetHeapSamplingInterval(on ? kEveryAllocation : kDefaultSamplingInterval),
           "SetHeapSamplingInterval");
}

}  // namespace jvmpi::allocation_events
