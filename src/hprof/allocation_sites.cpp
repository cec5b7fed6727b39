// SPDX-License-Identifier: Apache-2.0
#include "allocation_sites.h"

#include <algorithm>
#include <cmath>

namespace hprof::agent {
namespace {
std::atomic<uint64_t> g_next_table_id{1};
}  // namespace

AllocationSites::AllocationSites() : id_(g_next_table_id.fetch_add(1)) {}

void AllocationSites::weights(jint size, uint64_t* bytes, uint64_t* objects) const {
  if (sample_interval_ <= 0) {
    *bytes = size > 0 ? static_cast<uint64_t>(size) : 0;
    *objects = 1;
    return;
  }
  // The runtime's estimate (jvmpi_ext.h): picked with p = 1 - exp(-size/interval), the sample
  // stands for 1/p objects and size/p bytes. Recomputed here from the size, so a free takes away
  // exactly what the allocation added.
  const double s = size > 0 ? static_cast<double>(size) : 1.0;
  const double p = -std::expm1(-s / sample_interval_);
  *objects = static_cast<uint64_t>(std::llround(1.0 / p));
  *bytes = static_cast<uint64_t>(std::llround(s / p));
}

void AllocationSites::on_alloc(jobjectID object, const SiteKey& key, jint size) {
  on_alloc_at(object, site_index(key), size);
}

uint32_t AllocationSites::site_index(const SiteKey& key) {
  std::lock_guard lock(mutex_);
  auto [it, inserted] = index_.try_emplace(key, static_cast<uint32_t>(sites_.size()));
  if (inserted) {
    sites_.push_back({key, {}});
    changed_flag_.push_back(0);
  }
  return it->second;
}

AllocationSites::ThreadBuffer& AllocationSites::current_buffer() {
  // One table per thread is cached: HPROF has one; a thread that meets another (tests) starts a
  // new buffer there, and its old one is merged and dropped by the old table.
  struct Cached {
    uint64_t table = 0;
    std::shared_ptr<ThreadBuffer> buffer;
  };
  thread_local Cached cached;
  if (cached.table == id_) return *cached.buffer;
  auto buffer = std::make_shared<ThreadBuffer>();
  buffer->pending.reserve(kAllocBatch);
  cached.buffer = buffer;  // lets go of the previous table's buffer, which that table drops
  cached.table = id_;
  std::lock_guard lock(mutex_);
  merge_all_buffers();  // drops the buffers of ended threads (and of any that moved away)
  buffers_.push_back(std::move(buffer));
  return *cached.buffer;
}

void AllocationSites::on_alloc_at(jobjectID object, uint32_t site, jint size) {
  ThreadBuffer& buffer = current_buffer();
  {
    std::lock_guard own(buffer.mutex);
    if (buffer.pending.empty()) buffer.filled.store(true, std::memory_order_release);
    buffer.pending.push_back({object, site, size});
    if (buffer.pending.size() < kAllocBatch) return;
  }
  std::lock_guard lock(mutex_);
  merge(buffer);
  apply_queued_frees();
}

void AllocationSites::merge(ThreadBuffer& buffer) const {
  // An allocation the owner is recording right now may be missed: it is still in its callback,
  // so its object cannot have been freed yet, and a reader gets the counts of a moment before.
  if (!buffer.filled.load(std::memory_order_acquire)) return;
  {
    std::lock_guard own(buffer.mutex);
    buffer.filled.store(false, std::memory_order_relaxed);
    merging_.swap(buffer.pending);
  }
  auto* self = const_cast<AllocationSites*>(this);  // see apply_queued_frees
  for (const PendingAlloc& alloc : merging_) self->add(alloc);
  merging_.clear();
}

void AllocationSites::merge_all_buffers() const {
  size_t kept = 0;
  for (size_t i = 0; i < buffers_.size(); ++i) {
    // Only the table still holds the buffer of an ended thread (or of one that moved to another
    // table): merged, it can go. Whether it ended is read before the merge: an owner that ends
    // after it may have added to its buffer after the merge, so its buffer stays until the next.
    const bool ended = buffers_[i].use_count() == 1;
    merge(*buffers_[i]);
    if (ended) continue;
    if (kept != i) buffers_[kept] = std::move(buffers_[i]);
    ++kept;
  }
  buffers_.resize(kept);
}

void AllocationSites::add(const PendingAlloc& alloc) {
  uint64_t bytes = 0, objects = 0;
  weights(alloc.size, &bytes, &objects);
  count_allocated(alloc.site, objects, bytes);
  objects_.put(alloc.object, {alloc.site, alloc.size});
}

void AllocationSites::count_allocated(uint32_t site, uint64_t objects, uint64_t bytes) {
  note_changed(site);
  SiteCounts& c = sites_[site].counts;
  c.alloc_bytes += bytes;
  c.alloc_objects += objects;
  c.live_bytes += bytes;
  c.live_objects += objects;
  totals_.alloc_bytes += bytes;
  totals_.alloc_objects += objects;
  totals_.live_bytes += bytes;
  totals_.live_objects += objects;
}

void AllocationSites::add_untracked(uint32_t site, uint64_t objects, uint64_t bytes) {
  std::lock_guard lock(mutex_);
  count_allocated(site, objects, bytes);
}

void AllocationSites::on_free(jobjectID object) {
  {
    std::lock_guard queue_lock(free_mutex_);
    queued_frees_.push_back(object);
    frees_queued_.store(true, std::memory_order_release);
    if (queued_frees_.size() < kFreeBatch) return;
  }
  std::lock_guard lock(mutex_);
  apply_queued_frees();
}

void AllocationSites::apply_queued_frees() const {
  if (!frees_queued_.load(std::memory_order_acquire)) return;
  // A queued free may be of an object still in some thread's buffer.
  merge_all_buffers();
  std::vector<jobjectID> batch;
  {
    std::lock_guard queue_lock(free_mutex_);
    batch.swap(queued_frees_);
    frees_queued_.store(false, std::memory_order_relaxed);
  }
  // Counts change under mutex_, which the caller holds; they are logically part of the state
  // readers see, hence const.
  auto* self = const_cast<AllocationSites*>(this);
  for (jobjectID object : batch) self->apply_free(object);
  // Keep the queue's capacity for the next burst rather than reallocating it.
  std::lock_guard queue_lock(free_mutex_);
  if (queued_frees_.empty()) {
    batch.clear();
    queued_frees_.swap(batch);
  }
}

void AllocationSites::apply_free(jobjectID object) {
  TrackedObject freed;
  if (!objects_.remove(object, &freed)) return;
  uint64_t bytes = 0, objects = 0;
  weights(freed.size, &bytes, &objects);
  note_changed(freed.site);
  SiteCounts& c = sites_[freed.site].counts;
  c.live_objects -= std::min(c.live_objects, objects);
  c.live_bytes -= std::min(c.live_bytes, bytes);
  totals_.live_objects -= std::min(totals_.live_objects, objects);
  totals_.live_bytes -= std::min(totals_.live_bytes, bytes);
}

std::vector<Site> AllocationSites::sites() const {
  std::lock_guard lock(mutex_);
  merge_all_buffers();
  apply_queued_frees();
  return sites_;
}

void AllocationSites::track_changes() {
  std::lock_guard lock(mutex_);
  merge_all_buffers();
  apply_queued_frees();
  tracking_ = true;
  for (uint32_t i = 0; i < sites_.size(); ++i) {
    const SiteCounts& c = sites_[i].counts;
    if (c.alloc_objects != 0 || c.live_objects != 0) note_changed(i);
  }
}

std::vector<std::pair<uint32_t, Site>> AllocationSites::take_changed() {
  std::lock_guard lock(mutex_);
  merge_all_buffers();
  apply_queued_frees();
  std::sort(changed_.begin(), changed_.end());
  std::vector<std::pair<uint32_t, Site>> out;
  out.reserve(changed_.size());
  for (uint32_t site : changed_) {
    changed_flag_[site] = 0;
    out.emplace_back(site, sites_[site]);
  }
  changed_.clear();
  return out;
}

SiteCounts AllocationSites::totals() const {
  std::lock_guard lock(mutex_);
  merge_all_buffers();
  apply_queued_frees();
  return totals_;
}

bool AllocationSites::object_info(jobjectID object, unsigned* trace, jint* size) const {
  std::lock_guard lock(mutex_);
  apply_queued_frees();
  const TrackedObject* tracked = objects_.find(object);
  if (tracked == nullptr) {  // it may be in a thread's buffer still
    merge_all_buffers();
    tracked = objects_.find(object);
  }
  if (tracked == nullptr) return false;
  *trace = sites_[tracked->site].key.trace;
  *size = tracked->size;
  return true;
}

void AllocationSites::object_traces(const jobjectID* objects, size_t count,
                                    unsigned* traces) const {
  // How many lookups ahead the prefetch runs: enough to cover a miss to memory, few enough that
  // the fetched lines are still cached when their turn comes.
  constexpr size_t kAhead = 16;
  std::lock_guard lock(mutex_);
  merge_all_buffers();
  apply_queued_frees();
  for (size_t i = 0; i < count && i < kAhead; ++i) objects_.prefetch(objects[i]);
  for (size_t i = 0; i < count; ++i) {
    if (i + kAhead < count) objects_.prefetch(objects[i + kAhead]);
    const TrackedObject* tracked = objects_.find(objects[i]);
    traces[i] = tracked != nullptr ? sites_[tracked->site].key.trace : 0u;
  }
}

void AllocationSites::clear_counts() {
  std::lock_guard lock(mutex_);
  merge_all_buffers();
  apply_queued_frees();
  for (uint32_t i = 0; i < sites_.size(); ++i) {
    SiteCounts& c = sites_[i].counts;
    if (c.alloc_objects != c.live_objects || c.alloc_bytes != c.live_bytes) note_changed(i);
    c.alloc_bytes = c.live_bytes;
    c.alloc_objects = c.live_objects;
  }
  totals_.alloc_bytes = totals_.live_bytes;
  totals_.alloc_objects = totals_.live_objects;
}

}  // namespace hprof::agent
