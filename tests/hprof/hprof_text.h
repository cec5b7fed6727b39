// SPDX-License-Identifier: Apache-2.0
// A parser and structural checker for HPROF's text output (java.hprof.txt, format=a), following
// JDK 8's layout (/work/shared/hprof-formats.md section 5, docs/hprof-text-format.md).
//
// ParseProfile() reads the whole file into a model and lists every structural problem it finds in
// Profile::errors: the header and prelude, records it does not recognize, BEGIN without END (and
// the reverse), rows whose layout or arithmetic is wrong (ranks, self% adding up to accum%, the
// last accum% at most 100.00, sort order), TRACE serials referenced but never defined, and thread
// serials referenced (THREAD END, WAIT lines, MONITOR DUMP, TRACE headers) but never started.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hproftest {

struct TraceFrame {
  std::string method;  // "java.lang.Thread.run": class and method name
  std::string source;  // "Thread.java", "<Unknown Source>"
  std::string line;    // "829", "Unknown line", "Compiled method", "Native method"
  std::string text;    // the whole frame as printed (without the TAB)
};

struct Trace {
  unsigned serial = 0;
  std::optional<unsigned> thread;  // " (thread=N)" (thread=y)
  std::string phase;               // " (from <phase> phase of JVM)", else ""
  std::vector<TraceFrame> frames;  // empty for "<empty>"
  size_t line_no = 0;
};

struct ThreadStart {
  std::string object;  // hex
  unsigned id = 0;
  std::string name, group;
  size_t line_no = 0;
};

struct WaitRecord {
  enum Kind { kWait, kWaited, kSleep, kExit } kind = kWait;
  std::string monitor;             // raw JVM signature, e.g. "Ljava/lang/Object;" ("" for SLEEP)
  int64_t value = 0;               // timeout (WAIT, SLEEP) or time_waited (WAITED)
  std::optional<unsigned> thread;  // empty: "<unknown thread>"
  size_t line_no = 0;
};

struct SiteRow {
  int rank = 0;
  double self = 0, accum = 0;
  uint64_t live_bytes = 0, live_objs = 0, alloc_bytes = 0, alloc_objs = 0;
  unsigned trace = 0;
  std::string class_name;
};

struct SitesSection {
  bool by_live_bytes = true;  // else by allocated bytes
  bool estimated = false;     // heap=sites,sample=: counts estimated from sampled allocations
  std::vector<SiteRow> rows;
  size_t line_no = 0;
};

struct CostRow {
  int rank = 0;
  double self = 0, accum = 0;
  uint64_t count = 0;
  unsigned trace = 0;
  std::string name;  // method (CPU) or "class (Java)" (MONITOR TIME)
};

// CPU SAMPLES, CPU TIME (ms) and MONITOR TIME.
struct CostSection {
  std::string kind;  // "CPU SAMPLES", "CPU TIME (ms)", "MONITOR TIME"
  uint64_t total = 0;
  // CPU SAMPLES of the CPU-time sampler: the counters after the total in the BEGIN line
  // ("signals", "taken", "recovered", "unattributable", "lost"); empty otherwise.
  std::map<std::string, uint64_t> sampler;
  std::vector<CostRow> rows;
  size_t line_no = 0;
};

struct HeapRoot {
  std::string id;
  std::string kind;                          // "thread", "Java stack", "system class", ...
  std::map<std::string, std::string> attrs;  // id=, trace=, thread=, frame=, name=
};

struct HeapObj {
  std::string id;
  uint64_t size = 0;
  unsigned trace = 0;
  std::string class_name, class_id;
  std::vector<std::pair<std::string, std::string>> fields;  // name, hex id (non-null refs)
  size_t line_no = 0;
};

struct HeapArr {
  std::string id;
  uint64_t size = 0;
  unsigned trace = 0;
  uint64_t nelems = 0;
  std::string elem_type;  // as printed: "int[]", "java.lang.String[]"
  std::string class_id;   // object arrays only
  std::vector<std::pair<uint64_t, std::string>> elements;  // index, hex id (non-null)
  size_t line_no = 0;
};

struct HeapCls {
  std::string id;
  std::string name;
  unsigned trace = 0;
  std::map<std::string, std::string> attrs;                  // super, loader, signers, domain
  std::vector<std::pair<std::string, std::string>> statics;  // name, hex id
  std::vector<std::pair<int, std::string>> constants;        // cp index, hex id
  size_t line_no = 0;
};

struct HeapDump {
  uint64_t objects = 0, bytes = 0;  // from the BEGIN line
  std::vector<HeapRoot> roots;
  std::vector<HeapObj> objs;
  std::vector<HeapArr> arrs;
  std::vector<HeapCls> classes;
  size_t line_no = 0;

  const HeapObj* obj(const std::string& id) const;
  const HeapArr* arr(const std::string& id) const;
  const HeapCls* cls(const std::string& id) const;
  const HeapCls* cls_named(const std::string& name) const;
  std::vector<const HeapObj*> objs_of_class(const std::string& name) const;
  // References (OBJ fields, ARR elements, CLS statics/super/...) to ids with no record here.
  std::vector<std::string> dangling_references() const;

 private:
  friend class ProfileParser;
  std::map<std::string, size_t> obj_index_, arr_index_, cls_index_;
};

struct MonitorDumpThread {
  unsigned thread = 0, trace = 0;
  std::string status;
};

struct MonitorDumpMonitor {
  bool raw = false;
  std::string monitor;  // signature, or the raw monitor's name
  std::optional<unsigned> owner;
  unsigned entry_count = 0;
  std::vector<std::optional<unsigned>> entering, waiting;  // empty optional: <unknown thread>
};

struct DeadlockEdge {
  unsigned thread = 0, trace = 0, owner = 0;
  std::string monitor;  // "MONITOR Lsig;" or "raw monitor name"
};

struct MonitorDump {
  std::vector<MonitorDumpThread> threads;
  std::vector<MonitorDumpMonitor> monitors;
  std::vector<std::vector<DeadlockEdge>> deadlocks;
  size_t line_no = 0;
};

struct SectionMark {
  std::string name;  // "HEAP DUMP", "SITES", "CPU SAMPLES", "CPU TIME (ms)", "MONITOR TIME", ...
  size_t begin_line = 0, end_line = 0;
};

struct Profile {
  std::string created;  // the date of the header line
  std::vector<ThreadStart> thread_starts;
  std::vector<std::pair<unsigned, size_t>> thread_ends;  // id, line
  std::map<unsigned, Trace> traces;
  std::vector<WaitRecord> waits;
  std::vector<SitesSection> sites;
  std::vector<CostSection> cpu_samples, cpu_times, monitor_times;
  std::vector<HeapDump> heap_dumps;
  std::vector<MonitorDump> monitor_dumps;
  std::vector<SectionMark> sections;  // in file order
  std::vector<std::string> errors;    // structural problems; empty = well formed

  bool ok() const { return errors.empty(); }
  std::string error_text(size_t max = 40) const;
  // The serial of the (first) thread started with this name.
  std::optional<unsigned> thread_serial(const std::string& name) const;
  const Trace* trace(unsigned serial) const;
  // The method of the trace's top frame ("" for an empty or unknown trace).
  std::string top_method(unsigned serial) const;
  size_t count(const std::string& section) const;
};

Profile ParseProfile(const std::string& text);

// "Mon Nov 23 07:25:44 2026": the date layout of C's ctime().
bool IsCtimeDate(const std::string& s);

}  // namespace hproftest
