// SPDX-License-Identifier: Apache-2.0
// monitor=y: time spent blocked on contended monitors per trace and monitor class (MONITOR TIME),
// the WAIT/WAITED/SLEEP lines, and the MONITOR DUMP section with deadlock detection.
#pragma once

#include <jvmpi.h>

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "tables.h"

namespace hprof::agent {

// Contended entries are counted on the contending threads themselves, many at once: the time a
// thread began to block is its own, and the costs are spread over shards, so no lock is shared by
// all contending threads and none is held while a stack is walked or an object's class is named.
class MonitorProfile {
 public:
  void on_contended_enter(JNIEnv* env, jobjectID object);
  // Returns the time blocked, in ns (0 if the enter was not seen).
  uint64_t on_contended_entered(JNIEnv* env, unsigned trace, const std::string& monitor_class);
  std::string time_section(const TraceTable& traces, double cutoff) const;
  // Every (trace, monitor class) with its contentions and time blocked so far (period= deltas).
  struct Row {
    unsigned trace;
    std::string monitor_class;
    uint64_t count;
    uint64_t time_ns;
  };
  std::vector<Row> rows() const;

  // The class name of a monitor object, asked of `name_of` only the first time this thread meets
  // the object (an object ID names one object for its whole life, and its class never changes).
  static const std::string& class_of(jobjectID object,
                                     const std::function<std::string(jobjectID)>& name_of);

 private:
  struct Key {
    unsigned trace;
    std::string monitor_class;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<std::string>()(k.monitor_class) * 31 + k.trace;
    }
  };
  struct Cost {
    uint64_t count = 0;
    uint64_t time_ns = 0;
  };

  static constexpr size_t kShards = 16;
  struct Shard {
    mutable std::mutex mutex;
    std::unordered_map<Key, Cost, KeyHash> costs;
  };
  Shard shards_[kShards];
};

// "Ljava/lang/Object;" for "java.lang.Object" (as WAIT lines and monitor dumps print monitors).
std::string monitor_signature(const std::string& class_name);

// Text of the MONITOR DUMP section from a JVMPI monitor dump, with a plain statement of every
// deadlock found. `class_of` names an object's class; `trace_of` interns a thread's stack.
std::string monitor_dump_text(const JVMPI_Event& dump, const ThreadTable& threads,
                              const std::function<std::string(jobjectID)>& class_of,
                              const std::function<unsigned(const JVMPI_CallTrace&)>& trace_of);

}  // namespace hprof::agent
