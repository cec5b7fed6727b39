// SPDX-License-Identifier: Apache-2.0
#include "options.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace hprof::agent {
namespace {

constexpr size_t kMaxOptionName = 15;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t end = s.find(sep, start);
    out.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

bool yes_no(const std::string& name, const std::string& value, bool& out, std::string& error) {
  if (value == "y") {
    out = true;
  } else if (value == "n") {
    out = false;
  } else {
    error = "option " + name + " takes y or n, not '" + value + "'";
    return false;
  }
  return true;
}

bool integer(const std::string& name, const std::string& value, long min, int& out,
             std::string& error) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno != 0 || v < min || v > 1000000000L) {
    error = "option " + name + " takes a whole number" + (min > 0 ? " above 0" : " of 0 or more") +
            ", not '" + value + "'";
    return false;
  }
  out = static_cast<int>(v);
  return true;
}

// A number of bytes, with k or m for KiB or MiB (512k, 16m), from `min` to 1 GiB.
bool byte_count(const std::string& value, long long min, long long& out) {
  std::string digits = value;
  long long scale = 1;
  if (!digits.empty() && (digits.back() == 'k' || digits.back() == 'K')) scale = 1024;
  if (!digits.empty() && (digits.back() == 'm' || digits.back() == 'M')) scale = 1024 * 1024;
  if (scale != 1) digits.pop_back();
  int n = 0;
  std::string ignored;
  if (!integer("", digits, 1, n, ignored)) return false;
  out = static_cast<long long>(n) * scale;
  return out >= min && out <= (1LL << 30);
}

bool parse_one(const std::string& name, const std::string& value, Options& o, bool& heap_given,
               bool& file_given, std::string& error) {
  if (name == "heap") {
    heap_given = true;
    if (value == "dump") {
      o.heap_dump = true;
    } else if (value == "sites") {
      o.alloc_sites = true;
    } else if (value == "all") {
      o.heap_dump = o.alloc_sites = true;
    } else {
      error = "option heap takes dump, sites or all, not '" + value + "'";
      return false;
    }
    return true;
  }
  if (name == "cpu") {
    if (value == "samples" || value == "y") {
      o.cpu = CpuMode::kSamples;
    } else if (value == "times") {
      o.cpu = CpuMode::kTimes;
    } else if (value == "old") {
      o.cpu = CpuMode::kOld;
    } else {
      error = "option cpu takes samples, times or old, not '" + value + "'";
      return false;
    }
    return true;
  }
  if (name == "sampler") {
    if (value == "cputime") {
      o.sampler = SamplerKind::kCpuTime;
    } else if (value == "suspend") {
      o.sampler = SamplerKind::kSuspend;
    } else {
      error = "option sampler takes cputime or suspend, not '" + value + "'";
      return false;
    }
    return true;
  }
  if (name == "format") {
    if (value != "a" && value != "b") {
      error = "option format takes a or b, not '" + value + "'";
      return false;
    }
    o.binary = value == "b";
    return true;
  }
  if (name == "file") {
    if (value.empty()) {
      error = "option file needs a file name";
      return false;
    }
    o.file = value;
    file_given = true;
    return true;
  }
  if (name == "net") {
    const size_t colon = value.rfind(':');
    int port = 0;
    std::string ignored;
    if (colon == std::string::npos || colon == 0 ||
        !integer("net", value.substr(colon + 1), 1, port, ignored) || port > 65535) {
      error = "option net takes <host>:<port>, not '" + value + "'";
      return false;
    }
    o.net_host = value.substr(0, colon);
    o.net_port = port;
    return true;
  }
  if (name == "nettls" || name == "nettoken") {
    if (value.empty()) {
      error = "option " + name + " needs a file name";
      return false;
    }
    (name == "nettls" ? o.net_tls_ca : o.net_token_file) = value;
    return true;
  }
  if (name == "sample") {
    o.sample_given = true;
    long long bytes = 0;
    if (value == "0") {
      o.sample_bytes = 0;  // exact counts, also where sampling is the default
      return true;
    }
    if (!byte_count(value, 1024, bytes)) {
      error = "option sample takes 0 or a number of bytes from 1024 to 1g (e.g. 512k), not '" +
              value + "'";
      return false;
    }
    o.sample_bytes = static_cast<int>(bytes);
    return true;
  }
  if (name == "netqueue") {
    // net=: how many bytes may wait for a slow front end before events are dropped.
    long long bytes = 0;
    if (!byte_count(value, 4096, bytes)) {
      error =
          "option netqueue takes a number of bytes from 4k to 1g (e.g. 16m), not '" + value + "'";
      return false;
    }
    o.net_queue_bytes = static_cast<size_t>(bytes);
    return true;
  }
  if (name == "period") {
    if (!integer(name, value, 1, o.period_seconds, error)) return false;
    if (o.period_seconds > 86400) {
      error = "option period takes seconds from 1 to 86400, not '" + value + "'";
      return false;
    }
    return true;
  }
  if (name == "label") {
    std::string why;
    if (!valid_labels(value, why)) {
      error =
          "option label takes key=value pairs separated by ';' (" + why + "), not '" + value + "'";
      return false;
    }
    o.labels = o.labels.empty() ? value : o.labels + ";" + value;
    return true;
  }
  if (name == "depth") return integer(name, value, 0, o.depth, error);
  if (name == "interval") return integer(name, value, 1, o.interval_ms, error);
  if (name == "cutoff") {
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !(v >= 0.0) || v > 1.0) {
      error = "option cutoff takes a fraction from 0 to 1, not '" + value + "'";
      return false;
    }
    o.cutoff = v;
    return true;
  }
  if (name == "monitor") return yes_no(name, value, o.monitor, error);
  if (name == "lineno") return yes_no(name, value, o.lineno, error);
  if (name == "thread") return yes_no(name, value, o.thread_in_traces, error);
  if (name == "doe") return yes_no(name, value, o.dump_on_exit, error);
  if (name == "msa") return yes_no(name, value, o.micro_state_accounting, error);
  if (name == "force") return yes_no(name, value, o.force, error);
  if (name == "verbose") return yes_no(name, value, o.verbose, error);
  if (name == "directio") return yes_no(name, value, o.direct_io, error);
  if (name == "gc_okay" || name == "primfields" || name == "primarrays" || name == "debug" ||
      name == "coredump" || name == "errorexit" || name == "pause") {
    bool ignored = false;  // obsolete or debugging switches: accepted, no effect
    return yes_no(name, value, ignored, error);
  }
  if (name == "debugflags" || name == "logflags") {
    int ignored = 0;
    return integer(name, value, 0, ignored, error);
  }
  if (name == "exitpause" || name == "precrash") {
    error = "option " + name + " is gone; use -XX:OnError=<command> instead";
    return false;
  }
  error = "unknown option '" + name + "'";
  return false;
}

}  // namespace

bool valid_labels(const std::string& text, std::string& why) {
  if (text.size() > 1024) {
    why = "at most 1024 characters";
    return false;
  }
  for (const std::string& pair : split(text, ';')) {
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    if (eq == 0 || eq == std::string::npos) {
      why = "'" + pair + "' is not key=value";
      return false;
    }
    for (size_t i = 0; i < pair.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(pair[i]);
      // Keys are names; values anything printable without the separators of the stream's
      // IDENTITY line (space) and of the option list (',').
      const bool ok = i < eq ? (std::isalnum(c) != 0 || c == '_' || c == '.' || c == '-')
                             : (c > ' ' && c < 0x7f && c != ',');
      if (!ok) {
        why = "'" + pair +
              "' has a character other than letters, digits, '_', '.', '-' in its "
              "key or a space or ',' in its value";
        return false;
      }
    }
  }
  return true;
}

bool parse_options(const char* text, Options& o, std::string& error) {
  o = Options{};
  std::string all = text != nullptr ? text : "";
  if (const char* env = std::getenv("_JAVA_HPROF_OPTIONS"); env != nullptr && *env != '\0') {
    all = all.empty() ? env : all + "," + env;
  }
  if (const char* env = std::getenv("HPROF_LABELS"); env != nullptr && *env != '\0') {
    std::string why;
    if (!valid_labels(env, why)) {
      error = "HPROF_LABELS takes key=value pairs separated by ';' (" + why + ")";
      return false;
    }
    o.labels = env;
  }
  bool heap_given = false;
  bool file_given = false;
  bool any_profile = false;
  for (const std::string& token : split(all, ',')) {
    if (token.empty()) continue;
    if (token == "help") {
      o.help = true;
      continue;
    }
    const size_t eq = token.find('=');
    const std::string name = token.substr(0, eq);
    if (name.size() > kMaxOptionName) {
      error = "option name too long: '" + name + "'";
      return false;
    }
    if (eq == std::string::npos) {
      error = "option '" + name + "' needs a value (" + name + "=<value>)";
      return false;
    }
    if (!parse_one(name, token.substr(eq + 1), o, heap_given, file_given, error)) return false;
    if (name == "cpu" || name == "monitor") any_profile = true;
  }
  if (!heap_given && !any_profile) o.heap_dump = o.alloc_sites = true;
  if (file_given && o.net()) {
    error = "options file and net cannot both be given";
    return false;
  }
  if (!o.net() && (!o.net_tls_ca.empty() || !o.net_token_file.empty())) {
    error = "options nettls and nettoken need net=<host>:<port>";
    return false;
  }
  if (o.binary && o.monitor) {
    error = "option format=b cannot be used with monitor=y";
    return false;
  }
  if (o.binary && o.cpu_timing()) {
    error = "option format=b cannot be used with cpu=times or cpu=old";
    return false;
  }
  if (o.sample_bytes > 0 && (!o.alloc_sites || o.heap_dump || o.binary)) {
    error = "option sample= works with heap=sites and format=a only";
    return false;
  }
  // A service streaming to a front end cannot afford a callback per allocation: there
  // heap=sites samples unless sample=0 asks for exact counts. file= keeps JDK 8's exact meaning.
  if (!o.sample_given && o.net() && o.alloc_sites && !o.heap_dump && !o.binary) {
    o.sample_bytes = kNetDefaultSampleBytes;
  }
  if (o.cpu == CpuMode::kOld) o.depth = 2;  // the old -prof format is callee/caller pairs
  return true;
}

const char* help_text() {
  return R"(
     HPROF: heap and CPU profiling agent (a JVMPI client, on libjvmpi)

hprof usage: java -agentlib:hprof=[help]|[<option>=<value>, ...]

Option Name and Value  Description                    Default
---------------------  -----------                    -------
heap=dump|sites|all    heap profiling                 all
sample=<bytes>|0       heap=sites: sample allocations off (net=: 512k)
cpu=samples|times|old  CPU usage                      off
sampler=cputime|suspend cpu=samples: how sampled      cputime
monitor=y|n            monitor contention             n
format=a|b             text(txt) or binary output     a
file=<file>            write data to file             java.hprof[{.txt}]
net=<host>:<port>      send data over a socket        off
netqueue=<bytes>       net=: queue for a slow reader  16m
nettls=<CA file>       net=: TLS, cert from this CA   off (loopback only)
nettoken=<file>        net=: token sent first         none
period=<seconds>       send each period's deltas      off
label=<k=v;k2=v2>      net=: labels sent at connect   none
depth=<size>           stack trace depth              4
interval=<ms>          sample interval in ms          10
cutoff=<value>         output cutoff point            0.0001
lineno=y|n             line number in traces?         y
thread=y|n             thread in traces?              n
doe=y|n                dump on exit?                  y
msa=y|n                Solaris micro state accounting n
force=y|n              force output to <file>         y
verbose=y|n            print messages about dumps     y
directio=y|n           dumps bypass the page cache    y

Obsolete Options
----------------
gc_okay=y|n

Examples
--------
  - CPU samples every 20 ms, traces 3 frames deep:
      java -agentlib:hprof=cpu=samples,interval=20,depth=3 classname
  - Where the heap was allocated:
      java -agentlib:hprof=heap=sites classname

Notes
-----
  - cpu=samples takes a sample each time a thread has used interval ms of CPU, where the thread
    is (sampler=cputime); sampler=suspend suspends threads in turn, as JDK 8 did.
  - sampler=cputime: the CPU SAMPLES header counts the signals, the samples taken (recovered: the
    thread was in an intrinsic's stub and its Java caller was found) and the unattributable
    ones, which are charged to <unknown Java frame> or <in VM code> traces.
    JVMPI_SAMPLER_STATS=1 prints the runtime's counters on stderr at exit.
  - heap=sites,sample=512k samples one allocation in about every 512 KiB and reports estimated
    counts (the SITES header says so); without sample= every allocation is counted.
  - With net= (format=a), heap=sites samples every 512k by default, which a busy service can
    afford; sample=0 asks for exact counts there. file= runs count every allocation, as JDK 8.
  - format=b cannot be combined with monitor=y.
  - format=b cannot be combined with cpu=old or cpu=times.
  - -Xrunhprof:[help]|[<option>=<value>, ...] is the same as
    -agentlib:hprof=[help]|[<option>=<value>, ...].
  - msa=y is accepted and has no effect on Linux.
  - net=: a front end that stops reading never blocks the program. Up to netqueue= bytes wait for
    it; beyond that, thread start/end and WAIT events are dropped, counted on stderr and in the
    stream (a DROPPED line; format=b: a DROPPED note record). At exit the agent waits for the
    front end while it reads, but gives up after 10 s without progress.
  - net= to an address that is not loopback needs nettls=ca.pem: the agent connects over TLS
    only to a collector whose certificate ca.pem signed for the host name or IP address in
    net=, since the collector can send commands to the JVM. nettoken=FILE (readable only by
    its owner, read once at start) sends the token in FILE first on every connection; the
    collector (jvmprof serve --agent-token) drops a connection without it. With period= a
    collector that cannot be reached or trusted is retried; the program runs on.
  - period=10: every 10 s a PERIOD block carries what the period added (CPU samples or
    cpu=times costs, allocation sites, monitor contention), with its start and end times;
    format=b puts it in a record JDK 8's readers skip. The cumulative reports stay as they are.
    With net=, a collector that goes away is reconnected (backoff up to 10 s); each new
    connection starts with what it needs to stand alone, then the thread start/end and WAIT
    events of the outage (up to netqueue= bytes; beyond that dropped and counted).
  - label=service=checkout;env=prod names the JVM for the front end, after the labels of the
    environment variable HPROF_LABELS (same syntax); the stream starts with the JVM's identity
    (pid, host, main class or jar, JVM version, start time) and these labels.
  - Reports are written at exit (doe=y) and on SIGQUIT (kill -QUIT <pid>, Ctrl-\).
  - directio=y: a heap dump's large writes to file= go around the page cache (O_DIRECT) where
    the file system allows it: less CPU while the program is stopped, and the program's cached
    files are not evicted; the dump then goes at the disk's speed. directio=n writes through
    the page cache, as JDK 8 did.

Warnings
--------
  - heap=dump and heap=all keep an ID for every object the program allocates.
  - cpu=times instruments every method and slows the program down.
)";
}

}  // namespace hprof::agent
