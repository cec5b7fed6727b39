// SPDX-License-Identifier: Apache-2.0
// JVMPI raw monitors: JVMTI raw monitors plus the owner and contention bookkeeping that the
// RAW_MONITOR_CONTENDED_* events (and the monitor dump) need.
#pragma once

#include <jvmpi.h>

#include <functional>
#include <vector>

namespace jvmpi::raw_monitors {

JVMPI_RawMonitor create(char* name);
void enter(JVMPI_RawMonitor monitor);
void exit(JVMPI_RawMonitor monitor);
void wait(JVMPI_RawMonitor monitor, jlong ms);
void notify_all(JVMPI_RawMonitor monitor);
void destroy(JVMPI_RawMonitor monitor);

// A raw monitor's state, for the monitor dump.
struct RawMonitorState {
  const char* name;  // valid while the monitor exists
  JVMPI_RawMonitor id;
  JNIEnv* owner;
  int entry_count;
  std::vector<JNIEnv*> entering;  // threads waiting to enter
  std::vector<JNIEnv*> waiting;   // threads waiting to be notified
};

// The monitors that are in use (owned, or waited for). The registry stays locked while `visit`
// runs, so the names stay valid.
void for_each_in_use(const std::function<void(const RawMonitorState&)>& visit);

}  // namespace jvmpi::raw_monitors
