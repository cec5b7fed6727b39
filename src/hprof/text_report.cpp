// SPDX-License-Identifier: Apache-2.0
#include "text_report.h"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <ctime>

namespace hprof::agent::text {
namespace {

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

// The explanation printed after the header line, as JDK 8 printed its prelude.
constexpr const char* kPrelude =
    R"(This file holds a profile of a Java program, written by HPROF running as a
JVMPI agent on libjvmpi. Its records:

THREAD START / THREAD END   a thread began or ended; id is the thread's serial number.
TRACE                       a stack trace (most recent call first) that other records
                            refer to by its serial number.
HEAP DUMP                   the live objects: ROOT (a GC root and its kind), CLS (a class),
                            OBJ (an instance and its non-null reference fields), ARR (an array).
SITES                       allocation sites: where objects were allocated (trace and class),
                            ranked by the bytes still live.
CPU SAMPLES                 the traces threads were running when sampled, for threads that
                            actually used the CPU in the interval.
CPU TIME                    time and calls per trace, measured at method entry and exit.
MONITOR TIME                time threads spent blocked entering contended monitors.
MONITOR DUMP                every monitor in use and every thread's state at one moment.

Reports are written when the program exits and each time it gets SIGQUIT (Ctrl-\).
)";

}  // namespace

std::string primitive_array_name(jint type) {
  switch (type) {
    case JVMPI_BOOLEAN:
      return "boolean[]";
    case JVMPI_BYTE:
      return "byte[]";
    case JVMPI_CHAR:
      return "char[]";
    case JVMPI_SHORT:
      return "short[]";
    case JVMPI_INT:
      return "int[]";
    case JVMPI_LONG:
      return "long[]";
    case JVMPI_FLOAT:
      return "float[]";
    case JVMPI_DOUBLE:
      return "double[]";
    default:
      return "<Unknown Class>";
  }
}

namespace {

double percent(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

std::string cost_section(const ClassTable& classes, const TraceTable& traces,
                         const std::vector<Cost>& costs, uint64_t total, double cutoff, bool time) {
  std::string out;
  uint64_t accum = 0;
  int rank = 0;
  bool header = false;
  for (const Cost& c : costs) {
    const uint64_t self = time ? c.time_ns : c.count;
    if (self == 0 || percent(self, total) / 100.0 < cutoff) break;
    if (!header) {
      out += "rank   self  accum   count trace method\n";
      header = true;
    }
    accum += self;
    out += format("%4d %5.2f%% %5.2f%% %7" PRIu64 " %5u %s\n", ++rank, percent(self, total),
                  percent(accum, total), c.count, c.trace,
                  top_method(classes, traces.find(c.trace)).c_str());
  }
  return out;
}

}  // namespace

std::string now_ctime() {
  const time_t t = time(nullptr);
  char buf[64];
  return ctime_r(&t, buf) != nullptr ? buf : "\n";
}

std::string header() {
  return "JAVA PROFILE 1.0.1, created " + now_ctime() + "\n" + kPrelude + "\n--------\n\n";
}

std::string thread_start(unsigned serial, jobjectID object, const std::string& name,
                         const std::string& group) {
  return format("THREAD START (obj=%lx, id = %u, name=\"%s\", group=\"%s\")\n",
                static_cast<unsigned long>(reinterpret_cast<uintptr_t>(object)), serial,
                name.c_str(), group.c_str());
}

std::string thread_end(unsigned serial) {
  return format("THREAD END (id = %u)\n", serial);
}

std::string frame(const ClassTable& classes, const Frame& f, bool lineno) {
  const MethodInfo m = classes.method(f.method);
  std::string line;
  if (!lineno || f.line == -1) {
    line = "Unknown line";
  } else if (f.line == -2) {
    line = "Compiled method";
  } else if (f.line == -3) {
    line = "Native method";
  } else {
    line = std::to_string(f.line);
  }
  return (m.class_name.empty() ? std::string("<Unknown Class>") : m.class_name) + "." +
         (m.name.empty() ? std::string("<Unknown Method>") : m.name) + "(" +
         (m.source.empty() ? std::string("<Unknown Source>") : m.source) + ":" + line + ")";
}

std::string top_method(const ClassTable& classes, const TraceInfo& trace) {
  if (trace.frames.empty()) return "<empty trace>";
  const MethodInfo m = classes.method(trace.frames.front().method);
  return (m.class_name.empty() ? std::string("<Unknown Class>") : m.class_name) + "." +
         (m.name.empty() ? std::string("<Unknown Method>") : m.name);
}

std::string traces(const ClassTable& classes, const std::vector<TraceInfo>& traces,
                   const Options& options) {
  std::string out;
  for (const TraceInfo& t : traces) {
    out += format("TRACE %u:", t.serial);
    // As JDK 8: no thread suffix for traces of no known thread (serial 0), such as the empty one.
    if (options.thread_in_traces && t.thread_serial != 0) {
      out += format(" (thread=%u)", t.thread_serial);
    }
    out += "\n";
    if (t.frames.empty()) out += "\t<empty>\n";
    for (const Frame& f : t.frames) {
      // Appended piece by piece: "\t" + string makes GCC 12 at -O3 warn (a false -Wrestrict).
      out += '\t';
      out += frame(classes, f, options.lineno);
      out += '\n';
    }
  }
  return out;
}

std::string site_class_name(const ClassTable& classes, const SiteKey& key) {
  if (key.type == JVMPI_NORMAL_OBJECT) return classes.name_of(key.class_id);
  if (key.type == JVMPI_CLASS) {
    return key.class_id != nullptr ? classes.name_of(key.class_id) + "[]"
                                   : std::string("java.lang.Object[]");
  }
  return primitive_array_name(key.type);
}

std::string sites(const ClassTable& classes, const std::vector<Site>& all, const SiteCounts& totals,
                  double cutoff, bool by_allocated, int sample_bytes) {
  std::vector<Site> sorted = all;
  std::sort(sorted.begin(), sorted.end(), [by_allocated](const Site& a, const Site& b) {
    const uint64_t x = by_allocated ? a.counts.alloc_bytes : a.counts.live_bytes;
    const uint64_t y = by_allocated ? b.counts.alloc_bytes : b.counts.live_bytes;
    if (x != y) return x > y;
    return a.key.trace < b.key.trace;
  });
  const uint64_t total = by_allocated ? totals.alloc_bytes : totals.live_bytes;
  std::string estimate;
  if (sample_bytes > 0) {
    estimate =
        ", estimates from allocations sampled every " + std::to_string(sample_bytes) + " bytes";
  }
  std::string out = "SITES BEGIN (ordered by " +
                    std::string(by_allocated ? "allocated bytes" : "live bytes") + estimate + ") " +
                    now_ctime();
  out += "          percent          live          alloc'ed  stack class\n";
  out += " rank   self  accum     bytes objs     bytes  objs trace name\n";
  uint64_t accum = 0;
  int rank = 0;
  for (const Site& s : sorted) {
    const uint64_t self = by_allocated ? s.counts.alloc_bytes : s.counts.live_bytes;
    if (percent(self, total) / 100.0 < cutoff) break;
    accum += self;
    out +=
        format("%5d %5.2f%% %5.2f%% %9" PRIu64 " %4" PRIu64 " %9" PRIu64 " %5" PRIu64 " %5u %s\n",
               ++rank, percent(self, total), percent(accum, total), s.counts.live_bytes,
               s.counts.live_objects, s.counts.alloc_bytes, s.counts.alloc_objects, s.key.trace,
               site_class_name(classes, s.key).c_str());
  }
  out += "SITES END\n";
  return out;
}

std::string cpu_samples(const ClassTable& classes, const TraceTable& traces,
                        const std::vector<Cost>& costs, uint64_t total, double cutoff,
                        const std::string& sampler_counts) {
  return format("CPU SAMPLES BEGIN (total = %" PRIu64 "%s) ", total, sampler_counts.c_str()) +
         now_ctime() + cost_section(classes, traces, costs, total, cutoff, false) +
         "CPU SAMPLES END\n";
}

std::string cpu_times(const ClassTable& classes, const TraceTable& traces,
                      const std::vector<Cost>& costs, uint64_t total_ns, double cutoff) {
  return format("CPU TIME (ms) BEGIN (total = %" PRIu64 ") ", total_ns / 1000000) + now_ctime() +
         cost_section(classes, traces, costs, total_ns, cutoff, true) + "CPU TIME (ms) END\n";
}

std::string cpu_old(const ClassTable& classes, const TraceTable& traces,
                    const std::vector<Cost>& costs) {
  std::string out = "count callee caller time\n";
  auto describe = [&classes](const TraceInfo& t, size_t i, const char* unknown) {
    if (i >= t.frames.size()) return std::string(unknown);
    const MethodInfo m = classes.method(t.frames[i].method);
    if (m.name.empty()) return std::string(unknown);
    return m.class_name + "." + m.name + m.signature;
  };
  for (const Cost& c : costs) {
    if (c.count == 0) continue;
    const TraceInfo t = traces.find(c.trace);
    out += format("%" PRIu64 " %s %s %" PRIu64 "\n", c.count,
                  describe(t, 0, "<unknown callee>").c_str(),
                  describe(t, 1, "<unknown caller>").c_str(), c.time_ns / 1000000);
  }
  return out;
}

}  // namespace hprof::agent::text
