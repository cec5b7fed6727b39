// SPDX-License-Identifier: Apache-2.0
#include "object_ids.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <unordered_map>

#include "jni_reference_events.h"
#include "jvmti_access.h"

namespace jvmpi::object_ids {
namespace {

// Tags are handed out in blocks: each thread takes kTagBlock tags at a time from g_next_tag and
// gives them out one by one, so tagging an allocation writes no shared cache line (a fetch_add on
// one counter per allocation moves its line between cores on every allocation).
// new_tag() (heap walks) takes single tags from the same counter and raises g_tag_floor past them:
// a block below the floor is dropped, so every tag given out after new_tag() returned is greater
// than its answer (heap dumps tell objects made after a walk by that). The floor is written only
// by new_tag(), so the line stays shared, and reading it costs no more than a private load.
constexpr jlong kTagBlock = 1024 * 8;
std::atomic<jlong> g_next_tag{8};
std::atomic<jlong> g_tag_floor{0};
struct TagBlock {
  jlong next = 0;
  jlong end = 0;
};
thread_local TagBlock t_tags;

jlong thread_tag() {
  TagBlock& b = t_tags;
  if (b.next == b.end || b.next < g_tag_floor.load(std::memory_order_acquire)) {
    b.next = g_next_tag.fetch_add(kTagBlock, std::memory_order_relaxed);
    b.end = b.next + kTagBlock;
  }
  const jlong tag = b.next;
  b.next += 8;
  return tag;
}
// Serialises the read-then-set of an untagged object so two threads cannot give it two IDs.
// SetTag may post ObjectFree events on this thread; that callback never takes this mutex.
std::mutex g_assign_mutex;

// From ID to object in O(1): a JNI weak global reference per object whose ID was handed out with
// the object in hand. JVMTI's only way back from a tag, GetObjectsWithTags, walks the whole tag
// map per call (milliseconds on a large heap), so it is only the fallback for IDs never seen with
// their object (those a heap walk gave out); its answer is then kept here too.
//
// Cost: a weak reference is one slot in the VM's weak handle storage (8 bytes, scanned in parallel
// by each collection) plus a map entry here, made when the object is first named: by an event
// (monitors, threads, classes, receivers: few distinct objects) or by jobject2jobjectID. Allocated
// objects get theirs only once an agent has asked for an object the table did not hold (see
// g_allocations_resolvable): one per allocation costs the VM's handle-storage lock, a map entry and
// a sweep, which measured 2-3x the whole cost of exact OBJECT_ALLOC tracking; HPROF, whose own
// requests name objects from events, never pays it. Entries of collected objects are swept from a
// shard whenever it has doubled since its last sweep, so a shard holds at most twice its live
// entries and sweeping is O(1) per insert.
// Tags are unique and never pass to another object, so an entry never names the wrong object.
constexpr size_t kShards = 64;  // a power of two: contention spreads over threads
constexpr size_t kFirstSweep = 1024;
struct Shard {
  std::mutex mutex;
  std::unordered_map<jlong, jweak> weak_by_tag;
  size_t sweep_at = kFirstSweep;
};
// Never destroyed: VM threads may still resolve IDs while the process exits.
std::array<Shard, kShards>& g_shards = *new std::array<Shard, kShards>;

// Whether allocated objects get their weak reference as they are tagged: from an agent's first
// request for an ID the table did not hold on (IDs allocated before that resolve through the tag
// map once each, and are kept from then on).
std::atomic<bool> g_allocations_resolvable{false};

// Before the live phase the tag map cannot be searched: objects tagged then are always kept.
std::atomic<bool> g_live{false};
bool before_live() {
  if (g_live.load(std::memory_order_relaxed)) return false;
  if (current_phase() != JVMTI_PHASE_LIVE) return true;
  g_live.store(true, std::memory_order_relaxed);
  return false;
}

Shard& shard_of(jlong tag) {
  return g_shards[static_cast<size_t>(tag >> 3) & (kShards - 1)];
}

// Drops the entries of collected objects. Called with the shard's mutex held; the JNI calls here
// may wait for a safepoint, and nothing that runs inside one takes this mutex.
void sweep(JNIEnv* env, Shard& shard) {
  jni_reference_events::InternalScope internal;
  for (auto it = shard.weak_by_tag.begin(); it != shard.weak_by_tag.end();) {
    if (env->IsSameObject(it->second, nullptr)) {
      env->DeleteWeakGlobalRef(it->second);
      it = shard.weak_by_tag.erase(it);
    } else {
      ++it;
    }
  }
  shard.sweep_at = std::max(kFirstSweep, 2 * shard.weak_by_tag.size());
}

bool is_remembered(jlong tag) {
  Shard& shard = shard_of(tag);
  std::lock_guard lock(shard.mutex);
  return shard.weak_by_tag.count(tag) != 0;
}

// Keeps a weak reference from `tag` to `object` unless one is kept already (`fresh`: the tag was
// just made, so none can be).
void remember(JNIEnv* env, jobject object, jlong tag, bool fresh = false) {
  if (env == nullptr || object == nullptr || tag == 0 || (!fresh && is_remembered(tag))) return;
  jweak weak;
  {
    jni_reference_events::InternalScope internal;  // the runtime's own reference: not reported
    weak = env->NewWeakGlobalRef(object);
  }
  if (weak == nullptr) {
    env->ExceptionClear();  // out of memory: the ID stays resolvable through the tag map
    return;
  }
  Shard& shard = shard_of(tag);
  std::lock_guard lock(shard.mutex);
  if (!shard.weak_by_tag.emplace(tag, weak).second) {
    jni_reference_events::InternalScope internal;
    env->DeleteWeakGlobalRef(weak);
    return;
  }
  if (shard.weak_by_tag.size() >= shard.sweep_at) sweep(env, shard);
}

// A new local reference to the object kept for `tag`; null when none is kept or it was collected.
jobject remembered_object(JNIEnv* env, jlong tag) {
  Shard& shard = shard_of(tag);
  std::lock_guard lock(shard.mutex);
  auto it = shard.weak_by_tag.find(tag);
  if (it == shard.weak_by_tag.end()) return nullptr;
  return env->NewLocalRef(it->second);
}

}  // namespace

jobjectID existing_id_of(jobject object) {
  if (object == nullptr) return nullptr;
  jlong tag = 0;
  if (jvmti()->GetTag(object, &tag) != JVMTI_ERROR_NONE) return nullptr;
  return from_tag(tag);
}

jobjectID id_of(jobject object) {
  if (object == nullptr) return nullptr;
  jlong tag = 0;
  if (jvmti()->GetTag(object, &tag) != JVMTI_ERROR_NONE) return nullptr;
  if (tag == 0) {
    std::lock_guard lock(g_assign_mutex);
    if (jvmti()->GetTag(object, &tag) != JVMTI_ERROR_NONE) return nullptr;
    if (tag == 0) {
      tag = thread_tag();
      if (!jvmti_ok(jvmti()->SetTag(object, tag), "SetTag")) return nullptr;
    }
  }
  remember(current_jni_env(), object, tag);
  return from_tag(tag);
}

jlong new_tag() {
  const jlong tag = g_next_tag.fetch_add(8, std::memory_order_relaxed);
  // Raised, never lowered (two threads may walk at once).
  jlong floor = g_tag_floor.load(std::memory_order_relaxed);
  while (floor < tag + 8 &&
         !g_tag_floor.compare_exchange_weak(floor, tag + 8, std::memory_order_release)) {
  }
  return tag;
}

jobjectID tag_new_object(jobject object) {
  const jlong tag = thread_tag();
  if (jvmti()->SetTag(object, tag) != JVMTI_ERROR_NONE) return nullptr;
  if (g_allocations_resolvable.load(std::memory_order_relaxed) || before_live()) {
    remember(current_jni_env(), object, tag, /*fresh=*/true);
  }
  return from_tag(tag);
}

jobject object_of(JNIEnv* env, jobjectID id) {
  const jlong tag = to_tag(id);
  if (tag == 0 || env == nullptr) return nullptr;
  if (jobject object = remembered_object(env, tag); object != nullptr) return object;
  if (is_remembered(tag)) return nullptr;  // kept, and collected since
  // An ID not in the table (an allocation's before the first such request, or one a heap walk
  // gave out): one tag-map walk, after which it resolves from the table. Before the live phase
  // the tag map cannot be searched at all.
  if (current_phase() != JVMTI_PHASE_LIVE) return nullptr;
  g_allocations_resolvable.store(true, std::memory_order_relaxed);
  jint count = 0;
  JvmtiPtr<jobject> objects;
  jlong wanted = tag;
  if (jvmti()->GetObjectsWithTags(1, &wanted, &count, objects.out(), nullptr) != JVMTI_ERROR_NONE ||
      count == 0) {
    return nullptr;
  }
  for (jint i = 1; i < count; ++i) env->DeleteLocalRef(objects[i]);
  remember(env, objects[0], tag);
  return objects[0];
}

}  // namespace jvmpi::object_ids
