#include "allocation_site_memo.h"

#include <algorithm>
#include <atomic>
#include <memory>

namespace hprof::agent {
namespace {

constexpr int kInline = SiteFinder::kInlineFrames;
constexpr size_t kMemoSlots = 256;  // a power of two

struct MemoEntry {
  uint64_t owner = 0;  // the finder's id; 0: empty
  SiteFinder::Entry entry;
};

// Allocated on first use: a thread that never allocates needs none.
thread_local std::unique_ptr<MemoEntry[]> t_memo;
std::atomic<uint64_t> g_finders{0};

uint64_t mix(uint64_t h, uint64_t v) {
  return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

uint64_t hash_of(const SiteFinder::Entry& k) {
  uint64_t h = mix(k.thread * 0x9e3779b97f4a7c15ULL, reinterpret_cast<uintptr_t>(k.class_id));
  h = mix(h, static_cast<uint32_t>(k.type));
  for (int i = 0; i < k.count; ++i) {
    h = mix(h, reinterpret_cast<uintptr_t>(k.frames[i].method_id));
    h = mix(h, static_cast<uint32_t>(k.frames[i].lineno));
  }
  return h * 0x9e3779b97f4a7c15ULL;  // spread into the high bits, which pick the slots
}

bool same_key(const SiteFinder::Entry& a, uint64_t hash, const SiteFinder::Entry& b) {
  if (a.hash != hash || a.class_id != b.class_id || a.type != b.type || a.thread != b.thread ||
      a.count != b.count) {
    return false;
  }
  for (int i = 0; i < a.count; ++i) {
    if (a.frames[i].method_id != b.frames[i].method_id || a.frames[i].lineno != b.frames[i].lineno)
      return false;
  }
  return true;
}

}  // namespace

SiteFinder::SiteFinder() : id_(g_finders.fetch_add(1) + 1) {}

bool SiteFinder::lookup(uint64_t hash, const Entry& key, uint32_t* site) const {
  const Table* table = table_.load(std::memory_order_acquire);
  if (table == nullptr) return false;
  for (size_t i = hash >> 40 & table->mask;; i = (i + 1) & table->mask) {
    const Slot& s = table->slots[i];
    // A slot still being filled reads as empty: a miss, which find() settles under the mutex.
    if (!s.full.load(std::memory_order_acquire)) return false;
    if (same_key(s.entry, hash, key)) {
      *site = s.entry.site;
      return true;
    }
  }
}

void SiteFinder::insert(const Entry& entry) {
  Table* table = table_.load(std::memory_order_relaxed);
  // At most half full, so probe runs stay short. The grown table is filled before it is
  // published; the old one stays readable.
  const size_t slots = table == nullptr ? 0 : table->mask + 1;
  if ((size_ + 1) * 2 > slots) {
    auto grown = std::make_unique<Table>(slots == 0 ? 1024 : slots * 2);
    for (size_t i = 0; i < slots; ++i) {
      const Slot& s = table->slots[i];
      if (!s.full.load(std::memory_order_relaxed)) continue;
      size_t j = s.entry.hash >> 40 & grown->mask;
      while (grown->slots[j].full.load(std::memory_order_relaxed)) j = (j + 1) & grown->mask;
      grown->slots[j].entry = s.entry;
      grown->slots[j].full.store(true, std::memory_order_relaxed);
    }
    table = grown.get();
    tables_.push_back(std::move(grown));
    table_.store(table, std::memory_order_release);
  }
  size_t i = entry.hash >> 40 & table->mask;
  while (table->slots[i].full.load(std::memory_order_relaxed)) i = (i + 1) & table->mask;
  table->slots[i].entry = entry;
  table->slots[i].full.store(true, std::memory_order_release);
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
  if (count > kInline) {
    std::vector<JVMPI_CallFrame> lined(lines != nullptr ? static_cast<size_t>(count) : 0);
    const JVMPI_CallFrame* traced = with_lines(frames, count, lines, lined.data());
    return sites.site_index({type, class_id, traces.intern(traced, count, thread_serial)});
  }
  Entry key;
  key.class_id = class_id;
  key.type = type;
  key.thread = thread_serial;
  key.count = count;
  std::copy(frames, frames + count, key.frames);
  key.hash = hash_of(key);

  if (!t_memo) t_memo = std::make_unique<MemoEntry[]>(kMemoSlots);
  MemoEntry& memo = t_memo[key.hash >> 56 & (kMemoSlots - 1)];
  if (memo.owner == id_ && same_key(memo.entry, key.hash, key)) return memo.entry.site;

  // Sites are never removed (clear_counts keeps them), so a remembered index stays right.
  if (!lookup(key.hash, key, &key.site)) {
    JVMPI_CallFrame lined[kInline];
    const JVMPI_CallFrame* traced = with_lines(frames, count, lines, lined);
    key.site = sites.site_index({type, class_id, traces.intern(traced, count, thread_serial)});
    std::lock_guard lock(mutex_);
    uint32_t other = 0;
    if (!lookup(key.hash, key, &other)) insert(key);  // else another thread was first: same site
  }
  memo = {id_, key};
  return key.site;
}

}  // namespace hprof::agent
