// SPDX-License-Identifier: Apache-2.0
// The JVMPI interface HPROF runs on, and the few helpers every part of HPROF uses with it.
#pragma once

#include <jvmpi.h>
#include <jvmpi_ext.h>

namespace hprof::agent {

JVMPI_Interface* jvmpi();
void set_jvmpi(JVMPI_Interface* table);
// The runtime's extensions, or null when it has none.
JVMPI_ExtInterface* jvmpi_ext();

// Holds a JVMPI raw monitor for a scope.
class RawLock {
 public:
  explicit RawLock(JVMPI_RawMonitor m) : m_(m) { jvmpi()->RawMonitorEnter(m_); }
  ~RawLock() { jvmpi()->RawMonitorExit(m_); }
  RawLock(const RawLock&) = delete;
  RawLock& operator=(const RawLock&) = delete;

 private:
  JVMPI_RawMonitor m_;
};

}  // namespace hprof::agent
