// The JVMPI interface HPROF runs on, and the few helpers every part of HPROF uses with it.
#pragma once

#include <jvmpi.h>

namespace hprof::agent {

JVMPI_Interface* jvmpi();
void set_jvmpi(JVMPI_Interface* table);

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
