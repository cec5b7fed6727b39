// SPDX-License-Identifier: Apache-2.0
// Allocation sites (heap=sites) and the objects HPROF tracks: each allocation is charged to a site
// — the allocated class (or array type) and the allocating trace — and stays live until its
// OBJECT_FREE.
#pragma once

#include <jvmpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "object_table.h"

namespace hprof::agent {

struct SiteKey {
  jint type = JVMPI_NORMAL_OBJECT;  // obj_alloc.is_array
  jobjectID class_id = nullptr;     // the class, or element class of a reference array
  unsigned trace = 0;
  bool operator==(const SiteKey&) const = default;
};

struct SiteCounts {
  uint64_t alloc_bytes = 0;
  uint64_t alloc_objects = 0;
  uint64_t live_bytes = 0;
  uint64_t live_objects = 0;
};

struct Site {
  SiteKey key;
  SiteCounts counts;
};

class AllocationSites {
 public:
  AllocationSites();

  // heap=sites,sample=<bytes>: allocations arrive as samples, each standing for an estimated
  // number of objects and bytes (jvmpi_ext.h); frees of sampled objects take the same estimate
  // away again. 0 (the default): every allocation is reported and counts once.
  void set_sample_interval(jint bytes) { sample_interval_ = bytes; }
  jint sample_interval() const { return sample_interval_; }
  void on_alloc(jobjectID object, const SiteKey& key, jint size);
  // The same, for a site already found by site_index. Every allocation comes here, on the
  // allocating thread: it goes into that thread's own buffer (nothing shared is written), and a
  // full buffer is merged into the table under mutex_ (once per kAllocBatch allocations). Every
  // reader, and every batch of frees, first merges all threads' buffers, so counts stay exact.
  void on_alloc_at(jobjectID object, uint32_t site, jint size);
  // The index of the site with this key, created (with no counts) on first use. Sites are never
  // removed, so an index stays valid for the table's life.
  uint32_t site_index(const SiteKey& key);
  // Objects that exist but were never reported (allocated before an attach): counted at `site`
  // as allocated and live, not tracked (no OBJECT_FREE will come for them).
  void add_untracked(uint32_t site, uint64_t objects, uint64_t bytes);
  // Frees arrive in bursts after each collection, from another thread than the allocations: they
  // are queued and applied a batch at a time, so the two threads rarely meet on mutex_. Queued
  // frees are applied before the next allocation is recorded and before anything is read.
  void on_free(jobjectID object);
  std::vector<Site> sites() const;
  // period=: from now on the table notes which sites' counts change, so that a period reads
  // those only (a server's table holds tens of thousands of sites; a period touches a few).
  // Every site with counts so far counts as changed for the first take_changed().
  void track_changes();
  // The sites whose counts changed since the last call, with their indexes, in index order.
  std::vector<std::pair<uint32_t, Site>> take_changed();
  SiteCounts totals() const;
  // The allocation trace and size of a tracked object.
  bool object_info(jobjectID object, unsigned* trace, jint* size) const;
  // The allocation traces of `count` objects (0 for an untracked one) under one lock, with the
  // table's memory fetched a few objects ahead: a heap dump asks for every object, and one locked
  // probe per object costs a cache miss each.
  void object_traces(const jobjectID* objects, size_t count, unsigned* traces) const;
  // Forgets the counts of every site (objects stay tracked for their frees).
  void clear_counts();

 private:
  struct KeyHash {
    size_t operator()(const SiteKey& k) const {
      return (reinterpret_cast<size_t>(k.class_id) * 31 + static_cast<size_t>(k.type)) * 131 +
             k.trace;
    }
  };
  static constexpr size_t kFreeBatch = 4096;
  static constexpr size_t kAllocBatch = 512;
  // An allocation not yet merged into the table.
  struct PendingAlloc {
    jobjectID object;
    uint32_t site;
    jint size;
  };
  // One thread's allocations since its last merge. Its owner appends under `mutex` (uncontended:
  // another thread takes it only to merge), in a cache line of its own.
  struct alignas(64) ThreadBuffer {
    std::mutex mutex;
    std::vector<PendingAlloc> pending;
    // Set by the owner when `pending` stops being empty (once per batch), cleared by a merge:
    // merging every thread's buffer skips the empty ones without taking their mutex.
    std::atomic<bool> filled{false};
  };
  ThreadBuffer& current_buffer();
  void merge(ThreadBuffer& buffer) const;  // caller holds mutex_
  void merge_all_buffers() const;          // caller holds mutex_
  void apply_queued_frees() const;         // caller holds mutex_; merges every buffer first
  void add(const PendingAlloc& alloc);     // caller holds mutex_
  // Adds to a site's and the totals' allocated and live counts; caller holds mutex_.
  void count_allocated(uint32_t site, uint64_t objects, uint64_t bytes);
  void apply_free(jobjectID object);
  // What one reported allocation of `size` bytes counts for.
  void weights(jint size, uint64_t* bytes, uint64_t* objects) const;
  // Notes that a site's counts changed, when changes are tracked; caller holds mutex_.
  void note_changed(uint32_t site) {
    if (tracking_ && !changed_flag_[site]) {
      changed_flag_[site] = 1;
      changed_.push_back(site);
    }
  }

  jint sample_interval_ = 0;
  // Tells tables apart in the threads' buffer cache (an address may be reused); never 0.
  const uint64_t id_;

  mutable std::mutex mutex_;
  // Every thread's buffer (the thread holds a second reference while it lives); under mutex_.
  mutable std::vector<std::shared_ptr<ThreadBuffer>> buffers_;
  // A merge swaps a buffer's records out for this empty vector, so the owner goes on at once.
  mutable std::vector<PendingAlloc> merging_;
  std::vector<Site> sites_;
  std::unordered_map<SiteKey, uint32_t, KeyHash> index_;
  ObjectTable objects_;
  SiteCounts totals_;
  // Changed sites since the last take_changed(), when tracking_ (under mutex_).
  bool tracking_ = false;
  std::vector<uint8_t> changed_flag_;  // by site index
  std::vector<uint32_t> changed_;

  // Lock order: mutex_ before free_mutex_.
  mutable std::mutex free_mutex_;
  mutable std::vector<jobjectID> queued_frees_;
  mutable std::atomic<bool> frees_queued_{false};
};

}  // namespace hprof::agent
