// SPDX-License-Identifier: Apache-2.0
#include "allocation_site_memo.h"

#include <algorithm>
#include <atomic>
#include <memory>

namespace hprof::agent {
namespace {

using Entry = SiteFinder::Entry;
constexpr int kInline = SiteFinder::kInlineFrames;
constexpr size_t kMemoSlots = 512;  // a power of two: 32 KiB per allocating thread

// A thread's memo serves one finder at a time (HPROF has one); another finder starts it afresh.
struct ThreadMemo {
  uint64_t owner = 0;  // the finder's id
  Entry slots[kMemoSlots];
};

// Allocated on first use: a thread that never allocates needs none.
thread_local std::unique_ptr<ThreadMemo> t_memo;
std::atomic<uint64_t> g_finders{0};

uint64_t mix(uint64_t h, uint64_t v) {
  return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

uint64_t hash_of(const Entry& k) {
  uint64_t h = mix(k.thread * 0x9e3779b97f4a7c15ULL, reinterpret_cast<uintptr_t>(k.class_id));
  h = mix(h, static_cast<uint32_t>(k.type) << 8 | static_cast<uint8_t>(k.count));
  for (int i = 0; i < k.count; ++i) {
    h = mix(h, reinterpret_cast<uintptr_t>(k.methods[i]) ^ uint64_t{k.locations[i]} << 48);
  }
  return h * 0x9e3779b97f4a7c15ULL;  // spread into the high bits, which pick the slots
}

// Unused frames are null in every key, so all of them compare, without a loop bound.
bool same_key(const Entry& a, const Entry& b) {
  bool same =
      a.class_id == b.class_id && a.type == b.type && a.count == b.count && a.thread == b.thread;
  for (int i = 0; i < kInline; ++i) {
    same &= a.methods[i] == b.methods[i] && a.locations[i] == b.locations[i];
  }
  return same;
}

// In the shared table a slot's count says whether the rest is there yet.
int8_t published_count(const Entry& slot) {
  return std::atomic_ref<int8_t>(const_cast<int8_t&>(slot.count)).load(std::memory_order_acquire);
}

void publish(Entry& slot, const Entry& e) {
  slot.class_id = e.class_id;
  std::copy(e.methods, e.methods + kInline, slot.methods);
  std::copy(e.locations, e.locations + kInline, slot.locations);
  slot.site = e.site;
  slot.thread = e.thread;
  slot.type = e.type;
  std::atomic_ref<int8_t>(slot.count).store(e.count, std::memory_order_release);
}

// The key of this allocation, false if it does not fit an Entry.
bool make_key(const JVMPI_CallFrame* frames, int count, unsigned thread, jint type,
              jobjectID class_id, Entry* key) {
  if (count > kInline || type < INT8_MIN || type > INT8_MAX) return false;
  for (int i = 0; i < count; ++i) {
    const jint biased = frames[i].lineno + SiteFinder::kLocationBias;
    if (biased < 0 || biased > UINT16_MAX) return false;
    key->methods[i] = frames[i].method_id;
    key->locations[i] = static_cast<uint16_t>(biased);
  }
  key->class_id = class_id;
  key->thread = thread;
  key->type = static_cast<int8_t>(type);
  key->count = static_cast<int8_t>(count);
  return true;
}

}  // namespace

SiteFinder::SiteFinder() : id_(g_finders.fetch_add(1) + 1) {}

bool SiteFinder::lookup(uint64_t hash, const Entry& key, uint32_t* site) const {
  const Table* table = table_.load(std::memory_order_acquire);
  if (table == nullptr) return false;
  for (size_t i = hash >> 40 & table->mask;; i = (i + 1) & table->mask) {
    const Entry& e = table->slots[i];
    // A slot still being filled reads as empty: a miss, which find() settles under the mutex.
    if (published_count(e) < 0) return false;
    if (same_key(e, key)) {
      *site = e.site;
      return true;
    }
  }
}

void SiteFinder::insert(uint64_t hash, const Entry& entry) {
  Table* table = table_.load(std::memory_order_relaxed);
  // At most half full, so probe runs stay short. The grown table is filled before it is
  // published; the old one stays readable.
  const size_t slots = table == nullptr ? 0 : table->mask + 1;
  if ((size_ + 1) * 2 > slots) {
    auto grown = std::make_unique<Table>(slots == 0 ? 1024 : slots * 2);
    for (size_t i = 0; i < slots; ++i) {
      const Entry& e = table->slots[i];
      if (e.count < 0) continue;
      size_t j = hash_of(e) >> 40 & grown->mask;
      while (grown->slots[j].count >= 0) j = (j + 1) & grown->mask;
      publish(grown->slots[j], e);
    }
    table = grown.get();
    tables_.push_back(std::move(grown));
    table_.store(table, std::memory_order_release);
  }
  size_t i = hash >> 40 & table->mask;
  while (table->slots[i].count >= 0) i = (i + 1) & table->mask;
  publish(table->slots[i], entry);
  ++size_;
}

namespace {

// The frames with source lines in place of bytecode indexes (`lines`), or the frames themselves.
const JVMPI_CallFrame* with_lines(const JVMPI_CallFrame* frames, int count, LineOfLocation lines,
                                  JVMPI_CallFrame* out) {
  if (lines == nullptr) return frames;
  for (int i = 0; i < count; ++i) {
    out[i].method_id = frames[i].method_id;
    out[i].lineno = lines(frames[i].method_id, frames[i].lineno);
  }
  return out;
}

}  // namespace

uint32_t SiteFinder::find(AllocationSites& sites, TraceTable& traces, const JVMPI_CallFrame* frames,
                          int count, unsigned thread_serial, jint type, jobjectID class_id,
                          LineOfLocation lines) {
  if (count < 0) count = 0;
  Entry key;
  if (!make_key(frames, count, thread_serial, type, class_id, &key)) {
    std::vector<JVMPI_CallFrame> lined(lines != nullptr ? static_cast<size_t>(count) : 0);
    const JVMPI_CallFrame* traced = with_lines(frames, count, lines, lined.data());
    return sites.site_index({type, class_id, traces.intern(traced, count, thread_serial)});
  }
  const uint64_t hash = hash_of(key);

  if (!t_memo) t_memo = std::make_unique<ThreadMemo>();
  ThreadMemo& memo = *t_memo;
  if (memo.owner != id_) {
    std::fill(std::begin(memo.slots), std::end(memo.slots), Entry{});
    memo.owner = id_;
  }
  Entry& remembered = memo.slots[hash >> 55 & (kMemoSlots - 1)];
  if (same_key(remembered, key)) return remembered.site;

  // Sites are never removed (clear_counts keeps them), so a remembered index stays right.
  if (!lookup(hash, key, &key.site)) {
    JVMPI_CallFrame lined[kInline];
    const JVMPI_CallFrame* traced = with_lines(frames, count, lines, lined);
    key.site = sites.site_index({type, class_id, traces.intern(traced, count, thread_serial)});
    std::lock_guard lock(mutex_);
    uint32_t other = 0;
    if (!lookup(hash, key, &other)) insert(hash, key);  // else another thread was first: same site
  }
  remembered = key;
  return key.site;
}

}  // namespace hprof::agent
