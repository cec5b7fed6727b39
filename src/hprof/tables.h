// SPDX-License-Identifier: Apache-2.0
// What HPROF learns from CLASS_LOAD and THREAD_START, and the stack traces it records, each with
// the serial numbers its reports use (JDK 8's ranges: classes 100001.., threads 200001..,
// traces 300001.., frames 500001..; trace 300000 is the empty trace, thread 200000 "unknown").
#pragma once

#include <jvmpi.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace hprof::agent {

constexpr unsigned kEmptyTraceSerial = 300000;
constexpr unsigned kUnknownThreadSerial = 200000;

struct FieldInfo {
  std::string name;
  std::string signature;
};

struct ClassInfo {
  unsigned serial = 0;
  std::string name;    // as reports print it: dotted, arrays as int[] / java.lang.String[]
  std::string source;  // "" when unknown
  int num_interfaces = 0;
  std::vector<FieldInfo> statics;
  std::vector<FieldInfo> instances;
  bool unloaded = false;
  unsigned load_trace = 0;  // where it was loaded (heap dumps only; 0: the empty trace)
};

struct MethodInfo {
  jobjectID class_id = nullptr;
  std::string class_name;
  std::string name;
  std::string signature;
  std::string source;
};

struct ThreadInfo {
  unsigned serial = 0;
  std::string name;
  std::string group;
  std::string parent;
  jobjectID object = nullptr;
  bool alive = true;
  uint64_t ended_in = 0;  // ThreadTable's period count when the thread ended
};

struct Frame {
  jmethodID method = nullptr;
  jint line = 0;
  bool operator==(const Frame&) const = default;
};

struct TraceInfo {
  unsigned serial = 0;
  unsigned thread_serial = 0;  // 0 unless thread=y
  std::vector<Frame> frames;
  bool written = false;  // already printed (text) or emitted (binary)
};

// "java.lang.String" for a JVMPI class name; arrays become "int[]", "java.lang.String[]".
std::string report_class_name(const char* jvmpi_name);

class ClassTable {
 public:
  // Returns the class's information; `is_new` tells whether this is its first CLASS_LOAD.
  // `load_trace`: the loading thread's trace, kept for a class seen the first time.
  ClassInfo on_class_load(const JVMPI_Event& e, bool* is_new = nullptr, unsigned load_trace = 0);
  // Returns the class's serial (0 if unknown).
  unsigned on_class_unload(jobjectID id);
  // A copy of the class's information, or nullptr-like empty (serial 0) if unknown.
  ClassInfo find(jobjectID id) const;
  unsigned serial_of(jobjectID id) const;
  std::string name_of(jobjectID id) const;
  MethodInfo method(jmethodID id) const;
  // A method no class declares (the CPU sampler's frames for samples with no Java stack), so that
  // traces can name it; `id` must be no real jmethodID.
  void add_pseudo_method(jmethodID id, const MethodInfo& info);
  std::vector<std::pair<jobjectID, ClassInfo>> all() const;

 private:
  mutable std::mutex mutex_;
  unsigned next_serial_ = 100001;
  std::unordered_map<jobjectID, ClassInfo> classes_;
  std::unordered_map<jmethodID, MethodInfo> methods_;
};

class ThreadTable {
 public:
  // Returns the new thread's serial.
  unsigned on_thread_start(const JVMPI_Event& e);
  unsigned on_thread_end(JNIEnv* env);
  unsigned serial_of(JNIEnv* env) const;  // kUnknownThreadSerial when unknown
  ThreadInfo find(JNIEnv* env) const;
  std::vector<std::pair<JNIEnv*, ThreadInfo>> live() const;
  // period=: at the start, and each time a period's counters are about to be taken; threads that
  // end from now on may still have samples in the next period.
  void begin_period();
  // A new connection's THREAD STARTs (by serial): the threads alive now, and those that ended
  // since the last begin_period() (the first period on the connection may name them).
  std::vector<ThreadInfo> alive_since_last_period() const;
  // Ended threads kept for alive_since_last_period() after their env was reused: at most this
  // many (a collector away for long while threads come and go does not grow the table).
  static constexpr size_t kEndedKeptLimit = 4096;

 private:
  mutable std::mutex mutex_;
  unsigned next_serial_ = 200001;
  uint64_t periods_ = 0;
  std::vector<ThreadInfo> ended_since_period_;  // ended since begin_period, env since reused
  std::unordered_map<JNIEnv*, ThreadInfo> threads_;
};

class TraceTable {
 public:
  TraceTable();
  // The serial of the trace with these frames (and thread, with thread=y), recorded on first use.
  unsigned intern(const JVMPI_CallFrame* frames, int count, unsigned thread_serial);
  // Traces not yet written, marked written; in serial order.
  std::vector<TraceInfo> take_unwritten();
  // Marks every trace unwritten (a reconnected net= stream must carry them all again).
  void mark_all_unwritten();
  TraceInfo find(unsigned serial) const;
  size_t size() const;

 private:
  struct Key {
    unsigned thread_serial;
    std::vector<Frame> frames;
    bool operator==(const Key&) const = default;
  };
  // A trace as GetCallTrace returned it, looked up without copying (the hit is the common case:
  // every allocation interns its trace).
  struct KeyView {
    unsigned thread_serial;
    const JVMPI_CallFrame* frames;
    int count;
  };
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(const Key& k) const;
    size_t operator()(const KeyView& k) const;
  };
  struct KeyEqual {
    using is_transparent = void;
    bool operator()(const Key& a, const Key& b) const { return a == b; }
    bool operator()(const KeyView& a, const Key& b) const;
    bool operator()(const Key& a, const KeyView& b) const { return (*this)(b, a); }
  };

  unsigned intern_in_table(const JVMPI_CallFrame* frames, int count, unsigned thread_serial);

  const uint64_t id_;  // tells tables apart in the per-thread memo of intern
  mutable std::mutex mutex_;
  unsigned next_serial_ = kEmptyTraceSerial + 1;
  // Every trace below this serial is written: take_unwritten starts here rather than walking the
  // whole table under the lock interning needs (serials only grow, and no trace is removed).
  unsigned first_unwritten_ = 0;
  std::unordered_map<Key, unsigned, KeyHash, KeyEqual> serials_;
  std::map<unsigned, TraceInfo> traces_;
};

}  // namespace hprof::agent
