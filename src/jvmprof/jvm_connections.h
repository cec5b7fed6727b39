// SPDX-License-Identifier: Apache-2.0
// Each JVM's connection history as serve shows it: every connection of one JVM (its sessions
// share JvmIdentity::key(), host/pid/start) grouped under that JVM, in the agent's order
// (IDENTITY's connection=N), with when each one began and ended, why it ended, what the agent
// dropped meanwhile, and its latest periods. Built from the sessions' info() on each request:
// sessions stay in the registry after they end, so nothing here is kept twice. With a profile
// store (serve --store), a JVM's connections to earlier collectors (a serve since restarted, or
// another collector sharing the store) come from the store, before the live ones.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace store {
class ProfileStore;
struct Connection;
}  // namespace store

namespace jvmprof {

// How a session's reader ended, to tell its connection's end cause.
struct ReadEnd {
  bool stopped = false;       // serve stopped the session
  bool socket = true;         // a connection (not a file)
  int error = 0;              // errno of a failed read or poll; 0: end of stream
  bool exit_reports = false;  // a report section completed after the newest period
};

// "serve stopped", "reset" (ECONNRESET), "read error: ...", "agent exited" (the stream ended
// after the cumulative reports HPROF writes at exit), "closed by agent" (any other end of
// stream: a reconnect, a cut link), or "end of file".
std::string end_cause(const ReadEnd& end);

// One connection (a session), from Session::info().
struct ConnectionRecord {
  uint32_t session = 0;
  std::string key;         // identity.key
  int64_t connection = 0;  // the agent's connection=N (1 without it)
  bool live = false;       // a connection, not a file
  std::string state;
  int64_t connected_ms = 0, ended_ms = 0;
  std::string end_cause;
  uint64_t bytes = 0;
  uint64_t dropped_events = 0, dropped_bytes = 0;  // the agent's running totals (DROPPED)
  uint64_t periods_received = 0;
  nlohmann::json identity;        // JvmIdentity::to_json()
  nlohmann::json latest_periods;  // info()'s periods.latest
  // From the profile store: a connection this serve does not hold (session 0).
  bool stored = false;
  std::string collector;  // the collector that held it (stored ones)
  bool end_known = true;  // false: its collector stopped before it could write its end

  static ConnectionRecord from_info(const nlohmann::json& info);
  // A stored connection as the history shows it: one without a recorded end ended with its
  // collector ("collector stopped", at a time not known).
  static ConnectionRecord from_stored(const store::Connection& c);
};

// The cause shown for a stored connection whose end was never written.
inline constexpr const char* kCollectorStopped = "collector stopped";

struct JvmHistory {
  std::string key;
  std::vector<ConnectionRecord> connections;  // the agent's order (connection=N, then arrival)
  uint32_t current = 0;     // the session commands go to: the connected one, else the newest
  std::string store_error;  // reading its stored connections failed (the message)

  // Connections after the first, and connections that ended other than by the JVM's exit or
  // serve's stop (the link went away while the JVM ran on).
  uint64_t reconnects() const;
  uint64_t drops() const;
  nlohmann::json to_json() const;
};

// Groups connections by JVM; JVMs in the order their first connection arrived.
std::vector<JvmHistory> group_connections(std::vector<ConnectionRecord> records);

// The most stored connections shown per JVM (its newest), so that a JVM that reconnected
// thousands of times costs a bounded read.
inline constexpr size_t kStoredConnectionsShown = 100;

// Adds each JVM's connections from the store that this serve does not hold (matched by
// connection number and connected time), in the agent's order. Only JVMs whose live connections
// do not start at 1 or leave gaps can have any (the agent numbers them from 1), so a JVM that
// never reconnected costs no read. A failed read sets the JVM's store_error.
void add_stored_connections(std::vector<JvmHistory>& jvms, store::ProfileStore& profile_store);

}  // namespace jvmprof
