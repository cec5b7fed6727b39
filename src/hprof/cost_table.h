// SPDX-License-Identifier: Apache-2.0
// Costs charged to traces: CPU samples (count), or with cpu=times calls and time per trace.
#pragma once

#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace hprof::agent {

struct Cost {
  unsigned trace = 0;
  uint64_t count = 0;    // samples, or calls
  uint64_t time_ns = 0;  // cpu=times: time spent in the top frame's method
};

class CostTable {
 public:
  void add(unsigned trace, uint64_t count, uint64_t time_ns);
  // Sorted by time (then count), largest first.
  std::vector<Cost> sorted_by_time() const;
  // Sorted by count, largest first.
  std::vector<Cost> sorted_by_count() const;
  uint64_t total_count() const;
  uint64_t total_time_ns() const;
  void clear();

 private:
  mutable std::mutex mutex_;
  std::unordered_map<unsigned, Cost> costs_;
};

}  // namespace hprof::agent
