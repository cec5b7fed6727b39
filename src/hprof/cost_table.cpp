// SPDX-License-Identifier: Apache-2.0
#include "cost_table.h"

#include <algorithm>

namespace hprof::agent {

void CostTable::add(unsigned trace, uint64_t count, uint64_t time_ns) {
  std::lock_guard lock(mutex_);
  Entry& e = costs_[trace];
  e.cost.trace = trace;
  e.cost.count += count;
  e.cost.time_ns += time_ns;
  if (tracking_ && !e.changed) {
    e.changed = true;
    changed_.push_back(trace);
  }
}

std::vector<Cost> CostTable::sorted_by_time() const {
  std::vector<Cost> out;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [trace, e] : costs_) out.push_back(e.cost);
  }
  std::sort(out.begin(), out.end(), [](const Cost& a, const Cost& b) {
    if (a.time_ns != b.time_ns) return a.time_ns > b.time_ns;
    if (a.count != b.count) return a.count > b.count;
    return a.trace < b.trace;
  });
  return out;
}

std::vector<Cost> CostTable::sorted_by_count() const {
  std::vector<Cost> out;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [trace, e] : costs_) out.push_back(e.cost);
  }
  std::sort(out.begin(), out.end(), [](const Cost& a, const Cost& b) {
    if (a.count != b.count) return a.count > b.count;
    return a.trace < b.trace;
  });
  return out;
}

uint64_t CostTable::total_count() const {
  std::lock_guard lock(mutex_);
  uint64_t n = 0;
  for (const auto& [trace, e] : costs_) n += e.cost.count;
  return n;
}

uint64_t CostTable::total_time_ns() const {
  std::lock_guard lock(mutex_);
  uint64_t n = 0;
  for (const auto& [trace, e] : costs_) n += e.cost.time_ns;
  return n;
}

void CostTable::clear() {
  std::lock_guard lock(mutex_);
  costs_.clear();
  changed_.clear();
  ++clears_;
}

void CostTable::track_changes() {
  std::lock_guard lock(mutex_);
  tracking_ = true;
  for (auto& [trace, e] : costs_) {
    if (!e.changed) changed_.push_back(trace);
    e.changed = true;
  }
}

std::vector<Cost> CostTable::take_changed(uint64_t& clears) {
  std::vector<Cost> out;
  std::lock_guard lock(mutex_);
  clears = clears_;
  out.reserve(changed_.size());
  for (unsigned trace : changed_) {
    Entry& e = costs_[trace];
    e.changed = false;
    out.push_back(e.cost);
  }
  changed_.clear();
  return out;
}

}  // namespace hprof::agent
