// SPDX-License-Identifier: Apache-2.0
#include "hprof_text.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <set>

namespace hproftest {
namespace {

constexpr unsigned kUnknownThread = 200000;  // the "unknown thread" of ROOT 0 and heap roots
constexpr double kRounding = 0.0151;         // three values each rounded to 0.005

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

bool IsHex(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool IsNumber(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

uint64_t ToU64(const std::string& s) {
  return std::strtoull(s.c_str(), nullptr, 10);
}

std::string Format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Format(const char* fmt, ...) {
  char buf[2048];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

const std::vector<std::string>& SectionNames() {
  static const std::vector<std::string> names{"HEAP DUMP",     "SITES",        "CPU SAMPLES",
                                              "CPU TIME (ms)", "MONITOR TIME", "MONITOR DUMP"};
  return names;
}

// The section a BEGIN line opens, or "".
std::string BeginOf(const std::string& line) {
  for (const std::string& name : SectionNames()) {
    if (line == name + " BEGIN" || StartsWith(line, name + " BEGIN ")) return name;
  }
  return "";
}

std::string EndOf(const std::string& line) {
  for (const std::string& name : SectionNames()) {
    if (line == name + " END") return name;
  }
  return "";
}

struct Ref {
  unsigned serial;
  size_t line;
  std::string what;
};

}  // namespace

bool IsCtimeDate(const std::string& s) {
  static const std::regex date(
      R"((Sun|Mon|Tue|Wed|Thu|Fri|Sat) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) )"
      R"([ 1-3][0-9] [0-2][0-9]:[0-5][0-9]:[0-6][0-9] [0-9]{4})");
  return std::regex_match(s, date);
}

class ProfileParser {
 public:
  explicit ProfileParser(const std::string& text) {
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) {
        lines_.push_back(text.substr(start));
        error(lines_.size(), "the file does not end with a line break (truncated?)");
        break;
      }
      lines_.push_back(text.substr(start, end - start));
      start = end + 1;
    }
  }

  Profile Parse() {
    size_t i = Header();
    while (i < lines_.size()) i = TopLevel(i);
    CheckReferences();
    return std::move(p_);
  }

 private:
  const std::string& line(size_t index) const { return lines_[index]; }
  void error(size_t line_no, const std::string& message) {
    p_.errors.push_back("line " + std::to_string(line_no) + ": " + message);
  }
  void bad_line(size_t index, const std::string& context) {
    std::string text = line(index);
    if (text.size() > 160) text = text.substr(0, 160) + "...";
    error(index + 1, "unrecognized " + context + ": \"" + text + "\"");
  }
  void trace_ref(unsigned serial, size_t index, const std::string& what) {
    trace_refs_.push_back({serial, index + 1, what});
  }
  void thread_ref(unsigned serial, size_t index, const std::string& what) {
    thread_refs_.push_back({serial, index + 1, what});
  }

  // "JAVA PROFILE 1.0.1, created <date>", "", the prelude, "--------", "".
  size_t Header() {
    const std::string kHead = "JAVA PROFILE 1.0.1, created ";
    if (lines_.empty()) {
      error(1, "the file is empty");
      return 0;
    }
    if (!StartsWith(line(0), kHead) || !IsCtimeDate(line(0).substr(kHead.size()))) {
      error(1,
            "the header is not \"JAVA PROFILE 1.0.1, created <ctime date>\": \"" + line(0) + "\"");
    } else {
      p_.created = line(0).substr(kHead.size());
    }
    if (lines_.size() < 2 || !line(1).empty()) error(2, "no empty line after the header line");
    for (size_t i = 2; i + 1 < lines_.size(); ++i) {
      if (line(i) == "--------" && line(i + 1).empty()) return i + 2;
    }
    error(1, "the prelude does not end with a line of eight dashes and an empty line");
    return lines_.size();
  }

  size_t TopLevel(size_t i) {
    const std::string& l = line(i);
    static const std::regex thread_start(
        R"re(THREAD START \(obj=([0-9a-f]+), id = ([0-9]+), name="(.*)", group="(.*)"\))re");
    static const std::regex thread_end(R"(THREAD END \(id = ([0-9]+)\))");
    std::smatch m;
    if (StartsWith(l, "THREAD START ")) {
      if (!std::regex_match(l, m, thread_start)) {
        bad_line(i, "THREAD START");
      } else {
        ThreadStart t{m[1], static_cast<unsigned>(ToU64(m[2])), m[3], m[4], i + 1};
        if (started_.count(t.id) != 0) {
          error(i + 1, "thread " + std::to_string(t.id) + " started twice");
        }
        started_[t.id] = i + 1;
        p_.thread_starts.push_back(t);
      }
      return i + 1;
    }
    if (StartsWith(l, "THREAD END ")) {
      if (!std::regex_match(l, m, thread_end)) {
        bad_line(i, "THREAD END");
      } else {
        const auto id = static_cast<unsigned>(ToU64(m[1]));
        if (ended_.count(id) != 0) error(i + 1, "thread " + std::to_string(id) + " ended twice");
        ended_.insert(id);
        thread_ref(id, i, "THREAD END");
        p_.thread_ends.emplace_back(id, i + 1);
      }
      return i + 1;
    }
    if (StartsWith(l, "TRACE ")) return TraceRecord(i);
    // net= only: the agent's settings after each front-end command (docs/hprof-text-format.md).
    if (StartsWith(l, "SETTINGS: ")) {
      static const std::regex settings(R"(SETTINGS:( [a-z_]+=[^ =]*)+)");
      if (!std::regex_match(l, m, settings)) bad_line(i, "SETTINGS line");
      return i + 1;
    }
    // net= only: the JVM's identity at the start of the stream (docs/hprof-text-format.md).
    if (StartsWith(l, "IDENTITY: ")) {
      static const std::regex identity(
          R"(IDENTITY: pid=[0-9]+ host=[^ ]+ main=[^ ]+ vm=[^ ]+ start=[0-9]+ labels=[^ ]+)"
          R"(( connection=[0-9]+)?)");
      if (!std::regex_match(l, m, identity)) bad_line(i, "IDENTITY line");
      return i + 1;
    }
    // period= only: a PERIOD block, to its END line (its rows are checked by src/profiles' tests).
    if (StartsWith(l, "PERIOD BEGIN: ")) {
      size_t j = i + 1;
      while (j < lines_.size() && !StartsWith(lines_[j], "PERIOD END: ")) ++j;
      if (j == lines_.size()) error(i + 1, "PERIOD BEGIN without PERIOD END");
      return std::min(j + 1, lines_.size());
    }
    if (StartsWith(l, "WAIT: ") || StartsWith(l, "WAITED: ") || StartsWith(l, "SLEEP: ") ||
        StartsWith(l, "EXIT: ")) {
      WaitLine(i);
      return i + 1;
    }
    if (const std::string name = BeginOf(l); !name.empty()) return Section(i, name);
    if (const std::string name = EndOf(l); !name.empty()) {
      error(i + 1, name + " END without " + name + " BEGIN");
      return i + 1;
    }
    bad_line(i, "record");
    return i + 1;
  }

  size_t TraceRecord(size_t i) {
    static const std::regex head(
        R"(TRACE ([0-9]+):( \(thread=([0-9]+)\))?( \(from (.+) phase of JVM\))?)");
    std::smatch m;
    const std::string& l = line(i);
    size_t j = i + 1;
    while (j < lines_.size() && !line(j).empty() && line(j)[0] == '\t') ++j;
    if (!std::regex_match(l, m, head)) {
      bad_line(i, "TRACE header");
      return j;
    }
    Trace t;
    t.serial = static_cast<unsigned>(ToU64(m[1]));
    if (m[2].matched) {
      t.thread = static_cast<unsigned>(ToU64(m[3]));
      thread_ref(*t.thread, i, "TRACE " + std::to_string(t.serial) + " (thread=)");
    }
    if (m[4].matched) t.phase = m[5];
    t.line_no = i + 1;
    if (j == i + 1) error(i + 1, "TRACE " + std::to_string(t.serial) + " has no frame lines");
    bool empty_marker = false;
    for (size_t k = i + 1; k < j; ++k) {
      const std::string frame = line(k).substr(1);
      if (frame == "<empty>") {
        empty_marker = true;
        continue;
      }
      TraceFrame f;
      f.text = frame;
      const size_t open = frame.rfind('(');
      const size_t colon = frame.rfind(':');
      if (open == std::string::npos || frame.back() != ')' || colon == std::string::npos ||
          colon < open) {
        bad_line(k, "TRACE frame");
        continue;
      }
      f.method = frame.substr(0, open);
      f.source = frame.substr(open + 1, colon - open - 1);
      f.line = frame.substr(colon + 1, frame.size() - colon - 2);
      const bool line_ok = IsNumber(f.line) || f.line == "Unknown line" ||
                           f.line == "Compiled method" || f.line == "Native method";
      if (f.method.find('.') == std::string::npos || f.source.empty() || !line_ok) {
        bad_line(k, "TRACE frame");
        continue;
      }
      t.frames.push_back(f);
    }
    if (empty_marker && (!t.frames.empty() || j - i > 2)) {
      error(i + 1, "TRACE " + std::to_string(t.serial) + " has <empty> and frames");
    }
    if (p_.traces.count(t.serial) != 0) {
      error(i + 1, "TRACE " + std::to_string(t.serial) + " defined twice (first at line " +
                       std::to_string(p_.traces[t.serial].line_no) + ")");
    } else {
      p_.traces[t.serial] = t;
    }
    return j;
  }

  void WaitLine(size_t i) {
    static const std::regex wait(
        R"((WAIT|WAITED): MONITOR (.+?), (timeout|time_waited)=(-?[0-9]+), (thread ([0-9]+)|<unknown thread>))");
    static const std::regex sleep(
        R"(SLEEP: timeout=(-?[0-9]+), (thread ([0-9]+)|<unknown thread>))");
    static const std::regex exit(R"(EXIT: MONITOR (.+?), (thread ([0-9]+)|<unknown thread>))");
    const std::string& l = line(i);
    std::smatch m;
    WaitRecord w;
    w.line_no = i + 1;
    std::string thread;
    if (std::regex_match(l, m, wait)) {
      const bool waited = m[1] == "WAITED";
      if (waited != (m[3] == "time_waited")) {
        bad_line(i, "WAIT/WAITED line");
        return;
      }
      w.kind = waited ? WaitRecord::kWaited : WaitRecord::kWait;
      w.monitor = m[2];
      w.value = std::strtoll(m[4].str().c_str(), nullptr, 10);
      if (m[6].matched) thread = m[6];
    } else if (std::regex_match(l, m, sleep)) {
      w.kind = WaitRecord::kSleep;
      w.value = std::strtoll(m[1].str().c_str(), nullptr, 10);
      if (m[3].matched) thread = m[3];
    } else if (std::regex_match(l, m, exit)) {
      w.kind = WaitRecord::kExit;
      w.monitor = m[1];
      if (m[3].matched) thread = m[3];
    } else {
      bad_line(i, "WAIT/WAITED/SLEEP/EXIT line");
      return;
    }
    static const std::regex signature(R"(\[*(L[^;<>\[ ]+;|[ZBCSIJFD]))");
    if (w.kind != WaitRecord::kSleep && !std::regex_match(w.monitor, signature)) {
      error(i + 1, "monitor \"" + w.monitor + "\" is not a JVM signature");
    }
    if (!thread.empty()) {
      w.thread = static_cast<unsigned>(ToU64(thread));
      thread_ref(*w.thread, i, "WAIT/WAITED/SLEEP line");
    }
    p_.waits.push_back(w);
  }

  // A section from its BEGIN at line i to its END; returns the index after it.
  size_t Section(size_t i, const std::string& name) {
    size_t j = i + 1;
    while (j < lines_.size() && line(j) != name + " END") {
      if (!BeginOf(line(j)).empty()) break;
      ++j;
    }
    const bool closed = j < lines_.size() && line(j) == name + " END";
    if (!closed) {
      error(i + 1, name + " BEGIN without " + name + " END" +
                       (j < lines_.size()
                            ? " (another section begins at line " + std::to_string(j + 1) + ")"
                            : " (end of file)"));
    }
    p_.sections.push_back({name, i + 1, closed ? j + 1 : 0});
    if (name == "SITES") {
      Sites(i, j);
    } else if (name == "HEAP DUMP") {
      Heap(i, j);
    } else if (name == "MONITOR DUMP") {
      Monitors(i, j);
    } else {
      Costs(i, j, name);
    }
    return closed ? j + 1 : j;
  }

  void CheckDate(size_t i, const std::string& date) {
    if (!IsCtimeDate(date)) error(i + 1, "the BEGIN line does not end with a ctime date");
  }

  template <typename Row, typename Key>
  void CheckPercentages(const std::vector<Row>& rows, const std::vector<size_t>& row_lines,
                        const std::string& section, Key key) {
    double accum = 0;
    for (size_t k = 0; k < rows.size(); ++k) {
      const Row& r = rows[k];
      const size_t at = row_lines[k];
      if (r.rank != static_cast<int>(k + 1)) {
        error(at, section + " rank " + std::to_string(r.rank) + " where " + std::to_string(k + 1) +
                      " was due");
      }
      if (std::fabs(accum + r.self - r.accum) > kRounding) {
        error(at, section + Format(" accum %.2f%% is not the previous accum %.2f%% + self %.2f%%",
                                   r.accum, accum, r.self));
      }
      if (k > 0 && key(r) > key(rows[k - 1])) {
        error(at, section + " rows are not in descending order");
      }
      if (r.self < 0 || r.self > 100.0) error(at, section + " self% out of range");
      accum = r.accum;
    }
    if (!rows.empty() && rows.back().accum > 100.0) {
      error(row_lines.back(),
            section + Format(" last accum %.2f%% is above 100.00%%", rows.back().accum));
    }
  }

  void Sites(size_t i, size_t end) {
    // heap=sites,sample=<bytes> labels its counts as estimates.
    static const std::regex begin(
        R"(SITES BEGIN \(ordered by (live|allocated) bytes(, estimates from allocations sampled every [0-9]+ bytes)?\) (.*))");
    std::smatch m;
    SitesSection s;
    s.line_no = i + 1;
    if (!std::regex_match(line(i), m, begin)) {
      bad_line(i, "SITES BEGIN line");
    } else {
      s.by_live_bytes = m[1] == "live";
      s.estimated = m[2].matched;
      CheckDate(i, m[3]);
    }
    const std::string h1 = "          percent          live          alloc'ed  stack class";
    const std::string h2 = " rank   self  accum     bytes objs     bytes  objs trace name";
    if (i + 2 >= end || line(i + 1) != h1 || line(i + 2) != h2) {
      error(i + 2, "SITES does not have the two column header lines");
    }
    std::vector<size_t> row_lines;
    for (size_t k = i + 3; k < end; ++k) {
      const std::string& l = line(k);
      SiteRow r;
      unsigned long long lb = 0, lo = 0, ab = 0, ao = 0;
      int consumed = 0;
      if (std::sscanf(l.c_str(), "%d %lf%% %lf%% %llu %llu %llu %llu %u %n", &r.rank, &r.self,
                      &r.accum, &lb, &lo, &ab, &ao, &r.trace, &consumed) != 8 ||
          consumed <= 0 || static_cast<size_t>(consumed) >= l.size()) {
        bad_line(k, "SITES row");
        continue;
      }
      r.class_name = l.substr(static_cast<size_t>(consumed));
      r.live_bytes = lb;
      r.live_objs = lo;
      r.alloc_bytes = ab;
      r.alloc_objs = ao;
      const std::string expect =
          Format("%5d %5.2f%% %5.2f%% %9llu %4llu %9llu %5llu %5u %s", r.rank, r.self, r.accum, lb,
                 lo, ab, ao, r.trace, r.class_name.c_str());
      if (expect != l) error(k + 1, "SITES row layout differs from JDK 8's: \"" + l + "\"");
      if (lb > ab || lo > ao) error(k + 1, "SITES row has more live than allocated");
      trace_ref(r.trace, k, "SITES");
      s.rows.push_back(r);
      row_lines.push_back(k + 1);
    }
    CheckPercentages(s.rows, row_lines, "SITES", [&s](const SiteRow& r) {
      return s.by_live_bytes ? r.live_bytes : r.alloc_bytes;
    });
    p_.sites.push_back(std::move(s));
  }

  void Costs(size_t i, size_t end, const std::string& name) {
    CostSection s;
    s.kind = name;
    s.line_no = i + 1;
    std::string pattern, header, row_end;
    if (name == "CPU SAMPLES") {
      pattern = R"(CPU SAMPLES BEGIN \(total = ([0-9]+)((?:, \w+ = [0-9]+)*)\) (.*))";
      header = "rank   self  accum   count trace method";
    } else if (name == "CPU TIME (ms)") {
      pattern = R"(CPU TIME \(ms\) BEGIN \(total = ([0-9]+)\) (.*))";
      header = "rank   self  accum   count trace method";
    } else {
      pattern = R"(MONITOR TIME BEGIN \(total = ([0-9]+) ms\) (.*))";
      header = "rank   self  accum   count trace monitor";
    }
    std::smatch m;
    if (!std::regex_match(line(i), m, std::regex(pattern))) {
      bad_line(i, name + " BEGIN line");
    } else {
      s.total = ToU64(m[1]);
      const bool counters = name == "CPU SAMPLES";
      if (counters) {
        const std::string list = m[2];
        static const std::regex kCounter(R"(, (\w+) = ([0-9]+))");
        for (auto it = std::sregex_iterator(list.begin(), list.end(), kCounter);
             it != std::sregex_iterator(); ++it) {
          s.sampler[(*it)[1]] = ToU64((*it)[2]);
        }
      }
      CheckDate(i, m[counters ? 3 : 2]);
    }
    size_t k = i + 1;
    const bool has_header = k < end && line(k) == header;
    if (has_header) ++k;
    std::vector<size_t> row_lines;
    for (; k < end; ++k) {
      const std::string& l = line(k);
      CostRow r;
      unsigned long long count = 0;
      int consumed = 0;
      if (std::sscanf(l.c_str(), "%d %lf%% %lf%% %llu %u %n", &r.rank, &r.self, &r.accum, &count,
                      &r.trace, &consumed) != 5 ||
          consumed <= 0 || static_cast<size_t>(consumed) >= l.size()) {
        bad_line(k, name + " row");
        continue;
      }
      r.count = count;
      r.name = l.substr(static_cast<size_t>(consumed));
      const std::string expect = Format("%4d %5.2f%% %5.2f%% %7llu %5u %s", r.rank, r.self, r.accum,
                                        count, r.trace, r.name.c_str());
      if (expect != l) error(k + 1, name + " row layout differs from JDK 8's: \"" + l + "\"");
      if (name == "MONITOR TIME" && r.name.size() < 8)
        error(k + 1, "MONITOR TIME row has no monitor");
      trace_ref(r.trace, k, name);
      s.rows.push_back(r);
      row_lines.push_back(k + 1);
    }
    if (!s.rows.empty() && !has_header) error(i + 2, name + " has rows but no column header");
    if (name == "CPU SAMPLES") {
      uint64_t sum = 0;
      for (size_t n = 0; n < s.rows.size(); ++n) {
        sum += s.rows[n].count;
        const double expect = s.total == 0 ? 0 : 100.0 * s.rows[n].count / s.total;
        if (std::fabs(expect - s.rows[n].self) > 0.0051) {
          error(row_lines[n], Format("CPU SAMPLES self %.2f%% is not count/total = %.4f%%",
                                     s.rows[n].self, expect));
        }
      }
      if (sum > s.total) error(i + 1, "CPU SAMPLES rows count more samples than the total");
      CheckPercentages(s.rows, row_lines, name, [](const CostRow& r) { return r.count; });
    } else {
      CheckPercentages(s.rows, row_lines, name, [](const CostRow& r) { return r.self; });
    }
    if (name == "CPU SAMPLES") {
      p_.cpu_samples.push_back(std::move(s));
    } else if (name == "CPU TIME (ms)") {
      p_.cpu_times.push_back(std::move(s));
    } else {
      p_.monitor_times.push_back(std::move(s));
    }
  }

  // "\t<name>\t<hex>" (a second TAB when the name is shorter than 8): name, hex.
  bool FieldLine(const std::string& l, std::string& name, std::string& value, bool strict_tabs) {
    if (l.size() < 3 || l[0] != '\t') return false;
    const size_t tab = l.find('\t', 1);
    if (tab == std::string::npos || tab == 1) return false;
    name = l.substr(1, tab - 1);
    size_t v = tab + 1;
    while (v < l.size() && l[v] == '\t') ++v;
    value = l.substr(v);
    if (!IsHex(value)) return false;
    const size_t tabs = v - tab;
    if (strict_tabs && tabs != (name.size() < 8 ? 2u : 1u)) return false;
    return true;
  }

  void Heap(size_t i, size_t end) {
    static const std::regex begin(R"(HEAP DUMP BEGIN \(([0-9]+) objects, ([0-9]+) bytes\) (.*))");
    static const std::regex root(R"(ROOT ([0-9a-f]+) \(kind=<([^>]+)>(, (.*))?\))");
    static const std::regex obj(
        R"(OBJ ([0-9a-f]+) \(sz=([0-9]+), trace=([0-9]+), class=(.+)@([0-9a-f]+)\))");
    static const std::regex arr(
        R"(ARR ([0-9a-f]+) \(sz=([0-9]+), trace=([0-9]+), nelems=([0-9]+), elem type=(.+?)(@([0-9a-f]+))?\))");
    static const std::regex cls(R"(CLS ([0-9a-f]+) \(name=(.+), trace=([0-9]+)\))");
    static const std::regex element(R"(\t\[([0-9]+)\]\t\t([0-9a-f]+))");
    static const std::regex cp(R"(\tconstant pool entry ([0-9]+)\t([0-9a-f]+))");
    HeapDump d;
    d.line_no = i + 1;
    std::smatch m;
    if (!std::regex_match(line(i), m, begin)) {
      bad_line(i, "HEAP DUMP BEGIN line");
    } else {
      d.objects = ToU64(m[1]);
      d.bytes = ToU64(m[2]);
      CheckDate(i, m[3]);
    }
    enum { kNone, kRoot, kObj, kArr, kCls } current = kNone;
    int phase = 0;  // 0 roots, 1 instances and arrays, 2 classes
    auto order = [&](size_t k, int record_phase, const char* what) {
      if (record_phase < phase) {
        error(k + 1, std::string(what) + " after " +
                         (phase == 2 ? "CLS records" : "OBJ/ARR records") +
                         " (JDK 8 order: roots, instances and arrays, classes)");
      }
      phase = std::max(phase, record_phase);
    };
    for (size_t k = i + 1; k < end; ++k) {
      const std::string& l = line(k);
      if (!l.empty() && l[0] == '\t') {
        std::string name, value;
        if (current == kObj && FieldLine(l, name, value, true)) {
          d.objs.back().fields.emplace_back(name, value);
        } else if (current == kArr && std::regex_match(l, m, element)) {
          d.arrs.back().elements.emplace_back(ToU64(m[1]), m[2]);
        } else if (current == kCls && std::regex_match(l, m, cp)) {
          d.classes.back().constants.emplace_back(std::atoi(m[1].str().c_str()), m[2]);
        } else if (current == kCls && FieldLine(l, name, value, false)) {
          if (StartsWith(name, "static ")) {
            if (l.find("\t", 1) != 1 + name.size() || l.find("\t\t") != std::string::npos) {
              bad_line(k, "CLS static line");
            }
            d.classes.back().statics.emplace_back(name.substr(7), value);
          } else if (name == "super" || name == "loader" || name == "signers" || name == "domain") {
            if (l != "\t" + name + "\t\t" + value) bad_line(k, "CLS line");
            d.classes.back().attrs[name] = value;
          } else {
            bad_line(k, "CLS line");
          }
        } else {
          bad_line(k, "line in HEAP DUMP");
        }
        continue;
      }
      if (StartsWith(l, "ROOT ") && std::regex_match(l, m, root)) {
        order(k, 0, "ROOT");
        HeapRoot r{m[1], m[2], {}};
        if (m[3].matched) {
          const std::string attrs = m[4];
          size_t start = 0;
          while (start < attrs.size()) {
            size_t comma = attrs.find(", ", start);
            if (comma == std::string::npos) comma = attrs.size();
            const std::string kv = attrs.substr(start, comma - start);
            const size_t eq = kv.find('=');
            if (eq == std::string::npos) {
              bad_line(k, "ROOT attribute");
              break;
            }
            r.attrs[kv.substr(0, eq)] = kv.substr(eq + 1);
            start = comma + 2;
          }
        }
        static const std::set<std::string> kinds{"thread",        "thread block",   "Java stack",
                                                 "JNI local ref", "JNI global ref", "system class",
                                                 "busy monitor",  "unknown",        "native stack"};
        if (kinds.count(r.kind) == 0) bad_line(k, "ROOT kind");
        if (r.attrs.count("trace") != 0) {
          trace_ref(static_cast<unsigned>(ToU64(r.attrs["trace"])), k, "ROOT");
        }
        const std::string thread_key = r.kind == "thread" ? "id" : "thread";
        if (r.attrs.count(thread_key) != 0 && r.kind != "JNI global ref") {
          const auto t = static_cast<unsigned>(ToU64(r.attrs[thread_key]));
          if (t != kUnknownThread) thread_ref(t, k, "ROOT");
        }
        d.roots.push_back(std::move(r));
        current = kRoot;
      } else if (StartsWith(l, "OBJ ") && std::regex_match(l, m, obj)) {
        order(k, 1, "OBJ");
        HeapObj o;
        o.id = m[1];
        o.size = ToU64(m[2]);
        o.trace = static_cast<unsigned>(ToU64(m[3]));
        o.class_name = m[4];
        o.class_id = m[5];
        o.line_no = k + 1;
        trace_ref(o.trace, k, "OBJ");
        if (d.obj_index_.count(o.id) || d.arr_index_.count(o.id)) {
          error(k + 1, "object " + o.id + " dumped twice");
        }
        d.obj_index_[o.id] = d.objs.size();
        d.objs.push_back(std::move(o));
        current = kObj;
      } else if (StartsWith(l, "ARR ") && std::regex_match(l, m, arr)) {
        order(k, 1, "ARR");
        HeapArr a;
        a.id = m[1];
        a.size = ToU64(m[2]);
        a.trace = static_cast<unsigned>(ToU64(m[3]));
        a.nelems = ToU64(m[4]);
        a.elem_type = m[5];
        if (m[6].matched) a.class_id = m[7];
        a.line_no = k + 1;
        if (a.elem_type.size() < 3 || a.elem_type.compare(a.elem_type.size() - 2, 2, "[]") != 0) {
          error(k + 1, "ARR elem type \"" + a.elem_type + "\" is not an array class name");
        }
        trace_ref(a.trace, k, "ARR");
        if (d.obj_index_.count(a.id) || d.arr_index_.count(a.id)) {
          error(k + 1, "object " + a.id + " dumped twice");
        }
        d.arr_index_[a.id] = d.arrs.size();
        d.arrs.push_back(std::move(a));
        current = kArr;
      } else if (StartsWith(l, "CLS ") && std::regex_match(l, m, cls)) {
        order(k, 2, "CLS");
        HeapCls c;
        c.id = m[1];
        c.name = m[2];
        c.trace = static_cast<unsigned>(ToU64(m[3]));
        c.line_no = k + 1;
        trace_ref(c.trace, k, "CLS");
        if (d.cls_index_.count(c.id)) error(k + 1, "class " + c.id + " dumped twice");
        d.cls_index_[c.id] = d.classes.size();
        d.classes.push_back(std::move(c));
        current = kCls;
      } else {
        bad_line(k, "line in HEAP DUMP");
        current = kNone;
      }
    }
    for (const HeapArr& a : d.arrs) {
      for (const auto& [index, id] : a.elements) {
        if (index >= a.nelems) {
          error(a.line_no, "ARR " + a.id + " element [" + std::to_string(index) +
                               "] is beyond nelems=" + std::to_string(a.nelems));
        }
      }
    }
    p_.heap_dumps.push_back(std::move(d));
  }

  // " thread 1, thread 2" / " <unknown thread>" / "".
  bool ThreadList(const std::string& s, size_t k, std::vector<std::optional<unsigned>>& out) {
    if (s.empty()) return true;
    if (s[0] != ' ') return false;
    size_t start = 1;
    while (start <= s.size()) {
      size_t comma = s.find(", ", start);
      if (comma == std::string::npos) comma = s.size();
      const std::string item = s.substr(start, comma - start);
      if (item == "<unknown thread>") {
        out.emplace_back();
      } else if (StartsWith(item, "thread ") && IsNumber(item.substr(7))) {
        const auto t = static_cast<unsigned>(ToU64(item.substr(7)));
        thread_ref(t, k, "MONITOR DUMP");
        out.emplace_back(t);
      } else {
        return false;
      }
      start = comma + 2;
    }
    return true;
  }

  void Monitors(size_t i, size_t end) {
    static const std::regex thread(
        R"(    THREAD ([0-9]+), trace ([0-9]+), status: ((S\|)?(intr\|)?(native\|)?(ZO|NS|SL|MW|CW|R|UN)))");
    static const std::regex monitor(R"re(    (MONITOR (\S+)|RAW MONITOR "(.*)")( unowned)?)re");
    static const std::regex owner(R"(\towner: thread ([0-9]+), entry count: ([0-9]+))");
    static const std::regex deadlock(R"(    DEADLOCK among ([0-9]+) threads:)");
    static const std::regex edge(
        R"(\tthread ([0-9]+) \(trace ([0-9]+)\) waits to enter (.+), owned by thread ([0-9]+))");
    MonitorDump d;
    d.line_no = i + 1;
    if (line(i) != "MONITOR DUMP BEGIN") bad_line(i, "MONITOR DUMP BEGIN line");
    std::smatch m;
    size_t k = i + 1;
    while (k < end) {
      const std::string& l = line(k);
      if (std::regex_match(l, m, thread)) {
        MonitorDumpThread t{static_cast<unsigned>(ToU64(m[1])), static_cast<unsigned>(ToU64(m[2])),
                            m[3]};
        thread_ref(t.thread, k, "MONITOR DUMP THREAD");
        trace_ref(t.trace, k, "MONITOR DUMP THREAD");
        if (!d.monitors.empty() || !d.deadlocks.empty()) {
          error(k + 1, "MONITOR DUMP THREAD line after the monitors");
        }
        d.threads.push_back(t);
        ++k;
      } else if (std::regex_match(l, m, monitor)) {
        MonitorDumpMonitor mon;
        mon.raw = m[3].matched;
        mon.monitor = mon.raw ? m[3].str() : m[2].str();
        const bool unowned = m[4].matched;
        ++k;
        if (!unowned) {
          if (k < end && std::regex_match(line(k), m, owner)) {
            mon.owner = static_cast<unsigned>(ToU64(m[1]));
            mon.entry_count = static_cast<unsigned>(ToU64(m[2]));
            thread_ref(*mon.owner, k, "MONITOR DUMP owner");
            ++k;
          } else {
            error(k, "an owned MONITOR without an owner line");
          }
        }
        const std::string enter = "\twaiting to enter:";
        const std::string notify = "\twaiting to be notified:";
        if (k < end && StartsWith(line(k), enter) &&
            ThreadList(line(k).substr(enter.size()), k, mon.entering)) {
          ++k;
        } else {
          error(k + 1, "MONITOR without a \"waiting to enter:\" line");
        }
        if (k < end && StartsWith(line(k), notify) &&
            ThreadList(line(k).substr(notify.size()), k, mon.waiting)) {
          ++k;
        } else {
          error(k + 1, "MONITOR without a \"waiting to be notified:\" line");
        }
        d.monitors.push_back(std::move(mon));
      } else if (std::regex_match(l, m, deadlock)) {
        const size_t n = ToU64(m[1]);
        std::vector<DeadlockEdge> cycle;
        ++k;
        while (k < end && std::regex_match(line(k), m, edge)) {
          DeadlockEdge e{static_cast<unsigned>(ToU64(m[1])), static_cast<unsigned>(ToU64(m[2])),
                         static_cast<unsigned>(ToU64(m[4])), m[3]};
          thread_ref(e.thread, k, "DEADLOCK");
          thread_ref(e.owner, k, "DEADLOCK");
          trace_ref(e.trace, k, "DEADLOCK");
          cycle.push_back(e);
          ++k;
        }
        if (cycle.size() != n || n < 2) {
          error(k, "DEADLOCK among " + std::to_string(n) + " threads lists " +
                       std::to_string(cycle.size()));
        }
        for (size_t e = 0; e < cycle.size(); ++e) {
          if (cycle[e].owner != cycle[(e + 1) % cycle.size()].thread) {
            error(k, "DEADLOCK statement is not a cycle: thread " +
                         std::to_string(cycle[e].thread) + " waits for thread " +
                         std::to_string(cycle[e].owner));
          }
        }
        d.deadlocks.push_back(std::move(cycle));
      } else {
        bad_line(k, "line in MONITOR DUMP");
        ++k;
      }
    }
    p_.monitor_dumps.push_back(std::move(d));
  }

  // Each undefined trace and each thread never started is reported once, at its first use.
  void CheckReferences() {
    std::map<unsigned, std::pair<const Ref*, size_t>> undefined;
    for (const Ref& r : trace_refs_) {
      if (p_.traces.count(r.serial) != 0) continue;
      auto& u = undefined[r.serial];
      if (u.first == nullptr) u.first = &r;
      ++u.second;
    }
    for (const auto& [serial, u] : undefined) {
      error(u.first->line, u.first->what + " refers to TRACE " + std::to_string(serial) +
                               ", which is not defined (" + std::to_string(u.second) +
                               " references)");
    }
    std::set<std::pair<unsigned, std::string>> reported;
    for (const Ref& r : thread_refs_) {
      auto it = started_.find(r.serial);
      if (it == started_.end()) {
        if (reported.insert({r.serial, r.what}).second) {
          error(r.line, r.what + " refers to thread " + std::to_string(r.serial) +
                            ", which has no THREAD START");
        }
      } else if (it->second > r.line) {
        error(r.line, r.what + " refers to thread " + std::to_string(r.serial) +
                          " before its THREAD START (line " + std::to_string(it->second) + ")");
      }
    }
  }

  std::vector<std::string> lines_;
  Profile p_;
  std::map<unsigned, size_t> started_;  // thread id -> line of THREAD START
  std::set<unsigned> ended_;
  std::vector<Ref> trace_refs_, thread_refs_;
};

Profile ParseProfile(const std::string& text) {
  return ProfileParser(text).Parse();
}

std::string Profile::error_text(size_t max) const {
  std::string out;
  for (size_t i = 0; i < errors.size() && i < max; ++i) out += "  " + errors[i] + "\n";
  if (errors.size() > max) out += "  ... and " + std::to_string(errors.size() - max) + " more\n";
  return out;
}

std::optional<unsigned> Profile::thread_serial(const std::string& name) const {
  for (const ThreadStart& t : thread_starts) {
    if (t.name == name) return t.id;
  }
  return std::nullopt;
}

const Trace* Profile::trace(unsigned serial) const {
  auto it = traces.find(serial);
  return it == traces.end() ? nullptr : &it->second;
}

std::string Profile::top_method(unsigned serial) const {
  const Trace* t = trace(serial);
  return t == nullptr || t->frames.empty() ? "" : t->frames.front().method;
}

size_t Profile::count(const std::string& section) const {
  size_t n = 0;
  for (const SectionMark& s : sections) n += s.name == section ? 1 : 0;
  return n;
}

const HeapObj* HeapDump::obj(const std::string& id) const {
  auto it = obj_index_.find(id);
  return it == obj_index_.end() ? nullptr : &objs[it->second];
}
const HeapArr* HeapDump::arr(const std::string& id) const {
  auto it = arr_index_.find(id);
  return it == arr_index_.end() ? nullptr : &arrs[it->second];
}
const HeapCls* HeapDump::cls(const std::string& id) const {
  auto it = cls_index_.find(id);
  return it == cls_index_.end() ? nullptr : &classes[it->second];
}
const HeapCls* HeapDump::cls_named(const std::string& name) const {
  for (const HeapCls& c : classes) {
    if (c.name == name) return &c;
  }
  return nullptr;
}
std::vector<const HeapObj*> HeapDump::objs_of_class(const std::string& name) const {
  std::vector<const HeapObj*> out;
  for (const HeapObj& o : objs) {
    if (o.class_name == name) out.push_back(&o);
  }
  return out;
}

std::vector<std::string> HeapDump::dangling_references() const {
  std::vector<std::string> out;
  // Objects the dump lists only as roots (e.g. the mirrors of primitive classes) count as known.
  std::set<std::string> root_ids;
  for (const HeapRoot& r : roots) root_ids.insert(r.id);
  auto known = [this, &root_ids](const std::string& id) {
    return obj_index_.count(id) || arr_index_.count(id) || cls_index_.count(id) ||
           root_ids.count(id);
  };
  for (const HeapObj& o : objs) {
    if (!cls_index_.count(o.class_id)) {
      out.push_back("OBJ " + o.id + " (line " + std::to_string(o.line_no) + "): class " +
                    o.class_id + " has no CLS");
    }
    for (const auto& [name, id] : o.fields) {
      if (!known(id)) out.push_back("OBJ " + o.id + " field " + name + " -> " + id);
    }
  }
  for (const HeapArr& a : arrs) {
    for (const auto& [index, id] : a.elements) {
      if (!known(id)) out.push_back("ARR " + a.id + " [" + std::to_string(index) + "] -> " + id);
    }
  }
  for (const HeapCls& c : classes) {
    for (const auto& [name, id] : c.attrs) {
      if (!known(id)) out.push_back("CLS " + c.name + " " + name + " -> " + id);
    }
    for (const auto& [name, id] : c.statics) {
      if (!known(id)) out.push_back("CLS " + c.name + " static " + name + " -> " + id);
    }
  }
  return out;
}

}  // namespace hproftest
