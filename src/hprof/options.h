// SPDX-License-Identifier: Apache-2.0
// HPROF's command-line options (-agentlib:hprof=<options>), with JDK 8's names, values, defaults
// and derived switches.
#pragma once

#include <cstddef>
#include <string>

namespace hprof::agent {

enum class CpuMode { kOff, kSamples, kTimes, kOld };
// Where cpu=samples gets its samples: per-thread CPU-time timers and AsyncGetCallTrace (the JVMPI
// extension), or JDK 8's suspend + ThreadHasRun + GetCallTrace.
enum class SamplerKind { kCpuTime, kSuspend };

// heap=sites with net= (format=a) and no sample=: the interval a service can afford.
constexpr int kNetDefaultSampleBytes = 512 * 1024;

struct Options {
  bool help = false;
  bool heap_dump = false;    // heap=dump|all
  bool alloc_sites = false;  // heap=sites|all
  CpuMode cpu = CpuMode::kOff;
  SamplerKind sampler = SamplerKind::kCpuTime;
  bool monitor = false;
  bool binary = false;  // format=b
  std::string file;     // as given ("" = default name)
  std::string net_host;
  int net_port = 0;
  size_t net_queue_bytes = size_t{16} << 20;  // netqueue=: bytes held for a slow front end
  std::string net_tls_ca;      // nettls=: CA file; the collector's certificate is checked
  std::string net_token_file;  // nettoken=: file with the token sent first on each connection
  // period=: every this many seconds, what the period added (CPU samples or times, allocation
  // sites, monitor contention) as a PERIOD block; 0 = no periods (JDK 8's stream).
  int period_seconds = 0;
  // label=k=v;k2=v2, after the labels of the environment variable HPROF_LABELS (same syntax),
  // sent with the JVM's identity at connect.
  std::string labels;
  int sample_bytes = 0;  // heap=sites,sample=<bytes>: sampled allocations; 0 = every allocation
  bool sample_given = false;  // sample= was given (sample=0 keeps net= runs exact)
  int depth = 4;
  int interval_ms = 10;
  double cutoff = 0.0001;
  bool lineno = true;
  bool thread_in_traces = false;
  bool dump_on_exit = true;
  bool micro_state_accounting = false;  // accepted; no effect on Linux
  bool force = true;
  bool verbose = true;
  bool direct_io = true;  // directio=: file=: large writes (heap dumps) bypass the page cache

  bool net() const { return !net_host.empty(); }
  bool cpu_samples() const { return cpu == CpuMode::kSamples; }
  bool cpu_timing() const { return cpu == CpuMode::kTimes || cpu == CpuMode::kOld; }
  bool object_tracking() const { return heap_dump || alloc_sites; }
  // The output file's name before any pid suffix.
  std::string default_file() const { return binary ? "java.hprof" : "java.hprof.txt"; }
};

// Parses `text` (the part after "hprof=" or "-Xrunhprof:"), with the environment variable
// _JAVA_HPROF_OPTIONS appended as JDK 8 did. On error returns false and sets `error` to one line
// naming the offending option.
bool parse_options(const char* text, Options& options, std::string& error);

// Whether `text` is a label list "k=v;k2=v2" (keys of letters, digits, '_', '.', '-'; values
// printable, without spaces or ','); if not, `why` says what is wrong.
bool valid_labels(const std::string& text, std::string& why);

// The help screen.
const char* help_text();

}  // namespace hprof::agent
