// SPDX-License-Identifier: Apache-2.0
#include "allocation_events.h"

#include <jvmpi.h>

#include <atomic>
#include <cmath>
#include <memory>
#include <mutex>
#include <random>
#include <shared_mutex>
#include <unordered_map>

#include "class_events.h"
#include "event_control.h"
#include "event_gate.h"
#include "jni_reference_events.h"
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

// Sampled allocations (extension). The handler and its argument change together under
// g_sampling_mutex; the allocation path reads them under the shared side, so stop_sampling
// returns only once no call is in progress.
std::shared_mutex g_sampling_mutex;
JVMPIExt_AllocSampleHandler g_sample_handler = nullptr;
void* g_sample_arg = nullptr;
std::atomic<jint> g_sample_interval{0};  // 0: off
std::atomic<bool> g_exact{false};        // OBJECT_ALLOC on: the VM samples every allocation

// With every allocation reaching us, the runtime picks samples itself: each thread counts down a
// random number of bytes drawn as JVMTI draws them (exponential, mean = the interval).
thread_local double t_bytes_to_sample = -1;
thread_local std::minstd_rand t_random{std::random_device{}()};

double draw_bytes_to_sample(jint interval) {
  std::exponential_distribution<double> next(1.0 / interval);
  return next(t_random);
}

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

// A class's allocation info with a weak reference to the class, made once per class. The weak
// references are never deleted, also not when the class is unloaded (one handle per unloaded
// class): a thread's cache below may still compare against one.
struct KnownClass {
  ClassAllocInfo info;
  jweak klass = nullptr;
};
std::unordered_map<jlong, KnownClass> g_class_info_by_tag;  // under g_mutex

// The classes this thread allocated, by where the class object is: finding an allocation's class
// here takes one read of the class's local reference (a pointer to the slot that holds the class
// object's address, in HotSpot and the other JVMs we know) and one IsSameObject, instead of a
// lookup in JVMTI's tag map (a lock and a hash probe in the VM's largest table), which cost as much
// as tagging the new object itself, or a GetObjectHashCode (a call into the VM per allocation).
// The address is only a hint: the collector may move the class object meanwhile, which makes the
// slot miss (or hold another class), and IsSameObject decides. A most-recently-used list of four
// missed on more than half of javac's allocations.
constexpr size_t kCachedClasses = 256;  // a power of two
struct CachedClass {
  uintptr_t where = 0;
  jweak klass = nullptr;
  ClassAllocInfo info;
};
// Allocated on first use: thread-locals here are in static TLS (initial-exec), which has room
// only for small ones.
thread_local std::unique_ptr<CachedClass[]> t_cached_classes;

CachedClass* cache_slot(jclass klass, uintptr_t* where) {
  if (klass == nullptr) return nullptr;
  // Racy by design (a collection may be updating the slot): any value is a valid hint. The low
  // bits of a reference tell its kind (none for the local one the VM passes here).
  const uintptr_t ref = reinterpret_cast<uintptr_t>(klass) & ~uintptr_t{7};
  *where = __atomic_load_n(reinterpret_cast<const uintptr_t*>(ref), __ATOMIC_RELAXED);
  const uintptr_t h = *where >> 3;
  if (!t_cached_classes) t_cached_classes = std::make_unique<CachedClass[]>(kCachedClasses);
  return &t_cached_classes[(h ^ (h >> 8) ^ (h >> 16)) & (kCachedClasses - 1)];
}

void cache_class(CachedClass* slot, uintptr_t where, jweak klass, const ClassAllocInfo& info) {
  if (slot == nullptr || klass == nullptr) return;
  *slot = {where, klass, info};
}

ClassAllocInfo info_of(JNIEnv* jni, jclass klass) {
  uintptr_t where = 0;
  CachedClass* slot = cache_slot(klass, &where);
  if (slot != nullptr && slot->klass != nullptr && slot->where == where &&
      jni->IsSameObject(klass, slot->klass)) {
    return slot->info;
  }
  jobjectID klass_id = object_ids::id_of(klass);
  const jlong tag = object_ids::to_tag(klass_id);
  {
    std::shared_lock lock(g_mutex);
    auto it = g_class_info_by_tag.find(tag);
    if (it != g_class_info_by_tag.end()) {
      cache_class(slot, where, it->second.klass, it->second.info);
      return it->second.info;
    }
  }
  ClassAllocInfo info = compute_info(jni, klass, klass_id);
  jweak weak;
  {
    jni_reference_events::InternalScope internal;  // the runtime's own reference: not reported
    weak = jni->NewWeakGlobalRef(klass);
  }
  std::unique_lock lock(g_mutex);
  auto [it, inserted] = g_class_info_by_tag.try_emplace(tag, KnownClass{info, weak});
  if (!inserted && weak != nullptr) {  // another thread was first
    jni_reference_events::InternalScope internal;
    jni->DeleteWeakGlobalRef(weak);
  }
  cache_class(slot, where, it->second.klass, it->second.info);
  return it->second.info;
}

}  // namespace

namespace {

// Fills an OBJECT_ALLOC event; false if the thread's events go to no agent.
bool make_event(JNIEnv* jni, jthread thread, jobject object, jclass klass, jlong size, jobjectID id,
                JVMPI_Event& event) {
  object_events::ensure_heap_arena_announced();
  if (!thread_events::ensure_known(jni, thread)) return false;
  const ClassAllocInfo info = info_of(jni, klass);
  // Every field of obj_alloc is set here; zeroing the union would cost per object.
  event.event_type = JVMPI_EVENT_OBJECT_ALLOC;
  event.env_id = jni;
  auto& e = event.u.obj_alloc;
  e.arena_id = object_events::kHeapArena;
  e.class_id = info.class_id;
  e.is_array = info.type_code;
  e.size = static_cast<jint>(size);
  e.obj_id = id != nullptr ? id : object_ids::tag_new_object(object);
  return true;
}

// Delivers OBJECT_ALLOC; returns the object's ID (null if not delivered).
jobjectID report(JNIEnv* jni, jthread thread, jobject object, jclass klass, jlong size,
                 jobjectID id) {
  JVMPI_Event event;
  if (!make_event(jni, thread, object, klass, size, id, event)) return nullptr;
  gate::deliver(&event);
  return event.u.obj_alloc.obj_id;
}

// Hands a sampled allocation to the extension's handler, if this allocation is a sample.
void sample(JNIEnv* jni, jthread thread, jobject object, jclass klass, jlong size, jobjectID id) {
  const jint interval = g_sample_interval.load(std::memory_order_acquire);
  if (interval <= 0) return;
  if (g_exact.load(std::memory_order_relaxed)) {
    // The VM reports every allocation: pick the samples here.
    if (t_bytes_to_sample < 0) t_bytes_to_sample = draw_bytes_to_sample(interval);
    t_bytes_to_sample -= static_cast<double>(size);
    if (t_bytes_to_sample >= 0) return;
    // Several sampling points may fall inside one object; it is one sample (as in the VM).
    while (t_bytes_to_sample < 0) t_bytes_to_sample += draw_bytes_to_sample(interval);
  }
  std::shared_lock lock(g_sampling_mutex);
  if (g_sample_handler == nullptr) return;
  JVMPIExt_AllocSample s;
  if (!make_event(jni, thread, object, klass, size, id, s.event)) return;
  const double bytes = static_cast<double>(size > 0 ? size : 1);
  const double p = -std::expm1(-bytes / interval);  // 1 - exp(-size/interval), exact for small p
  s.weight_objects = std::llround(1.0 / p);
  s.weight_bytes = std::llround(bytes / p);
  g_sample_handler(g_sample_arg, &s);
}

}  // namespace

void JNICALL on_sampled_object_alloc(jvmtiEnv*, JNIEnv* jni, jthread thread, jobject object,
                                     jclass klass, jlong size) {
  if (t_priming) {
    t_primed = true;
    return;
  }
  if (t_internal_allocations > 0) return;
  jobjectID id = nullptr;
  if (gate::wants(JVMPI_EVENT_OBJECT_ALLOC)) id = report(jni, thread, object, klass, size, nullptr);
  sample(jni, thread, object, klass, size, id);
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
  // The weak reference stays (see KnownClass); it no longer matches any class.
  std::unique_lock lock(g_mutex);
  g_class_info_by_tag.erase(class_tag);
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

namespace {

// The VM's interval: every allocation while OBJECT_ALLOC is on, else the sampled allocations'.
void apply_interval() {
  const jint sampled = g_sample_interval.load();
  const jint interval = g_exact.load() ? kEveryAllocation
                        : sampled > 0  ? sampled
                                       : kDefaultSamplingInterval;
  jvmti_ok(jvmti()->SetHeapSamplingInterval(interval), "SetHeapSamplingInterval");
}

}  // namespace

void set_tracking(bool on) {
  g_exact.store(on);
  apply_interval();
}

jint JNICALL start_sampling(jint interval_bytes, JVMPIExt_AllocSampleHandler handler, void* arg) {
  if (handler == nullptr || interval_bytes < 1024 || interval_bytes > (1 << 30)) return JVMPI_FAIL;
  jvmtiCapabilities caps{};
  if (jvmti()->GetCapabilities(&caps) != JVMTI_ERROR_NONE ||
      !caps.can_generate_sampled_object_alloc_events) {
    return JVMPI_NOT_AVAILABLE;
  }
  {
    std::unique_lock lock(g_sampling_mutex);
    g_sample_handler = handler;
    g_sample_arg = arg;
    g_sample_interval.store(interval_bytes, std::memory_order_release);
  }
  apply_interval();
  event_control::refresh(JVMTI_EVENT_SAMPLED_OBJECT_ALLOC);
  return JVMPI_SUCCESS;
}

jint JNICALL stop_sampling() {
  {
    std::unique_lock lock(g_sampling_mutex);
    g_sample_interval.store(0);
    g_sample_handler = nullptr;
    g_sample_arg = nullptr;
  }
  apply_interval();
  event_control::refresh(JVMTI_EVENT_SAMPLED_OBJECT_ALLOC);
  return JVMPI_SUCCESS;
}

bool sampling_on() {
  return g_sample_interval.load() > 0;
}

}  // namespace jvmpi::allocation_events
