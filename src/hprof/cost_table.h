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
  // period=: from now on, remember which traces' costs change, so that a period reads the rows it
  // adds rather than the whole table (an idle program's period reads nothing). The traces that
  // have costs already count as changed.
  void track_changes();
  // The cumulative costs of the traces changed since the last call (since track_changes() at
  // first), unordered; `clears`: how many times clear() has run (a reset in between).
  std::vector<Cost> take_changed(uint64_t& clears);

 private:
  struct Entry {
    Cost cost;
    bool changed = false;  // listed in changed_
  };
  mutable std::mutex mutex_;
  std::unordered_map<unsigned, Entry> costs_;
  bool tracking_ = false;
  uint64_t clears_ = 0;
  std::vector<unsigned> changed_;  // traces changed since take_changed(), each once
};

}  // namespace hprof::agent
