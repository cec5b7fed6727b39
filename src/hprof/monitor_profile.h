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

class MonitorProfile {
 public:
  void on_contended_enter(JNIEnv* env, jobjectID object);
  // Returns the time blocked, in ns (0 if the enter was not seen).
  uint64_t on_contended_entered(JNIEnv* env, unsigned trace, const std::string& monitor_class);
  std::string time_section(const TraceTable& traces, double cutoff) const;

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

  mutable std::mutex mutex_;
  std::unordered_map<JNIEnv*, uint64_t> blocked_since_;
  std::unordered_map<Key, Cost, KeyHash> costs_;
};

// "Ljava/lang/Object;" for "java.lang.Object" (as WAIT lines and monitor dumps print monitors).
std::string monitor_signature(const std::string& class_name);

// Text of the MONITOR DUMP section from a JVMPI monitor dump, with a plain statement of every
// deadlock found. `class_of` names an object's class; `trace_of` interns a thread's stack.
std::string monitor_dump_text(const JVMPI_Event& dump, const ThreadTable& threads,
                              const std::function<std::string(jobjectID)>& class_of,
                              const std::function<unsigned(const JVMPI_CallTrace&)>& trace_of);

}  // namespace hprof::agent
