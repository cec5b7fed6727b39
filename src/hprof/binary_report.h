// SPDX-License-Identifier: Apache-2.0
// format=b: the binary JAVA PROFILE 1.0.2 stream (src/formats), with 8-byte identifiers so object
// IDs are the runtime's real IDs. Records are written as events happen (classes, threads) and at
// each dump (traces, sites, CPU samples, heap dump segments). Thread-safe.
//
// net=: a Java thread's event never waits for the report's lock. A report (or a heap dump) holds
// the lock while it waits for room in the net= queue, so an event that finds the lock taken is
// deferred: it is queued here and written by whoever holds the lock when it lets go, in order.
// Drops (Output) are written as a DROPPED note: a UTF8 record with the reserved name id
// kDropsNoteId that no other record names, so every reader skips it.
//
// net= with period=: a new connection must stand on its own, so its hello replays the header and
// every record later records refer to, from what the profile holds (the names, the class table,
// the trace table), not from a copy of the bytes sent: memory stays what the profile needs.
#pragma once

#include <hprof_format.h>
#include <jvmpi.h>
#include <jvmpi_ext.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "allocation_sites.h"
#include "cost_table.h"
#include "options.h"
#include "output.h"
#include "tables.h"

namespace hprof::agent {

class BinaryReport {
 public:
  // The name id of the DROPPED note: all bits set, never given to a name (ids count up from 1).
  static constexpr uint64_t kDropsNoteId = ~uint64_t{0};
  // The name id of the SETTINGS note (net=: the agent's settings after each command), the
  // DROPPED note's neighbour: also never given to a name.
  static constexpr uint64_t kSettingsNoteId = ~uint64_t{1};
  // The name id of the CPU SAMPLER note (cpu_sampler_note), the next reserved one below.
  static constexpr uint64_t kSamplerNoteId = ~uint64_t{2};
  // The name id of the PERIOD note (period=: one period's deltas, format=a's PERIOD block as
  // text), the next reserved one below.
  static constexpr uint64_t kPeriodNoteId = ~uint64_t{3};
  // The name id of the IDENTITY note (net=: the JVM's identity and labels at connect).
  static constexpr uint64_t kIdentityNoteId = ~uint64_t{4};
  // Deferred droppable events beyond this many bytes are dropped (and counted) instead.
  static constexpr size_t kDeferredLimit = size_t{1} << 20;

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
  // A new connection's hello (inside `hello`, on its thread): the header and CONTROL SETTINGS,
  // every UTF8 name so far, LOAD CLASS (and UNLOAD CLASS) for every class, START THREAD for each
  // of `threads` (ThreadTable's alive_since_last_period), STACK FRAME and STACK TRACE for every
  // trace, the IDENTITY note `identity`, the events kept while the front end was away, then (when
  // the lock is let go) deferred events and the DROPPED note.
  void hello(const ClassTable& classes, TraceTable& traces, const std::vector<ThreadInfo>& threads,
             const std::string& identity, Output::HelloScope& hello);
  void alloc_sites(const ClassTable& classes, const std::vector<Site>& sites,
                   const SiteCounts& totals, double cutoff, bool by_allocated);
  void heap_summary(const SiteCounts& totals);
  // The SETTINGS note: a UTF8 record with kSettingsNoteId and format=a's SETTINGS line as text.
  void settings_note(const std::string& text);
  void cpu_samples(const std::vector<Cost>& costs, uint64_t total);
  // The CPU-time sampler's counters beside CPU SAMPLES, as a UTF8 record with the reserved name
  // id kSamplerNoteId: "CPU SAMPLER: signals=S taken=T recovered=R unattributable=U lost=L"
  // (docs/hprof-binary-format.md).
  void cpu_sampler_note(const std::string& text);
  // A note record with one of the reserved name ids above and `text` (PERIOD, IDENTITY).
  void note(uint64_t reserved_id, const std::string& text);
  // HEAP DUMP SEGMENTs and HEAP DUMP END from JVMPI's level-2 heap dump, written as its records
  // arrive: begin, heap_dump_classes (before the records that name those classes as an
  // instance's class), heap_dump_records (whole records, in order; false once output failed),
  // end. The report is locked from begin to end, so the segments stay back to back: reports of
  // other threads wait, events (also a LOAD CLASS this thread causes) are written after the dump.
  void begin_heap_dump(int level, const ClassTable& classes, const ThreadTable& threads,
                       const AllocationSites& sites);
  void heap_dump_classes(const JVMPIExt_DumpClass* classes, jint count);
  bool heap_dump_records(const char* begin, const char* end);
  void end_heap_dump();
  // The one-buffer HEAP_DUMP event, through the same steps.
  void heap_dump(const JVMPI_Event& dump, const ClassTable& classes, const ThreadTable& threads,
                 const AllocationSites& sites);
  void flush();
  // Writes the DROPPED note if events were dropped since the last one (at exit, before the
  // output closes; otherwise whenever the lock is let go).
  void note_drops();

 private:
  uint64_t string_id(const std::string& text);  // writes the UTF8 record on first use
  // An event from a Java thread: written now if the lock is free, else deferred (see above).
  void event(size_t bytes, bool droppable, std::function<void()> write);
  // Lets the lock go after writing the deferred events and the DROPPED note; takes it again
  // when events were deferred meanwhile and nobody else holds it.
  void release(std::unique_lock<std::recursive_mutex>& lock);
  void write_deferred_and_note();
  void write_traces(const ClassTable& classes, TraceTable& traces);  // the lock held
  void write_load_class(const ClassInfo& info, jobjectID class_id);  // the lock held
  void write_start_thread(unsigned serial, jobjectID object, const ThreadInfo& info);  // held
  hprof::WriterOptions writer_options() const;

  class HeapDump;
  class Hold;
  std::recursive_mutex mutex_;
  Output* output_ = nullptr;  // set by begin(), before any event can come
  struct Deferred {
    size_t bytes;
    bool keep;  // admitted to be kept for the next connection (Output::keeping_event)
    std::function<void()> write;
  };
  std::mutex deferred_mutex_;
  std::deque<Deferred> deferred_;
  size_t deferred_bytes_ = 0;
  std::unique_ptr<HeapDump> dump_;  // open between begin_heap_dump and end_heap_dump
  // Names this thread's open dump needed, written after the dump (a LOAD CLASS or other event
  // meanwhile is deferred until the dump ends).
  std::vector<std::pair<uint64_t, std::string>> held_strings_;
  std::unique_ptr<class OutputSink> sink_;
  std::unique_ptr<hprof::BinaryWriter> writer_;
  std::unordered_map<std::string, uint64_t> strings_;
  std::unordered_map<std::string, uint64_t> frames_;  // by method and line
  std::unordered_set<unsigned> announced_;  // class serials with a LOAD CLASS on this connection
  uint64_t next_id_ = 1;
  uint32_t settings_flags_ = 0;  // CONTROL SETTINGS, repeated in each hello
  uint16_t settings_depth_ = 0;
};

}  // namespace hprof::agent
