#include "allocation_site_memo.h"

#include <algorithm>
#include <memory>

namespace hprof::agent {
namespace {

constexpr int kMemoFrames = 4;      // HPROF's default depth; deeper stacks skip the memo
constexpr size_t kMemoSlots = 256;  // a power of two

struct MemoEntry {
  uint64_t hash = 0;
  uint64_t owner = 0;  // AllocationSites::id() of the table the site is in; 0: empty
  jobjectID class_id = nullptr;
  jint type = 0;
  unsigned thread = 0;
  int count = 0;
  uint32_t site = 0;
  JVMPI_CallFrame frames[kMemoFrames];
};

thread_local std::unique_ptr<MemoEntry[]> t_memo;

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

uint64_t hash_of(const JVMPI_CallFrame* frames, int count, unsigned thread, jint type,
                 jobjectID class_id) {
  uint64_t h = mix(thread * 0x9e3779b97f4a7c15ULL, reinterpret_cast<uintptr_t>(class_id));
  h = mix(h, static_cast<uint64_t>(static_cast<uint32_t>(type)));
  for (int i = 0; i < count; ++i) {
    h = mix(h, reinterpret_cast<uintptr_t>(frames[i].method_id));
    h = mix(h, static_cast<uint64_t>(static_cast<uint32_t>(frames[i].lineno)));
  }
  return h;
}

bool same_frames(const JVMPI_CallFrame* a, const JVMPI_CallFrame* b, int count) {
  for (int i = 0; i < count; ++i) {
    if (a[i].method_id != b[i].method_id || a[i].lineno != b[i].lineno) return false;
  }
  return true;
}

}  // namespace

uint32_t allocation_site(AllocationSites& sites, TraceTable& traces, const JVMPI_CallFrame* frames,
                         int count, unsigned thread_serial, jint type, jobjectID class_id) {
  if (count < 0) count = 0;
  if (count > kMemoFrames) {
    return sites.site_index({type, class_id, traces.intern(frames, count, thread_serial)});
  }
  const uint64_t hash = hash_of(frames, count, thread_serial, type, class_id);
  if (!t_memo) t_memo = std::make_unique<MemoEntry[]>(kMemoSlots);
  MemoEntry& e = t_memo[(hash ^ (hash >> 29)) & (kMemoSlots - 1)];
  if (e.owner == sites.id() && e.hash == hash && e.class_id == class_id && e.type == type &&
      e.thread == thread_serial && e.count == count && same_frames(e.frames, frames, count)) {
    return e.site;
  }
  // Sites are never removed (clear_counts keeps them), so a remembered index stays right.
  const uint32_t site =
      sites.site_index({type, class_id, traces.intern(frames, count, thread_serial)});
  e.hash = hash;
  e.owner = sites.id();
  e.class_id = class_id;
  e.type = type;
  e.thread = thread_serial;
  e.count = count;
  e.site = site;
  std::copy(frames, frames + count, e.frames);
  return site;
}

}  // namespace hprof::agent
