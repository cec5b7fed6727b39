// SPDX-License-Identifier: Apache-2.0
// MONITOR DUMP text as a model, and deadlocks as cycles of its wait-for graph.
#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include "profiles.h"

namespace profiles {
namespace {

std::vector<uint32_t> thread_list(std::string_view s) {
  std::vector<uint32_t> out;
  size_t at = 0;
  while ((at = s.find("thread ", at)) != std::string_view::npos) {
    at += 7;
    uint32_t v = 0;
    auto [p, ec] = std::from_chars(s.data() + at, s.data() + s.size(), v);
    if (ec == std::errc()) out.push_back(v);
    at = static_cast<size_t>(p - s.data());
  }
  return out;
}

uint32_t number_after(std::string_view s, std::string_view key) {
  const size_t at = s.find(key);
  if (at == std::string_view::npos) return 0;
  uint32_t v = 0;
  std::from_chars(s.data() + at + key.size(), s.data() + s.size(), v);
  return v;
}

}  // namespace

MonitorDump parse_monitor_dump(std::string_view text) {
  MonitorDump d;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (line.starts_with("    THREAD ")) {
      MonitorDump::Thread t;
      t.serial = number_after(line, "THREAD ");
      t.trace = number_after(line, "trace ");
      const size_t st = line.find("status: ");
      if (st != std::string_view::npos) t.status = std::string(line.substr(st + 8));
      d.threads.push_back(std::move(t));
    } else if (line.starts_with("    MONITOR ")) {
      MonitorDump::Monitor m;
      std::string_view sig = line.substr(12);
      if (sig.ends_with(" unowned")) sig.remove_suffix(8);
      m.signature = std::string(sig);
      d.monitors.push_back(std::move(m));
    } else if (!d.monitors.empty() && line.starts_with("\towner: thread ")) {
      d.monitors.back().owner = number_after(line, "owner: thread ");
      d.monitors.back().entry_count = number_after(line, "entry count: ");
    } else if (!d.monitors.empty() && line.starts_with("\twaiting to enter:")) {
      d.monitors.back().waiting_to_enter = thread_list(line.substr(18));
    } else if (!d.monitors.empty() && line.starts_with("\twaiting to be notified:")) {
      d.monitors.back().waiting_to_be_notified = thread_list(line.substr(24));
    } else if (line.starts_with("    DEADLOCK")) {
      break;  // HPROF's own finding; the cycles are computed from the graph instead
    }
  }
  return d;
}

std::vector<std::vector<std::pair<uint32_t, size_t>>> deadlock_cycles(const MonitorDump& dump) {
  // Each blocked thread waits for one monitor; follow waiter -> monitor -> owner.
  std::map<uint32_t, size_t> waits_for;
  for (size_t i = 0; i < dump.monitors.size(); ++i)
    if (dump.monitors[i].owner)
      for (uint32_t t : dump.monitors[i].waiting_to_enter) waits_for.emplace(t, i);
  std::vector<std::vector<std::pair<uint32_t, size_t>>> cycles;
  std::set<uint32_t> done;
  for (const auto& [start, unused] : waits_for) {
    if (done.count(start)) continue;
    std::vector<std::pair<uint32_t, size_t>> path;
    std::map<uint32_t, size_t> index;
    uint32_t t = start;
    while (waits_for.count(t) && !index.count(t) && !done.count(t)) {
      index[t] = path.size();
      const size_t m = waits_for[t];
      path.emplace_back(t, m);
      t = *dump.monitors[m].owner;
    }
    if (index.count(t)) {  // came back to a thread of this walk: a cycle
      std::vector<std::pair<uint32_t, size_t>> cycle(path.begin() + static_cast<long>(index[t]),
                                                     path.end());
      std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
      cycles.push_back(std::move(cycle));
    }
    for (const auto& [thread, m] : path) done.insert(thread);
  }
  return cycles;
}

}  // namespace profiles
