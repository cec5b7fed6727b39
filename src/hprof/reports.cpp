// SPDX-License-Identifier: Apache-2.0
#include "reports.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "heap_dump_text.h"
#include "jvmpi_client.h"
#include "object_classes.h"
#include "profile.h"
#include "text_report.h"

namespace hprof::agent {
namespace {

// Where the requested dump event this thread is waiting for should go (RequestEvent delivers it
// synchronously, on the requesting thread).
thread_local const std::function<void(const JVMPI_Event&)>* t_dump_consumer = nullptr;

void request(jint type, void* arg, const std::function<void(const JVMPI_Event&)>& consumer) {
  t_dump_consumer = &consumer;
  jvmpi()->RequestEvent(type, arg);
  t_dump_consumer = nullptr;
}

void say(const char* what) {
  if (profile().options.verbose) std::fprintf(stderr, "Dumping %s ...", what);
}

// The section is written out first, so a full disk or a closed connection is told here rather than
// a "done." that did not happen.
void done() {
  Output& output = profile().output;
  output.drain();
  if (!profile().options.verbose) return;
  std::fprintf(stderr, output.failed() ? " failed: the report could not be written (see above).\n"
                                       : " done.\n");
}

unsigned intern_call_trace(const JVMPI_CallTrace& trace) {
  Profile& p = profile();
  const int depth = std::min(trace.num_frames, p.options.depth);
  const unsigned thread = p.options.thread_in_traces ? p.threads.serial_of(trace.env_id) : 0;
  return p.traces.intern(trace.frames, depth, thread);
}

std::string monitor_dump_section() {
  std::string text;
  std::function<void(const JVMPI_Event&)> consumer = [&text](const JVMPI_Event& e) {
    Profile& p = profile();
    text = monitor_dump_text(e, p.threads, class_name_of_object, intern_call_trace);
  };
  request(JVMPI_EVENT_MONITOR_DUMP, nullptr, consumer);
  return text;
}

}  // namespace

void on_heap_dump_event(const JVMPI_Event& event) {
  if (t_dump_consumer != nullptr) (*t_dump_consumer)(event);
}

void on_monitor_dump_event(const JVMPI_Event& event) {
  if (t_dump_consumer != nullptr) (*t_dump_consumer)(event);
}

void write_pending_traces() {
  Profile& p = profile();
  if (p.options.binary) {
    p.binary.traces(p.classes, p.traces);
    return;
  }
  if (p.options.cpu == CpuMode::kOld) return;  // the old format has no TRACE records
  // In batches: one string of every trace (tens of MB after a long cpu=times run) grew by
  // copying into fresh pages many times; a batch's string fits memory the allocator reuses.
  std::vector<TraceInfo> all = p.traces.take_unwritten();
  constexpr size_t kBatch = 1024;
  std::vector<TraceInfo> batch;
  for (size_t i = 0; i < all.size(); i += kBatch) {
    const auto end = all.begin() + static_cast<ptrdiff_t>(std::min(all.size(), i + kBatch));
    batch.assign(std::make_move_iterator(all.begin() + static_cast<ptrdiff_t>(i)),
                 std::make_move_iterator(end));
    p.output.write(text::traces(p.classes, batch, p.options));
  }
}

namespace {

// HPROF_HEAP_DUMP_PATH=one-buffer takes heap dumps through JVMPI's one-buffer HEAP_DUMP event
// instead of the runtime's streamed dump (the tests compare the two).
bool stream_available() {
  JVMPI_ExtInterface* ext = jvmpi_ext();
  if (ext == nullptr || !JVMPI_EXT_HAS(ext, StreamHeapDump)) return false;
  const char* path = std::getenv("HPROF_HEAP_DUMP_PATH");
  return path == nullptr || std::strcmp(path, "one-buffer") != 0;
}

// The streamed dump's sink: every call comes on this thread, while RequestEvent-like
// StreamHeapDump runs. `chunk` runs while the VM is stopped for the heap walk: it only converts
// and writes (no JNI, no JVMPI).
struct StreamTarget {
  Profile& p;
  std::unique_ptr<TextHeapDump> text;
  bool first = true;

  static void JNICALL classes(void* arg, const JVMPIExt_DumpClass* classes, jint count) {
    auto* self = static_cast<StreamTarget*>(arg);
    Profile& p = self->p;
    if (self->first) {
      self->first = false;
      if (p.options.binary) {
        // The traces of objects allocated so far, before the dump names them.
        p.binary.traces(p.classes, p.traces);
        p.binary.begin_heap_dump(JVMPI_DUMP_LEVEL_2, p.classes, p.threads, p.sites);
      } else {
        self->text =
            std::make_unique<TextHeapDump>(JVMPI_DUMP_LEVEL_2, p.classes, p.threads, p.sites,
                                           [&p](const std::string& s) { p.output.write(s); });
      }
    }
    if (p.options.binary) {
      p.binary.heap_dump_classes(classes, count);
    } else {
      for (jint i = 0; i < count; ++i) {
        self->text->add_class(classes[i].class_id, classes[i].super_id,
                              static_cast<uint32_t>(classes[i].instance_size));
      }
    }
  }

  static jboolean JNICALL chunk(void* arg, const char* begin, const char* end) {
    auto* self = static_cast<StreamTarget*>(arg);
    if (self->p.options.binary) return self->p.binary.heap_dump_records(begin, end);
    self->text->records(begin, end);
    return self->p.output.failed() ? JNI_FALSE : JNI_TRUE;
  }

  // Ends what `classes` began, also when the dump failed part way (what was written stays
  // readable up to there).
  void end() {
    if (first) return;
    if (p.options.binary) {
      p.binary.end_heap_dump();
    } else {
      text->finish();
    }
  }
};

}  // namespace

void write_heap_dump() {
  Profile& p = profile();
  say("Java heap");
  if (stream_available()) {
    StreamTarget target{p, nullptr};
    JVMPIExt_HeapDumpSink sink{&target, StreamTarget::classes, StreamTarget::chunk, nullptr};
    const jint rc = jvmpi_ext()->StreamHeapDump(JVMPI_DUMP_LEVEL_2, 0, &sink);
    target.end();
    if (rc != JVMPI_SUCCESS && p.options.verbose) std::fprintf(stderr, " heap dump incomplete;");
    done();
    return;
  }
  std::function<void(const JVMPI_Event&)> consumer = [&p](const JVMPI_Event& e) {
    if (p.options.binary) {
      // The traces of objects allocated while the heap was walked, before the dump names them.
      p.binary.traces(p.classes, p.traces);
      p.binary.heap_dump(e, p.classes, p.threads, p.sites);
    } else {
      heap_dump_text(e, p.classes, p.threads, p.sites,
                     [&p](const std::string& s) { p.output.write(s); });
    }
  };
  JVMPI_HeapDumpArg arg{JVMPI_DUMP_LEVEL_2};
  request(JVMPI_EVENT_HEAP_DUMP, &arg, consumer);
  done();
}

void write_sites_report(bool by_allocated, double cutoff) {
  Profile& p = profile();
  say("allocation sites");
  if (p.options.binary) {
    p.binary.alloc_sites(p.classes, p.sites.sites(), p.sites.totals(), cutoff, by_allocated);
  } else {
    p.output.write(text::sites(p.classes, p.sites.sites(), p.sites.totals(), cutoff, by_allocated,
                               p.sites.sample_interval()));
  }
  done();
}

void write_cpu_report(double cutoff) {
  Profile& p = profile();
  if (p.options.cpu_samples()) {
    say("CPU usage by sampling running threads");
    // The sampler goes on interning traces while the report is written: the rows are taken
    // first and the traces they name written after, so no row names a TRACE not yet sent.
    const std::vector<Cost> rows = p.cpu_samples.sorted_by_count();
    const uint64_t total = p.cpu_samples.total_count();
    write_pending_traces();
    // The runtime sampler's counters: how many signals came and what became of them.
    const CpuSampler::Counts c = p.sampler.counts();
    if (p.options.binary) {
      p.binary.cpu_samples(rows, total);
      if (c.valid) {
        char note[200];
        std::snprintf(note, sizeof note,
                      "CPU SAMPLER: signals=%lld taken=%lld recovered=%lld unattributable=%lld "
                      "lost=%lld",
                      c.signals, c.taken, c.recovered, c.unattributable, c.lost);
        p.binary.cpu_sampler_note(note);
      }
    } else {
      std::string counts;
      if (c.valid) {
        char buf[200];
        std::snprintf(buf, sizeof buf,
                      ", signals = %lld, taken = %lld, recovered = %lld, unattributable = %lld",
                      c.signals, c.taken, c.recovered, c.unattributable);
        counts = buf;
        if (c.lost != 0) counts += ", lost = " + std::to_string(c.lost);
      }
      p.output.write(text::cpu_samples(p.classes, p.traces, rows, total, cutoff, counts));
    }
    done();
  } else if (p.options.cpu == CpuMode::kTimes) {
    say("CPU usage by timing methods");
    const std::vector<Cost> costs = p.timer.costs(false);
    uint64_t total = 0;
    for (const Cost& c : costs) total += c.time_ns;
    write_pending_traces();  // of calls interned since the caller wrote the traces
    p.output.write(text::cpu_times(p.classes, p.traces, costs, total, cutoff));
    done();
    if (p.options.verbose) {
      // How cheaply the times were taken: the thread CPU clock is a system call.
      const CpuTimer::ClockUse use = p.timer.clock_use();
      std::fprintf(stderr, "HPROF cpu=times: %llu method events, %llu thread CPU clock reads\n",
                   static_cast<unsigned long long>(use.events),
                   static_cast<unsigned long long>(use.cpu_clock_reads));
    }
  } else if (p.options.cpu == CpuMode::kOld) {
    say("CPU usage in old prof format");
    const std::vector<Cost> costs = p.timer.costs(true);
    p.output.write(text::cpu_old(p.classes, p.traces, costs));
    done();
  }
}

void write_monitor_report() {
  Profile& p = profile();
  if (!p.options.monitor) return;
  // The monitor dump names thread stacks as traces, so it is taken before the traces are written.
  const std::string monitors = monitor_dump_section();
  write_pending_traces();
  say("monitors");
  p.output.write(p.monitors.time_section(p.traces, p.options.cutoff));
  p.output.write(monitors);
  done();
}

void write_all_reports() {
  Profile& p = profile();
  std::lock_guard section(p.output.section_mutex());
  // The monitor dump names thread stacks as traces, so it is taken before the traces are written.
  const std::string monitors = p.options.monitor ? monitor_dump_section() : std::string();
  write_pending_traces();
  if (p.options.heap_dump) {
    write_heap_dump();
    write_pending_traces();  // of objects allocated while the dump was being taken
  }
  if (p.options.alloc_sites) write_sites_report(false, p.options.cutoff);
  write_cpu_report(p.options.cutoff);
  if (p.options.monitor) {
    say("monitors");
    p.output.write(p.monitors.time_section(p.traces, p.options.cutoff));
    p.output.write(monitors);
    done();
  }
  p.binary.flush();
  p.output.flush();
}

}  // namespace hprof::agent
