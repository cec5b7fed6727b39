// SPDX-License-Identifier: Apache-2.0
// profiles: HPROF's CPU, allocation-site, monitor and thread reports as a model, read from
// java.hprof.txt (format=a) or java.hprof (format=b), whole files or streams fed piece by piece,
// and written as collapsed stacks, pprof, speedscope JSON or a self-contained HTML flame graph.
// Heap dumps are counted, not modelled here: the analysis library reads those.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace profiles {

// One frame of a TRACE. `method` is "pkg.Class.method"; line > 0 is a line number, otherwise
// HPROF's codes: -1 unknown, -2 compiled, -3 native.
struct Frame {
  std::string method;
  std::string source;
  int32_t line = -1;
  bool operator==(const Frame&) const = default;
};

struct Trace {
  uint32_t serial = 0;
  uint32_t thread = 0;        // 0 unless HPROF ran with thread=y
  std::vector<Frame> frames;  // leaf (top of stack) first, as HPROF prints them
};

// A CPU SAMPLES, CPU TIME or MONITOR TIME row. `count` is samples (CPU SAMPLES), calls (CPU TIME)
// or contentions (MONITOR TIME); `self_percent` is the row's share of the section's total.
struct CostRow {
  uint32_t trace = 0;
  uint64_t count = 0;
  double self_percent = 0;
  std::string name;      // the top frame's method (CPU) or the monitor's class (MONITOR TIME)
  uint64_t time_ns = 0;  // a period's CPU TIME or MONITOR TIME row: the exact time (0 elsewhere)
};

struct CostSection {
  uint64_t total = 0;  // samples (CPU SAMPLES) or milliseconds (CPU TIME, MONITOR TIME)
  std::vector<CostRow> rows;
};

struct Site {
  std::string class_name;
  uint32_t trace = 0;
  uint64_t live_bytes = 0, live_objects = 0, alloc_bytes = 0, alloc_objects = 0;
};

struct ThreadInfo {
  uint32_t serial = 0;
  std::string name, group;
  bool ended = false;
  // When the reader parsed the thread's START / END (ms since the Unix epoch, 0: not seen). For a
  // live stream that is when the event arrived, to within one read; HPROF's text format carries
  // no times, so this is the only start/end time a text stream has.
  int64_t start_read_ms = 0, end_read_ms = 0;
};
// The wall clock in ms since the Unix epoch (ThreadInfo's stamps).
int64_t wall_clock_ms();

// What one profile holds. Each report section replaces the previous one of its kind when its end
// has been read (HPROF writes a complete section on every dump), so a profile whose stream broke
// off keeps the last complete sections.
struct JavaProfile {
  std::string source;
  bool binary = false;
  std::map<uint32_t, Trace> traces;
  std::map<uint32_t, ThreadInfo> threads;
  std::optional<CostSection> cpu_samples, cpu_time, monitor_time;
  std::optional<std::vector<Site>> sites;
  // heap=sites,sample=: the sampling interval the SITES counts are estimated from; 0: exact.
  uint64_t sites_sample_bytes = 0;
  std::string monitor_dump;  // the last MONITOR DUMP section's text (format=a)
  uint64_t heap_dumps = 0;   // complete heap dumps seen
  uint64_t sections = 0;     // complete report sections seen (to notice updates)
  // Complete sections by name: "CPU SAMPLES", "CPU TIME", "MONITOR TIME", "MONITOR DUMP",
  // "SITES", "HEAP DUMP", "HEAP SUMMARY" (to tell which command was answered).
  std::map<std::string, uint64_t> section_counts;
  void count_section(const std::string& name) {
    ++sections;
    ++section_counts[name];
  }
  // net=: what the agent dropped while the front end was not reading, as of its last
  // DROPPED line (format=a) or note record (format=b), running totals.
  uint64_t dropped_events = 0, dropped_bytes = 0;
  // net=: the agent's settings as it last reported them (a SETTINGS line, format=a, or note
  // record, format=b: at start and after each CONTROL command), key to value ("depth" -> "16");
  // empty when the agent sends none (JDK 8's HPROF, a file).
  std::map<std::string, std::string> agent_settings;
  uint64_t settings_reports = 0;
  // cpu=samples with HPROF's CPU-time sampler: its counters as of the last CPU SAMPLES section
  // ("signals", "taken", "recovered", "unattributable", "lost"), from the BEGIN line (format=a)
  // or the CPU SAMPLER note (format=b); empty otherwise.
  std::map<std::string, uint64_t> cpu_sampler;
  // HEAP SUMMARY (format=b): live bytes, live objects, allocated bytes, allocated objects.
  std::optional<std::vector<uint64_t>> heap_summary;
  // net=: who the JVM is, from the agent's IDENTITY report at the start of its stream (keys pid,
  // host, main, vm, start, labels), and its labels ("service" -> "checkout"); empty for JDK 8's
  // HPROF and files.
  std::map<std::string, std::string> agent_identity;
  std::map<std::string, std::string> agent_labels;
  uint64_t identity_reports = 0;
  // period=: PERIOD blocks read so far and the last one's end (ms since the Unix epoch); the
  // periods themselves go to StreamReader::on_period.
  uint64_t periods = 0;
  int64_t last_period_end_ms = 0;

  const Trace* trace(uint32_t serial) const;
  std::string thread_name(uint32_t serial) const;  // "" if unknown
};

// Takes a SETTINGS report's text after "SETTINGS: " (space-separated key=value words) into
// p.agent_settings; false if it is not such a list (at most 64 words of at most 1 KiB).
bool parse_agent_settings(std::string_view text, JavaProfile& p);

// period=: what one period added (a PERIOD block, format=a, or PERIOD note record, format=b;
// docs/hprof-text-format.md). Sections are present when the agent profiles that kind. CPU TIME and
// MONITOR TIME rows carry time_ns; their totals are ms. SITES rows carry the allocated bytes and
// objects of the period and the live bytes and objects at its end.
struct PeriodDelta {
  uint64_t seq = 0;
  int64_t start_ms = 0, end_ms = 0;  // ms since the Unix epoch, the agent's clock
  std::optional<CostSection> cpu_samples, cpu_time, monitor_time;
  std::optional<std::vector<Site>> sites;
};
// Parses a PERIOD block's text (from "PERIOD BEGIN:" through "PERIOD END:"); false with `why`
// set if it is malformed. Rows are named from `traces` when given.
bool parse_period(std::string_view block, PeriodDelta& out, std::string& why,
                  const std::map<uint32_t, Trace>* traces = nullptr);
// A profile of one period: its sections, the traces they name and the stream's threads, so that
// everything that draws a JavaProfile draws a period.
JavaProfile period_profile(const JavaProfile& stream, const PeriodDelta& period);

// Takes an IDENTITY report's text after "IDENTITY: " into p.agent_identity and p.agent_labels;
// false if it is not one (at most 16 words of at most 4 KiB, a pid among them).
bool parse_agent_identity(std::string_view text, JavaProfile& p);

// Malformed input; the message is one line and names the source and where.
class ProfileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses a profile stream incrementally, in either format (told apart by the first bytes: the
// binary header ends its magic with a NUL). Memory is bounded: a text line longer than
// `max_line` or a binary record larger than `max_record` is a ProfileError, and heap dumps are
// skipped (text) or dropped after parsing (binary). After an error the parser is unusable; what
// was parsed before stays in profile().
class StreamReader {
 public:
  explicit StreamReader(std::string source, size_t max_line = 1 << 16,
                        size_t max_record = size_t{256} << 20);
  ~StreamReader();
  StreamReader(const StreamReader&) = delete;
  StreamReader& operator=(const StreamReader&) = delete;

  void feed(std::string_view bytes);
  // Called with every period as its block has been read (on the thread that feeds), after
  // profile().periods has counted it. Set before the first feed.
  void on_period(std::function<void(const PeriodDelta&)> handler);
  // End of input: a stream cut inside a section or record is reported as a ProfileError, but the
  // profile keeps everything complete before the cut.
  void finish();
  const JavaProfile& profile() const;
  JavaProfile& profile();
  bool binary() const;      // known after the first bytes
  uint64_t bytes() const;   // fed so far
  size_t buffered() const;  // bytes held waiting for the rest of a line or record

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Reads a whole java.hprof.txt or java.hprof file. Throws ProfileError.
JavaProfile read_profile(const std::string& path);

// ---- MONITOR DUMP (format=a): who owns which monitor, who waits ----

struct MonitorDump {
  struct Thread {
    uint32_t serial = 0, trace = 0;
    std::string status;  // HPROF's code: R, MW (blocked entering), CW (waiting), SL, ...
  };
  struct Monitor {
    std::string signature;  // e.g. Lapp/Lock;
    std::optional<uint32_t> owner;
    uint32_t entry_count = 0;
    std::vector<uint32_t> waiting_to_enter, waiting_to_be_notified;
  };
  std::vector<Thread> threads;
  std::vector<Monitor> monitors;
};
// Parses a MONITOR DUMP section's text (JavaProfile::monitor_dump); lines it does not know are
// skipped.
MonitorDump parse_monitor_dump(std::string_view text);
// Deadlocks found from the dump itself: cycles in "thread waits to enter a monitor owned by
// thread". Each cycle lists (thread, monitor index it waits for), starting at its lowest serial.
std::vector<std::vector<std::pair<uint32_t, size_t>>> deadlock_cycles(const MonitorDump& dump);

// ---- Stacks: a profile as weighted root-first call stacks ----

enum class Measure {
  kCpuSamples,     // CPU SAMPLES counts
  kCpuCalls,       // CPU TIME call counts
  kCpuTimeMs,      // CPU TIME self time, ms (from the row's share of the total)
  kAllocBytes,     // SITES, allocated bytes, class as the leaf frame
  kAllocObjects,   // SITES, allocated objects
  kLiveBytes,      // SITES, live bytes
  kLiveObjects,    // SITES, live objects
  kMonitorTimeMs,  // MONITOR TIME, ms blocked, monitor class as the leaf frame
};

struct Stack {
  std::vector<std::string> frames;  // root first
  uint64_t weight = 0;
  uint32_t thread = 0;
  size_t trace_frames = 0;  // frames from the trace (not the leaf class or monitor, not a thread)
};

std::string_view measure_name(Measure m);  // "cpu-samples", "alloc-bytes", ...
std::optional<Measure> parse_measure(std::string_view name);
std::string_view measure_unit(Measure m);  // "samples", "calls", "ms", "bytes", "objects"
bool has_measure(const JavaProfile& p, Measure m);
// The measures that have data, in enum order.
std::vector<Measure> available_measures(const JavaProfile& p);
// One stack per non-zero row; a trace that is missing gives a frame "<unknown trace N>".
// `thread_root` puts the thread's name ("thread <name>") as the root frame.
std::vector<Stack> stacks(const JavaProfile& p, Measure m, bool thread_root = false);
// A frame's label in stacks: method, and for `with_lines` "(Source.java:12)".
std::string frame_label(const Frame& f, bool with_lines = false);
// A method name without the run-specific part of a lambda's or a method handle's hidden class
// ("demo.App$$Lambda$14.0x0000000801001000.run" -> "demo.App$$Lambda.run", as other profilers
// print them), so one lambda is one frame from run to run. Stacks carry normalised names.
std::string normalized_method(std::string_view method);
// The frame that stands for what HPROF's depth= cut off: stacks of `cut_depth` frames are drawn
// under it instead of as false roots.
std::string truncated_frame(size_t cut_depth);

// ---- Exports ----

// Brendan Gregg's folded format: "root;child;leaf weight\n", one line per distinct stack,
// sorted. Separators in names (';', newlines) are replaced by '_'.
std::string to_collapsed(const std::vector<Stack>& stacks);
// pprof's profile.proto (uncompressed): one sample type per measure given, each stack a sample.
std::string to_pprof(const JavaProfile& p, const std::vector<Measure>& measures);
// speedscope's file format: one "sampled" profile per measure.
std::string to_speedscope(const JavaProfile& p, const std::vector<Measure>& measures);
// One HTML page with an interactive flame graph per measure; scripts and styles inline, no
// network. Everything from the profile is escaped (JSON in a script block with '<' escaped, text
// set through textContent).
// `context`: (label, value) rows shown under the title (program, date, JVM, interval, depth...);
// `cut_depth`: HPROF's depth= when known (0: not known), see truncated_frame().
struct HtmlOptions {
  std::vector<std::pair<std::string, std::string>> context;
  size_t cut_depth = 0;
};
std::string to_html(const JavaProfile& p, const std::vector<Measure>& measures,
                    const std::string& title, const HtmlOptions& options = {});
// The profile's flame data as JSON, the shape both the HTML page and the web UI draw:
// {"measure","unit","total","root":{"n","v","c":[...]}}; children sorted by name.
std::string flame_json(const JavaProfile& p, Measure m, bool thread_root = false,
                       size_t cut_depth = 0);
// Several measures in one tree, so that a viewer switches between them without asking again:
// {"measures":[...],"units":[...],"totals":[...],"root":{"n","v":[one per measure],"c":[...]}}.
std::string flame_json(const JavaProfile& p, const std::vector<Measure>& measures,
                       bool thread_root = false);
// ---- Differential exports: a base ("before") and a target ("after") profile, one measure ----

// FlameGraph's two-column folded format (what its difffolded.pl writes and flamegraph.pl reads):
// "a;b;c BASE TARGET\n" per stack either side has, sorted. With `normalise`, BASE is the base's
// weight scaled to the target's total (rounded), so the columns compare shares, not counts.
std::string to_diff_collapsed(const std::vector<Stack>& base, const std::vector<Stack>& target,
                              bool normalise = true);
// One self-contained HTML page with the differential flame graph (web/diff-flame.js): widths of
// the target, colour by the change of each frame's self share of its profile's total, a table of
// the changes per method.
std::string to_diff_html(const JavaProfile& base, const JavaProfile& target, Measure m,
                         const std::string& base_name, const std::string& target_name);
// The differential flame graph's script (shared with the web UI).
std::string_view diff_flame_js();
// Escapes &, <, >, " and ' for HTML text and attributes.
std::string html_escape(std::string_view s);
// The flame graph's script and style (shared with the web UI).
std::string_view flamegraph_js();
std::string_view flamegraph_css();

}  // namespace profiles
