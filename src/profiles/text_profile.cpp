// SPDX-License-Identifier: Apache-2.0
#include "text_profile.h"

#include <charconv>
#include <map>

namespace profiles {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.starts_with(prefix);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// The next whitespace-separated token of `s`, removed from it.
std::string_view token(std::string_view& s) {
  s = trim(s);
  const size_t end = s.find_first_of(" \t");
  std::string_view t = s.substr(0, end);
  s.remove_prefix(end == std::string_view::npos ? s.size() : end);
  return t;
}

template <typename T>
bool number(std::string_view s, T& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

bool percent(std::string_view s, double& out) {
  if (!s.ends_with('%')) return false;
  s.remove_suffix(1);
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

// The number after `key` in `line` (e.g. "id = " in THREAD START), if any.
bool number_after(std::string_view line, std::string_view key, uint32_t& out) {
  const size_t at = line.find(key);
  if (at == std::string_view::npos) return false;
  std::string_view rest = line.substr(at + key.size());
  const size_t end = rest.find_first_not_of("0123456789");
  return number(rest.substr(0, end == std::string_view::npos ? rest.size() : end), out);
}

// The CPU-time sampler's counters in a CPU SAMPLES BEGIN line ("(total = 9, signals = 10, taken =
// 9, recovered = 3, unattributable = 1) <date>"), into `out`; nothing for JDK 8's plain line.
void read_sampler_counts(std::string_view line, std::map<std::string, uint64_t>& out) {
  for (const char* key : {"signals", "taken", "recovered", "unattributable", "lost"}) {
    uint32_t value = 0;
    if (number_after(line, ", " + std::string(key) + " = ", value)) out[key] = value;
  }
}

// The quoted value after `key` ("name=\"") up to `end` ("\", group=\""), or to the last quote.
std::string quoted(std::string_view line, std::string_view key, std::string_view end) {
  const size_t at = line.find(key);
  if (at == std::string_view::npos) return {};
  std::string_view rest = line.substr(at + key.size());
  size_t stop = end.empty() ? std::string_view::npos : rest.rfind(end);
  if (stop == std::string_view::npos) stop = rest.rfind('"');
  return std::string(rest.substr(0, stop == std::string_view::npos ? rest.size() : stop));
}

}  // namespace

TextProfileParser::TextProfileParser(JavaProfile& profile, std::string source, size_t max_line,
                                     const PeriodHandler& on_period)
    : profile_(profile), source_(std::move(source)), max_line_(max_line), on_period_(on_period) {}

void TextProfileParser::fail(const std::string& what) const {
  throw ProfileError(source_ + ":" + std::to_string(line_number_) + ": " + what);
}

void TextProfileParser::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    const size_t nl = bytes.find('\n');
    if (nl == std::string_view::npos) {
      if (partial_.size() + bytes.size() > max_line_)
        fail("line longer than " + std::to_string(max_line_) + " bytes");
      partial_.append(bytes);
      return;
    }
    ++line_number_;
    if (partial_.empty()) {
      if (nl > max_line_) fail("line longer than " + std::to_string(max_line_) + " bytes");
      line(bytes.substr(0, nl));
    } else {
      if (partial_.size() + nl > max_line_)
        fail("line longer than " + std::to_string(max_line_) + " bytes");
      partial_.append(bytes.substr(0, nl));
      std::string whole;
      whole.swap(partial_);
      line(whole);
    }
    bytes.remove_prefix(nl + 1);
  }
}

void TextProfileParser::finish() {
  if (!partial_.empty()) {
    ++line_number_;
    std::string last;
    last.swap(partial_);
    line(last);
  }
  if (section_ == Section::kTrace) end_trace();
  if (section_ != Section::kNone && section_ != Section::kPrelude)
    fail("the profile ends inside a section (the last complete sections are kept)");
}

void TextProfileParser::line(std::string_view l) {
  if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  switch (section_) {
    case Section::kPrelude:
      if (l == "--------") section_ = Section::kNone;
      return;
    case Section::kTrace:
      if (starts_with(l, "\t")) return frame(l.substr(1));
      end_trace();
      return top_level(l);
    case Section::kHeapDump:
      if (starts_with(l, "HEAP DUMP END")) {
        ++profile_.heap_dumps;
        profile_.count_section("HEAP DUMP");
        section_ = Section::kNone;
      }
      return;
    case Section::kCpuSamples:
    case Section::kCpuTime:
    case Section::kMonitorTime: {
      const bool end = section_ == Section::kCpuSamples ? starts_with(l, "CPU SAMPLES END")
                       : section_ == Section::kCpuTime  ? starts_with(l, "CPU TIME (ms) END")
                                                        : starts_with(l, "MONITOR TIME END");
      if (!end) return cost_row(l);
      auto& slot = section_ == Section::kCpuSamples ? profile_.cpu_samples
                   : section_ == Section::kCpuTime  ? profile_.cpu_time
                                                    : profile_.monitor_time;
      slot = std::move(cost_);
      cost_ = {};
      profile_.count_section(section_ == Section::kCpuSamples ? "CPU SAMPLES"
                             : section_ == Section::kCpuTime  ? "CPU TIME"
                                                              : "MONITOR TIME");
      section_ = Section::kNone;
      return;
    }
    case Section::kSites:
      if (!starts_with(l, "SITES END")) return site_row(l);
      profile_.sites = std::move(sites_);
      profile_.sites_sample_bytes = sites_sample_bytes_;
      sites_.clear();
      profile_.count_section("SITES");
      section_ = Section::kNone;
      return;
    case Section::kMonitorDump:
      monitor_dump_.append(l).push_back('\n');
      if (starts_with(l, "MONITOR DUMP END")) {
        profile_.monitor_dump.swap(monitor_dump_);
        monitor_dump_.clear();
        profile_.count_section("MONITOR DUMP");
        section_ = Section::kNone;
      } else if (monitor_dump_.size() > (size_t{64} << 20)) {
        fail("MONITOR DUMP section larger than 64 MiB");
      }
      return;
    case Section::kPeriod:
      period_.append(l).push_back('\n');
      if (starts_with(l, "PERIOD END:")) {
        take_period(period_, profile_, on_period_, source_);
        period_.clear();
        section_ = Section::kNone;
      } else if (period_.size() > (size_t{256} << 20)) {
        fail("PERIOD block larger than 256 MiB");
      }
      return;
    case Section::kNone:
      return top_level(l);
  }
}

void TextProfileParser::top_level(std::string_view l) {
  if (starts_with(l, "TRACE ")) {
    trace_ = {};
    std::string_view rest = l.substr(6);
    const size_t colon = rest.find(':');
    if (colon == std::string_view::npos || !number(rest.substr(0, colon), trace_.serial))
      fail("bad TRACE header");
    number_after(rest, "(thread=", trace_.thread);
    section_ = Section::kTrace;
  } else if (starts_with(l, "THREAD START")) {
    ThreadInfo t;
    if (!number_after(l, "id = ", t.serial)) fail("THREAD START without an id");
    t.name = quoted(l, "name=\"", "\", group=\"");
    t.group = quoted(l, "group=\"", "\")");
    t.start_read_ms = wall_clock_ms();
    profile_.threads[t.serial] = std::move(t);
  } else if (starts_with(l, "DROPPED: ")) {
    // "DROPPED: <events> events (<bytes> bytes) ...": the agent's running totals under net=.
    std::string_view rest = l.substr(9);
    uint64_t events = 0, bytes = 0;
    std::string_view e = token(rest);
    token(rest);  // "events"
    std::string_view b = token(rest);
    if (b.starts_with('(')) b.remove_prefix(1);
    if (!number(e, events) || !number(b, bytes)) fail("bad DROPPED line");
    profile_.dropped_events = events;
    profile_.dropped_bytes = bytes;
  } else if (starts_with(l, "SETTINGS: ")) {
    if (!parse_agent_settings(l.substr(10), profile_)) fail("bad SETTINGS line");
  } else if (starts_with(l, "IDENTITY: ")) {
    if (!parse_agent_identity(l.substr(10), profile_)) fail("bad IDENTITY line");
  } else if (starts_with(l, "THREAD END")) {
    uint32_t serial = 0;
    if (!number_after(l, "id = ", serial)) fail("THREAD END without an id");
    auto& t = profile_.threads[serial];
    t.serial = serial;
    t.ended = true;
    t.end_read_ms = wall_clock_ms();
  } else if (starts_with(l, "CPU SAMPLES BEGIN") || starts_with(l, "CPU TIME (ms) BEGIN") ||
             starts_with(l, "MONITOR TIME BEGIN")) {
    section_ = l[0] == 'M'   ? Section::kMonitorTime
               : l[4] == 'S' ? Section::kCpuSamples
                             : Section::kCpuTime;
    cost_ = {};
    uint64_t total = 0;
    const size_t at = l.find("(total = ");
    if (at != std::string_view::npos) {
      std::string_view rest = l.substr(at + 9);
      const size_t end = rest.find_first_not_of("0123456789");
      number(rest.substr(0, end == std::string_view::npos ? rest.size() : end), total);
    }
    cost_.total = total;
    if (section_ == Section::kCpuSamples) read_sampler_counts(l, profile_.cpu_sampler);
  } else if (starts_with(l, "SITES BEGIN")) {
    sites_.clear();
    // heap=sites,sample=: "(ordered by ..., estimates from allocations sampled every N bytes)".
    sites_sample_bytes_ = 0;
    constexpr std::string_view kSampled = "sampled every ";
    if (const size_t at = l.find(kSampled); at != std::string_view::npos) {
      std::string_view rest = l.substr(at + kSampled.size());
      number(rest.substr(0, rest.find(' ')), sites_sample_bytes_);
    }
    section_ = Section::kSites;
  } else if (starts_with(l, "MONITOR DUMP BEGIN")) {
    monitor_dump_.assign(l).push_back('\n');
    section_ = Section::kMonitorDump;
  } else if (starts_with(l, "PERIOD BEGIN:")) {
    period_.assign(l).push_back('\n');
    section_ = Section::kPeriod;
  } else if (starts_with(l, "HEAP DUMP BEGIN")) {
    section_ = Section::kHeapDump;
  }
  // Anything else (the header, WAIT/WAITED events, blank lines) carries nothing modelled here.
}

void TextProfileParser::cost_row(std::string_view l) {
  std::string_view rest = l;
  const std::string_view rank = token(rest);
  if (rank.empty() || rank == "rank") return;  // blank or column header
  CostRow row;
  double accum = 0;
  uint32_t rank_number = 0;
  if (!number(rank, rank_number) || !percent(token(rest), row.self_percent) ||
      !percent(token(rest), accum) || !number(token(rest), row.count) ||
      !number(token(rest), row.trace))
    fail("bad row: expected rank, self %, accum %, count, trace, name");
  std::string_view name = trim(rest);
  if (name.ends_with(" (Java)")) name.remove_suffix(7);
  row.name = std::string(name);
  if (cost_.rows.size() >= (size_t{1} << 24)) fail("more than 16M rows in one section");
  cost_.rows.push_back(std::move(row));
}

void TextProfileParser::site_row(std::string_view l) {
  std::string_view rest = l;
  const std::string_view rank = token(rest);
  uint32_t rank_number = 0;
  if (rank.empty() || !number(rank, rank_number)) return;  // the two header lines
  Site s;
  double self = 0, accum = 0;
  if (!percent(token(rest), self) || !percent(token(rest), accum) ||
      !number(token(rest), s.live_bytes) || !number(token(rest), s.live_objects) ||
      !number(token(rest), s.alloc_bytes) || !number(token(rest), s.alloc_objects) ||
      !number(token(rest), s.trace))
    fail("bad SITES row: expected rank, self, accum, live bytes/objs, alloc'ed bytes/objs, trace");
  s.class_name = std::string(trim(rest));
  if (sites_.size() >= (size_t{1} << 24)) fail("more than 16M sites in one section");
  sites_.push_back(std::move(s));
}

void TextProfileParser::frame(std::string_view l) {
  if (l == "<empty>") return;
  Frame f;
  const size_t open = l.rfind('(');
  if (open == std::string_view::npos || !l.ends_with(')')) {
    f.method = std::string(l);
  } else {
    f.method = std::string(l.substr(0, open));
    std::string_view where = l.substr(open + 1, l.size() - open - 2);
    const size_t colon = where.rfind(':');
    std::string_view file = where.substr(0, colon);
    if (file != "<Unknown Source>") f.source = std::string(file);
    if (colon != std::string_view::npos) {
      std::string_view line = where.substr(colon + 1);
      int32_t n = 0;
      if (number(line, n))
        f.line = n;
      else if (line == "Compiled method")
        f.line = -2;
      else if (line == "Native method")
        f.line = -3;
      else
        f.line = -1;
    }
  }
  if (trace_.frames.size() >= 4096) fail("TRACE deeper than 4096 frames");
  trace_.frames.push_back(std::move(f));
}

void TextProfileParser::end_trace() {
  if (profile_.traces.size() >= (size_t{1} << 22) && !profile_.traces.count(trace_.serial))
    fail("more than 4M traces");
  profile_.traces[trace_.serial] = std::move(trace_);
  trace_ = {};
  section_ = Section::kNone;
}

bool parse_agent_settings(std::string_view text, JavaProfile& p) {
  std::map<std::string, std::string> settings;
  while (!text.empty()) {
    const std::string_view word = token(text);
    if (word.empty()) break;
    const size_t eq = word.find('=');
    if (eq == 0 || eq == std::string_view::npos || word.size() > 1024 || settings.size() >= 64)
      return false;
    settings[std::string(word.substr(0, eq))] = std::string(word.substr(eq + 1));
  }
  p.agent_settings = std::move(settings);
  ++p.settings_reports;
  return true;
}

}  // namespace profiles
