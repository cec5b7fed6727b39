// Allocation sites (heap=sites) and the objects HPROF tracks: each allocation is charged to a site
// — the allocated class (or array type) and the allocating trace — and stays live until its
// OBJECT_FREE.
#pragma once

#include <jvmpi.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_map>
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
  // heap=sites,sample=<bytes>: allocations arrive as samples, each standing for an estimated
  // number of objects and bytes (jvmpi_ext.h); frees of sampled objects take the same estimate
  // away again. 0 (the default): every allocation is reported and counts once.
  void set_sample_interval(jint bytes) { sample_interval_ = bytes; }
  jint sample_interval() const { return sample_interval_; }
  void on_alloc(jobjectID object, const SiteKey& key, jint size);
  // The same, for a site already found by site_index.
  void on_alloc_at(jobjectID object, uint32_t site, jint size);
  // The index of the site with this key, created (with no counts) on first use. Sites are never
  // removed, so an index stays valid for the table's life.
  uint32_t site_index(const SiteKey& key);
  // Frees arrive in bursts after each collection, from another thread than the allocations: they
  // are queued and applied a batch at a time, so the two threads rarely meet on mutex_. Queued
  // frees are applied before the next allocation is recorded and before anything is read.
  void on_free(jobjectID object);
  std::vector<Site> sites() const;
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
  void apply_queued_frees() const;  // caller holds mutex_
  void apply_free(jobjectID object);
  // What one reported allocation of `size` bytes counts for.
  void weights(jint size, uint64_t* bytes, uint64_t* objects) const;

  jint sample_interval_ = 0;

  mutable std::mutex mutex_;
  std::vector<Site> sites_;
  std::unordered_map<SiteKey, uint32_t, KeyHash> index_;
  ObjectTable objects_;
  SiteCounts totals_;

  // Lock order: mutex_ before free_mutex_.
  mutable std::mutex free_mutex_;
  mutable std::vector<jobjectID> queued_frees_;
  mutable std::atomic<bool> frees_queued_{false};
};

}  // namespace hprof::agent
