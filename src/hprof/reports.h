// SPDX-License-Identifier: Apache-2.0
// Writing HPROF's reports: everything the options ask for, at exit (doe=y), on SIGQUIT, and on
// the net= commands.
#pragma once

#include <jvmpi.h>

namespace hprof::agent {

// Writes the traces the sections need, then the sections: HEAP DUMP, SITES, CPU SAMPLES,
// CPU TIME, MONITOR TIME, MONITOR DUMP (each only if its option is on).
void write_all_reports();

// Individual sections, for the net= commands.
void write_sites_report(bool by_allocated, double cutoff);
void write_cpu_report(double cutoff);
void write_heap_dump();
// MONITOR TIME and MONITOR DUMP (monitor=y, format=a), as at exit.
void write_monitor_report();
void write_pending_traces();

// Called by the event dispatcher for the requested dump events.
void on_heap_dump_event(const JVMPI_Event& event);
void on_monitor_dump_event(const JVMPI_Event& event);

}  // namespace hprof::agent
