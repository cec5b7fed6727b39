// SPDX-License-Identifier: Apache-2.0
#include "cost_table.h"

#include <algorithm>

namespace hprof::agent {

void CostTable::add(unsigned trace, uint64_t count, uint64_t time_ns) {
  std::lock_guard lock(mutex_);
  Cost& c = costs_[trace];
  c.trace = trace;
  c.count += count;
  c.time_ns += time_ns;
}

std::vector<Cost> CostTable::sorted_by_time() const {
  std::vector<Cost> out;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [trace, cost] : costs_) out.push_back(cost);
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
    for (const auto& [trace, cost] : costs_) out.push_back(cost);
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
  for (const auto& [trace, cost] : costs_) n += cost.count;
  return n;
}

uint64_t CostTable::total_time_ns() const {
  std::lock_guard lock(mutex_);
  uint64_t n = 0;
  for (const auto& [trace, cost] : costs_) n += cost.time_ns;
  return n;
}

void CostTable::clear() {
  std::lock_guard lock(mutex_);
  costs_.clear();
}

}  // namespace hprof::agent
