// SPDX-License-Identifier: Apache-2.0
// Who a connected JVM is, from HPROF's IDENTITY report (net=): pid, host, main class or jar, JVM
// version, start time and the user's labels. What the server shows JVMs by, and what everything
// that subscribes to a JVM's periods (PeriodHook) is told.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "profiles.h"

namespace jvmprof {

struct JvmIdentity {
  uint32_t session = 0;  // the server's id of the connection (its /api/profiles/<id>)
  std::string address;   // where it connected from ("10.0.0.7:39688"), or a file's name
  int64_t pid = 0;       // 0: the agent sent no identity (JDK 8's HPROF, a file)
  std::string host, main, vm;
  int64_t start_ms = 0;  // when the agent started, ms since the Unix epoch (its clock)
  std::map<std::string, std::string> labels;
  int64_t connection = 0;  // which of the agent's connections this is (1: the first)

  // The same for every connection of one JVM (host, pid, start time); the address without one.
  std::string key() const;
  // "service=checkout env=prod · demo.App · pid 4711 on web-3", or the address without one.
  std::string display_name() const;
  nlohmann::json to_json() const;

  static JvmIdentity from(const profiles::JavaProfile& p, uint32_t session,
                          const std::string& address);
};

// Called for every period= period a JVM sends, on the connection's reader thread, in order: the
// JVM, the period's start and end (ms since the Unix epoch, the agent's clock) and a profile of
// the period's deltas (profiles::period_profile). It must not block for long: the JVM's stream
// waits meanwhile (its agent keeps at most netqueue= bytes and then drops).
using PeriodHook = std::function<void(const JvmIdentity&, int64_t start_ms, int64_t end_ms,
                                      const profiles::JavaProfile& delta)>;

}  // namespace jvmprof
