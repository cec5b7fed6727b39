// JVMPI raw monitors: JVMTI raw monitors plus the owner and contention bookkeeping that the
// RAW_MONITOR_CONTENDED_* events (and the monitor dump) need.
#pragma once

#include <jvmpi.h>

namespace jvmpi::raw_monitors {

JVMPI_RawMonitor create(char* name);
void enter(JVMPI_RawMonitor monitor);
void exit(JVMPI_RawMonitor monitor);
void wait(JVMPI_RawMonitor monitor, jlong ms);
void notify_all(JVMPI_RawMonitor monitor);
void destroy(JVMPI_RawMonitor monitor);

}  // namespace jvmpi::raw_monitors
