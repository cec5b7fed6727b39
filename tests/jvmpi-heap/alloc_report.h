// SPDX-License-Identifier: Apache-2.0
// The allocation agent's report (agents/alloc_agent.c): per-label statistics and event counters.
#pragma once

#include <map>
#include <string>
#include <utility>

namespace jvmpiheap {

struct AllocStat {
  long total = 0;
  long freed = 0;
  int min_size = 0;
  int max_size = 0;
};

struct AllocReport {
  bool present = false;
  // (label, JVM class name of the allocated object: "jvmpiheap.X", "[I", "[[Ljvmpiheap.X;")
  std::map<std::pair<std::string, std::string>, AllocStat> stats;
  std::map<std::string, long> counters;
  long counter(const std::string& name) const {
    auto it = counters.find(name);
    return it == counters.end() ? -999 : it->second;
  }
};

AllocReport read_alloc_report(const std::string& path);

// The JVM name of an allocated object from OBJECT_ALLOC's is_array and (element) class name.
std::string allocated_class_name(int is_array, const std::string& class_name);

}  // namespace jvmpiheap
