// SPDX-License-Identifier: Apache-2.0
// PERIOD blocks: "PERIOD BEGIN: seq=N start=MS end=MS", then per section a header line with its
// row count and the rows, then "PERIOD END: seq=N" (docs/hprof-text-format.md).
#include "period_delta.h"

#include <charconv>

namespace profiles {
namespace {

constexpr size_t kMaxRows = size_t{1} << 24;

std::string_view next_line(std::string_view& s) {
  const size_t nl = s.find('\n');
  std::string_view line = s.substr(0, nl);
  s.remove_prefix(nl == std::string_view::npos ? s.size() : nl + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

std::string_view word(std::string_view& s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  const size_t end = s.find(' ');
  std::string_view w = s.substr(0, end);
  s.remove_prefix(end == std::string_view::npos ? s.size() : end);
  return w;
}

template <typename T>
bool number(std::string_view s, T& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size();
}

// "key=<number>" words after a header's prefix, in this order.
template <typename... T>
bool keyed(std::string_view rest, std::initializer_list<std::string_view> keys, T&... out) {
  auto one = [&](std::string_view key, auto& value) {
    std::string_view w = word(rest);
    return w.size() > key.size() + 1 && w.starts_with(key) && w[key.size()] == '=' &&
           number(w.substr(key.size() + 1), value);
  };
  auto k = keys.begin();
  return (one(*k++, out) && ...) && word(rest).empty();
}

std::string top_method(const std::map<uint32_t, Trace>* traces, uint32_t serial) {
  if (traces == nullptr) return {};
  auto it = traces->find(serial);
  return it == traces->end() || it->second.frames.empty() ? std::string()
                                                          : it->second.frames.front().method;
}

double share(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

}  // namespace

bool parse_period(std::string_view block, PeriodDelta& out, std::string& why,
                  const std::map<uint32_t, Trace>* traces) {
  out = {};
  std::string_view rest = block;
  std::string_view line = next_line(rest);
  if (!line.starts_with("PERIOD BEGIN: ") ||
      !keyed(line.substr(14), {"seq", "start", "end"}, out.seq, out.start_ms, out.end_ms)) {
    why = "bad PERIOD BEGIN line";
    return false;
  }
  for (;;) {
    if (rest.empty()) {
      why = "PERIOD block without its END line";
      return false;
    }
    line = next_line(rest);
    if (line.starts_with("PERIOD END: ")) {
      uint64_t seq = 0;
      if (!keyed(line.substr(12), {"seq"}, seq) || seq != out.seq) {
        why = "PERIOD END does not match its BEGIN";
        return false;
      }
      return true;
    }
    size_t rows = 0;
    uint64_t total = 0;
    auto rows_of = [&](size_t n, auto&& row) {
      if (n > kMaxRows) return false;
      for (size_t i = 0; i < n; ++i) {
        if (rest.empty()) return false;
        std::string_view r = next_line(rest);
        if (!row(r)) return false;
      }
      return true;
    };
    bool ok = false;
    if (line.starts_with("CPU SAMPLES: ") &&
        keyed(line.substr(13), {"total", "rows"}, total, rows)) {
      CostSection s;
      s.total = total;
      ok = rows_of(rows, [&](std::string_view r) {
        CostRow c;
        if (!number(word(r), c.trace) || !number(word(r), c.count) || !word(r).empty())
          return false;
        c.self_percent = share(c.count, total);
        c.name = top_method(traces, c.trace);
        s.rows.push_back(std::move(c));
        return true;
      });
      out.cpu_samples = std::move(s);
    } else if ((line.starts_with("CPU TIME: ") &&
                keyed(line.substr(10), {"total_ns", "rows"}, total, rows)) ||
               (line.starts_with("MONITOR TIME: ") &&
                keyed(line.substr(14), {"total_ns", "rows"}, total, rows))) {
      const bool monitor = line[0] == 'M';
      CostSection s;
      s.total = total / 1000000;  // ms, as the cumulative sections count
      ok = rows_of(rows, [&](std::string_view r) {
        CostRow c;
        if (!number(word(r), c.trace) || !number(word(r), c.count) || !number(word(r), c.time_ns))
          return false;
        if (monitor) {
          while (!r.empty() && r.front() == ' ') r.remove_prefix(1);
          if (r.empty()) return false;
          c.name = std::string(r);
        } else {
          if (!word(r).empty()) return false;
          c.name = top_method(traces, c.trace);
        }
        c.self_percent = share(c.time_ns, total);
        s.rows.push_back(std::move(c));
        return true;
      });
      (monitor ? out.monitor_time : out.cpu_time) = std::move(s);
    } else if (line.starts_with("SITES: ") && keyed(line.substr(7), {"rows"}, rows)) {
      std::vector<Site> sites;
      ok = rows_of(rows, [&](std::string_view r) {
        Site s;
        if (!number(word(r), s.trace) || !number(word(r), s.alloc_bytes) ||
            !number(word(r), s.alloc_objects) || !number(word(r), s.live_bytes) ||
            !number(word(r), s.live_objects))
          return false;
        while (!r.empty() && r.front() == ' ') r.remove_prefix(1);
        if (r.empty()) return false;
        s.class_name = std::string(r);
        sites.push_back(std::move(s));
        return true;
      });
      out.sites = std::move(sites);
    }
    if (!ok) {
      why = "bad PERIOD section or row near \"" + std::string(line.substr(0, 40)) + "\"";
      return false;
    }
  }
}

JavaProfile period_profile(const JavaProfile& stream, const PeriodDelta& d) {
  JavaProfile p;
  p.source = stream.source;
  p.binary = stream.binary;
  p.threads = stream.threads;
  p.agent_settings = stream.agent_settings;
  p.sites_sample_bytes = stream.sites_sample_bytes;
  auto keep = [&](uint32_t serial) {
    if (const Trace* t = stream.trace(serial)) p.traces.emplace(serial, *t);
  };
  auto take = [&](const std::optional<CostSection>& from, std::optional<CostSection>& to,
                  const char* name) {
    if (!from) return;
    to = from;
    for (const CostRow& r : from->rows) keep(r.trace);
    p.count_section(name);
  };
  take(d.cpu_samples, p.cpu_samples, "CPU SAMPLES");
  take(d.cpu_time, p.cpu_time, "CPU TIME");
  take(d.monitor_time, p.monitor_time, "MONITOR TIME");
  if (d.sites) {
    p.sites = d.sites;
    for (const Site& s : *d.sites) keep(s.trace);
    p.count_section("SITES");
  }
  return p;
}

void take_period(std::string_view block, JavaProfile& p, const PeriodHandler& handler,
                 const std::string& source) {
  PeriodDelta d;
  std::string why;
  if (!parse_period(block, d, why, &p.traces)) throw ProfileError(source + ": " + why);
  ++p.periods;
  p.last_period_end_ms = d.end_ms;
  if (handler) handler(d);
}

}  // namespace profiles
