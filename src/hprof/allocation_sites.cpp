#include "allocation_sites.h"

namespace hprof::agent {

void AllocationSites::on_alloc(jobjectID object, const SiteKey& key, jint size) {
  const uint64_t bytes = size > 0 ? static_cast<uint64_t>(size) : 0;
  std::lock_guard lock(mutex_);
  auto [it, inserted] = index_.try_emplace(key, static_cast<uint32_t>(sites_.size()));
  if (inserted) sites_.push_back({key, {}});
  SiteCounts& c = sites_[it->second].counts;
  c.alloc_bytes += bytes;
  c.alloc_objects += 1;
  c.live_bytes += bytes;
  c.live_objects += 1;
  totals_.alloc_bytes += bytes;
  totals_.alloc_objects += 1;
  totals_.live_bytes += bytes;
  totals_.live_objects += 1;
  objects_[object] = {it->second, size};
}

void AllocationSites::on_free(jobjectID object) {
  std::lock_guard lock(mutex_);
  auto it = objects_.find(object);
  if (it == objects_.end()) return;
  const uint64_t bytes = it->second.size > 0 ? static_cast<uint64_t>(it->second.size) : 0;
  SiteCounts& c = sites_[it->second.site].counts;
  if (c.live_objects > 0) {
    c.live_objects -= 1;
    c.live_bytes -= std::min(c.live_bytes, bytes);
  }
  if (totals_.live_objects > 0) {
    totals_.live_objects -= 1;
    totals_.live_bytes -= std::min(totals_.live_bytes, bytes);
  }
  objects_.erase(it);
}

std::vector<Site> AllocationSites::sites() const {
  std::lock_guard lock(mutex_);
  return sites_;
}

SiteCounts AllocationSites::totals() const {
  std::lock_guard lock(mutex_);
  return totals_;
}

bool AllocationSites::object_info(jobjectID object, unsigned* trace, jint* size) const {
  std::lock_guard lock(mutex_);
  auto it = objects_.find(object);
  if (it == objects_.end()) return false;
  *trace = sites_[it->second.site].key.trace;
  *size = it->second.size;
  return true;
}

void AllocationSites::clear_counts() {
  std::lock_guard lock(mutex_);
  for (Site& s : sites_) {
    s.counts.alloc_bytes = s.counts.live_bytes;
    s.counts.alloc_objects = s.counts.live_objects;
  }
  totals_.alloc_bytes = totals_.live_bytes;
  totals_.alloc_objects = totals_.live_objects;
}

}  // namespace hprof::agent
