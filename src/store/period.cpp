// SPDX-License-Identifier: Apache-2.0
// Periods from profiles, and merged stacks back into a profile for the exports.
#include <numeric>

#include "store.h"

namespace store {

Period period_from_profile(const JvmIdentity& jvm, int64_t start_ms, int64_t end_ms,
                           const profiles::JavaProfile& delta) {
  Period p;
  p.jvm = jvm;
  p.start_ms = start_ms;
  p.end_ms = end_ms;
  for (profiles::Measure m : profiles::available_measures(delta)) {
    auto s = profiles::stacks(delta, m);
    if (!s.empty()) p.stacks[m] = std::move(s);
  }
  return p;
}

profiles::JavaProfile profile_from_stacks(profiles::Measure m,
                                          const std::vector<profiles::Stack>& stacks,
                                          const std::string& source) {
  using profiles::Measure;
  profiles::JavaProfile p;
  p.source = source;
  // Allocation and monitor stacks end in the class, not a frame of the trace.
  const bool leaf_is_class = m == Measure::kAllocBytes || m == Measure::kAllocObjects ||
                             m == Measure::kLiveBytes || m == Measure::kLiveObjects ||
                             m == Measure::kMonitorTimeMs;
  const uint64_t total = std::accumulate(stacks.begin(), stacks.end(), uint64_t{0},
                                         [](uint64_t t, const auto& s) { return t + s.weight; });
  profiles::CostSection section;
  section.total = total;
  std::vector<profiles::Site> sites;
  uint32_t serial = 0;
  for (const profiles::Stack& s : stacks) {
    if (s.frames.empty() || s.weight == 0) continue;
    profiles::Trace t;
    t.serial = ++serial;
    const size_t trace_frames = leaf_is_class ? s.frames.size() - 1 : s.frames.size();
    for (size_t i = trace_frames; i-- > 0;) t.frames.push_back({s.frames[i], "", -1});
    p.traces[t.serial] = std::move(t);
    const std::string& leaf = s.frames.back();  // the method (CPU) or the class
    switch (m) {
      case Measure::kCpuSamples:
      case Measure::kCpuCalls:
        section.rows.push_back({serial, s.weight,
                                100.0 * static_cast<double>(s.weight) / static_cast<double>(total),
                                leaf});
        break;
      case Measure::kCpuTimeMs:
      case Measure::kMonitorTimeMs:
        // stacks() weighs these by the row's share of the total: the share gives the weight back.
        section.rows.push_back(
            {serial, 0, 100.0 * static_cast<double>(s.weight) / static_cast<double>(total), leaf});
        break;
      default: {
        profiles::Site site;
        site.class_name = leaf;
        site.trace = serial;
        (m == Measure::kAllocBytes     ? site.alloc_bytes
         : m == Measure::kAllocObjects ? site.alloc_objects
         : m == Measure::kLiveBytes    ? site.live_bytes
                                       : site.live_objects) = s.weight;
        sites.push_back(std::move(site));
      }
    }
  }
  switch (m) {
    case Measure::kCpuSamples:
      p.cpu_samples = std::move(section);
      break;
    case Measure::kCpuCalls:
    case Measure::kCpuTimeMs:
      p.cpu_time = std::move(section);
      break;
    case Measure::kMonitorTimeMs:
      p.monitor_time = std::move(section);
      break;
    default:
      p.sites = std::move(sites);
  }
  return p;
}

std::optional<LabelMatcher> parse_matcher(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) return std::nullopt;
  return LabelMatcher{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
}

}  // namespace store
