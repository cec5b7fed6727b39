// SPDX-License-Identifier: Apache-2.0
// The parts of an HPROF run, wired together: options, output, the tables filled from events, and
// the profilers. Each part keeps its own state and lock; this only holds them.
#pragma once

#include "allocation_site_memo.h"
#include "allocation_sites.h"
#include "binary_report.h"
#include "cost_table.h"
#include "cpu_sampler.h"
#include "cpu_timer.h"
#include "monitor_profile.h"
#include "options.h"
#include "output.h"
#include "tables.h"

namespace hprof::agent {

struct Profile {
  Options options;
  Output output;
  ClassTable classes;
  ThreadTable threads;
  TraceTable traces;
  AllocationSites sites;
  SiteFinder site_finder;  // for `sites` and `traces`
  CostTable cpu_samples;
  MonitorProfile monitors;
  BinaryReport binary;  // format=b
  CpuSampler sampler{options, classes, threads, traces, cpu_samples};
  CpuTimer timer{options, threads, traces};
};

Profile& profile();

// The attach life cycle (docs/attach.md): a new profile per attached session, freed when the
// session has stopped and none of its threads runs.
void set_attached();
bool session_running();
void set_session_running(bool running);
void begin_profile();
void end_profile();

}  // namespace hprof::agent
