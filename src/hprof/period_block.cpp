// SPDX-License-Identifier: Apache-2.0
// A PERIOD block from two snapshots of the counters: a pure function, apart from the writer
// thread that takes the snapshots (period_report.cpp).
#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "period_report.h"

namespace hprof::agent {
namespace {

// Growth of a counter; one that went down was reset and counts from zero.
uint64_t growth(uint64_t before, uint64_t now) {
  return now >= before ? now - before : now;
}

void append(std::string& out, const char* format, auto... args) {
  char line[256];
  std::snprintf(line, sizeof line, format, args...);
  out += line;
}

}  // namespace

std::string period_block(uint64_t seq, int64_t start_ms, int64_t end_ms,
                         const PeriodSections& sections, const PeriodSnapshot& before,
                         const PeriodSnapshot& now,
                         const std::function<std::string(const SiteKey&)>& site_name) {
  std::string out;
  append(out, "PERIOD BEGIN: seq=%" PRIu64 " start=%" PRId64 " end=%" PRId64 "\n", seq, start_ms,
         end_ms);
  if (sections.cpu_samples || sections.cpu_times) {
    // Largest first, then by trace, so that equal runs give equal blocks.
    std::vector<Cost> rows;
    uint64_t total = 0, total_ns = 0;
    for (const auto& [trace, cost] : now.cpu) {
      const auto it = before.cpu.find(trace);
      const Cost prev = it == before.cpu.end() ? Cost{} : it->second;
      Cost d{trace, growth(prev.count, cost.count), growth(prev.time_ns, cost.time_ns)};
      if (d.count == 0 && d.time_ns == 0) continue;
      total += d.count;
      total_ns += d.time_ns;
      rows.push_back(d);
    }
    std::sort(rows.begin(), rows.end(), [&](const Cost& a, const Cost& b) {
      const uint64_t ka = sections.cpu_times ? a.time_ns : a.count;
      const uint64_t kb = sections.cpu_times ? b.time_ns : b.count;
      return ka != kb ? ka > kb : a.trace < b.trace;
    });
    if (sections.cpu_samples) {
      append(out, "CPU SAMPLES: total=%" PRIu64 " rows=%zu\n", total, rows.size());
      for (const Cost& c : rows) append(out, "%u %" PRIu64 "\n", c.trace, c.count);
    } else {
      append(out, "CPU TIME: total_ns=%" PRIu64 " rows=%zu\n", total_ns, rows.size());
      for (const Cost& c : rows)
        append(out, "%u %" PRIu64 " %" PRIu64 "\n", c.trace, c.count, c.time_ns);
    }
  }
  if (sections.sites) {
    std::string rows;
    size_t count = 0;
    for (const auto& [index, site] : now.sites) {
      const SiteCounts& c = site.counts;
      const auto it = before.sites.find(index);
      const SiteCounts prev = it == before.sites.end() ? SiteCounts{} : it->second.counts;
      const uint64_t bytes = growth(prev.alloc_bytes, c.alloc_bytes);
      const uint64_t objects = growth(prev.alloc_objects, c.alloc_objects);
      if (bytes == 0 && objects == 0 && c.live_bytes == prev.live_bytes &&
          c.live_objects == prev.live_objects)
        continue;
      ++count;
      append(rows, "%u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " ", site.key.trace, bytes,
             objects, c.live_bytes, c.live_objects);
      rows += site_name(site.key);
      rows += '\n';
    }
    append(out, "SITES: rows=%zu\n", count);
    out += rows;
  }
  if (sections.monitors) {
    std::string rows;
    size_t count = 0;
    uint64_t total_ns = 0;
    for (const auto& [key, cost] : now.monitors) {
      const auto it = before.monitors.find(key);
      const auto prev = it == before.monitors.end() ? std::pair<uint64_t, uint64_t>{} : it->second;
      const uint64_t n = growth(prev.first, cost.first);
      const uint64_t ns = growth(prev.second, cost.second);
      if (n == 0 && ns == 0) continue;
      ++count;
      total_ns += ns;
      append(rows, "%u %" PRIu64 " %" PRIu64 " ", key.first, n, ns);
      rows += key.second;
      rows += '\n';
    }
    append(out, "MONITOR TIME: total_ns=%" PRIu64 " rows=%zu\n", total_ns, count);
    out += rows;
  }
  append(out, "PERIOD END: seq=%" PRIu64 "\n", seq);
  return out;
}

}  // namespace hprof::agent
