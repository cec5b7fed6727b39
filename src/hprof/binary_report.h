// format=b: the binary JAVA PROFILE 1.0.2 stream (src/formats), with 8-byte identifiers so object
// IDs are the runtime's real IDs. Records are written as events happen (classes, threads) and at
// each dump (traces, sites, CPU samples, heap dump segments). Thread-safe.
#pragma once

#include <hprof_format.h>
#include <jvmpi.h>
#include <jvmpi_ext.h>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "allocation_sites.h"
#include "cost_table.h"
#include "options.h"
#include "output.h"
#include "tables.h"

namespace hprof::agent {

class BinaryReport {
 public:
  BinaryReport();
  ~BinaryReport();

  // The header and CONTROL SETTINGS.
  void begin(Output& output, const Options& options);
  bool active() const { return writer_ != nullptr; }

  void load_class(const ClassInfo& info, jobjectID class_id);
  void unload_class(unsigned serial);
  void start_thread(unsigned serial, jobjectID object, const ThreadInfo& info);
  void end_thread(unsigned serial);
  // STACK FRAME and STACK TRACE records for the traces not yet written.
  void traces(const ClassTable& classes, TraceTable& traces);
  void alloc_sites(const ClassTable& classes, const std::vector<Site>& sites,
                   const SiteCounts& totals, double cutoff, bool by_allocated);
  void heap_summary(const SiteCounts& totals);
  void cpu_samples(const std::vector<Cost>& costs, uint64_t total);
  // HEAP DUMP SEGMENTs and HEAP DUMP END from JVMPI's level-2 heap dump, written as its records
  // arrive: begin, heap_dump_classes (before the records that name those classes as an
  // instance's class), heap_dump_records (whole records, in order; false once output failed),
  // end. The report is locked from begin to end: other threads' records wait, so the segments
  // stay back to back (a LOAD CLASS this thread causes meanwhile goes in between).
  void begin_heap_dump(int level, const ClassTable& classes, const ThreadTable& threads,
                       const AllocationSites& sites);
  void heap_dump_classes(const JVMPIExt_DumpClass* classes, jint count);
  bool heap_dump_records(const char* begin, const char* end);
  void end_heap_dump();
  // The one-buffer HEAP_DUMP event, through the same steps.
  void heap_dump(const JVMPI_Event& dump, const ClassTable& classes, const ThreadTable& threads,
                 const AllocationSites& sites);
  void flush();

 private:
  uint64_t string_id(const std::string& text);  // writes the UTF8 record on first use

  class HeapDump;
  std::recursive_mutex mutex_;
  std::unique_ptr<HeapDump> dump_;  // open between begin_heap_dump and end_heap_dump
  // Top-level records this thread caused while its dump was open, written after the dump.
  std::vector<std::pair<uint64_t, std::string>> held_strings_;
  std::vector<hprof::LoadClass> held_classes_;
  std::unique_ptr<class OutputSink> sink_;
  std::unique_ptr<hprof::BinaryWriter> writer_;
  std::unordered_map<std::string, uint64_t> strings_;
  std::unordered_map<std::string, uint64_t> frames_;  // by method and line
  uint64_t next_id_ = 1;
};

}  // namespace hprof::agent
