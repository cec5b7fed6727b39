// SPDX-License-Identifier: Apache-2.0
// period=SECONDS: every period, what it added to the profile (CPU samples, cpu=times costs,
// allocation sites, monitor contention) as one PERIOD block with the period's start and end time
// (docs/hprof-text-format.md); format=b sends the same text as a PERIOD note record, which
// readers that do not know it skip (docs/hprof-binary-format.md). The cumulative reports are
// unchanged, so the periods of a run add up to the report written at exit.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "allocation_sites.h"
#include "cost_table.h"
#include "monitor_profile.h"

namespace hprof::agent {

// The cumulative counters a period is measured against. A period's own snapshot may hold only the
// CPU rows (cpu=samples) and sites that changed since the last one; the one it is measured
// against holds every row and site reported so far.
struct PeriodSnapshot {
  std::unordered_map<unsigned, Cost> cpu;  // by trace: samples, or cpu=times calls and time
  std::map<uint32_t, Site> sites;          // by site index (sites are never removed)
  std::map<std::pair<unsigned, std::string>, std::pair<uint64_t, uint64_t>> monitors;
};

// Which sections a PERIOD block has (the options that make them).
struct PeriodSections {
  bool cpu_samples = false;
  bool cpu_times = false;
  bool sites = false;
  bool monitors = false;
};

// The PERIOD block from `before` to `now`: rows of `now` whose counters grew, with the growth. A
// counter below its previous value was reset (a CONTROL or DATA_RESET command) and counts from
// zero. SITES rows carry allocated bytes and objects as deltas and live bytes and objects as they
// are at the period's end. `site_name` names a site's class.
std::string period_block(uint64_t seq, int64_t start_ms, int64_t end_ms,
                         const PeriodSections& sections, const PeriodSnapshot& before,
                         const PeriodSnapshot& now,
                         const std::function<std::string(const SiteKey&)>& site_name);

// Starts the thread that writes a period every period= seconds (no-op without period=).
bool start_periods();
// Stops that thread and writes the last period, up to now: at exit, after the sampler has
// stopped and before the cumulative reports.
void finish_periods();

}  // namespace hprof::agent
