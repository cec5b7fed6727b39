// SPDX-License-Identifier: Apache-2.0
#include "jvm_connections.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>

#include "store.h"

namespace jvmprof {
namespace {

// The session commands go to: the connected one of this serve, else its newest.
void pick_current(JvmHistory& j) {
  j.current = 0;
  for (const auto& c : j.connections)
    if (!c.stored) j.current = c.session;
  for (const auto& c : j.connections)
    if (!c.stored && c.live && c.ended_ms == 0) j.current = c.session;
}

// The JVM as the store keeps it (serve_command's stored_identity): host, pid and start time.
store::JvmIdentity stored_jvm(const nlohmann::json& identity) {
  store::JvmIdentity j;
  j.host = identity.value("host", std::string());
  j.pid = identity.value("pid", int64_t{0});
  j.start_ms = identity.value("startMs", int64_t{0});
  return j;
}

}  // namespace

std::string end_cause(const ReadEnd& end) {
  if (end.stopped) return "serve stopped";
  if (!end.socket)
    return end.error == 0 ? "end of file" : "read error: " + std::string(std::strerror(end.error));
  if (end.error == ECONNRESET) return "reset";
  if (end.error != 0) return "read error: " + std::string(std::strerror(end.error));
  return end.exit_reports ? "agent exited" : "closed by agent";
}

ConnectionRecord ConnectionRecord::from_info(const nlohmann::json& info) {
  ConnectionRecord r;
  r.session = info.value("id", 0u);
  r.identity = info.value("identity", nlohmann::json::object());
  r.key = r.identity.value("key", std::string());
  r.connection = std::max<int64_t>(
      1, info.value("identity", nlohmann::json::object()).value("connection", int64_t{0}));
  r.live = info.value("live", false);
  r.state = info.value("state", std::string());
  r.connected_ms = info.value("startedAt", int64_t{0});
  r.ended_ms = info.value("endedMs", int64_t{0});
  r.end_cause = info.value("endCause", std::string());
  r.bytes = info.value("bytes", uint64_t{0});
  r.dropped_events = info.value("droppedEvents", uint64_t{0});
  r.dropped_bytes = info.value("droppedBytes", uint64_t{0});
  const auto periods = info.value("periods", nlohmann::json::object());
  r.periods_received = periods.value("received", uint64_t{0});
  r.latest_periods = periods.value("latest", nlohmann::json::array());
  return r;
}

ConnectionRecord ConnectionRecord::from_stored(const store::Connection& c) {
  ConnectionRecord r;
  r.stored = true;
  r.live = true;
  r.connection = std::max<int64_t>(1, c.connection);
  r.collector = c.collector;
  r.connected_ms = c.connected_ms;
  r.ended_ms = c.ended_ms;
  r.end_known = c.ended_ms != 0;
  r.end_cause = r.end_known ? c.end_cause : kCollectorStopped;
  r.state = "ended";
  r.bytes = c.bytes;
  r.dropped_events = c.dropped_events;
  r.dropped_bytes = c.dropped_bytes;
  r.periods_received = c.periods;
  r.latest_periods = nlohmann::json::array();
  return r;
}

uint64_t JvmHistory::reconnects() const {
  return connections.empty() ? 0 : connections.size() - 1;
}

uint64_t JvmHistory::drops() const {
  uint64_t n = 0;
  for (const auto& c : connections)
    if (c.live && c.ended_ms != 0 && c.end_cause != "agent exited" &&
        c.end_cause != "serve stopped" && c.end_cause != kCollectorStopped)
      ++n;
  return n;
}

nlohmann::json JvmHistory::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  const ConnectionRecord* before = nullptr;
  const ConnectionRecord* with_periods = nullptr;
  for (const auto& c : connections) {
    // The agent's DROPPED totals run over all its connections: what this one added is the
    // difference (events lost in the outage before it are reported on it).
    const uint64_t events_before = before ? before->dropped_events : 0;
    const uint64_t bytes_before = before ? before->dropped_bytes : 0;
    list.push_back(
        {{"session", c.session},
         {"connection", c.connection},
         {"state", c.state},
         {"connectedMs", c.connected_ms},
         {"endedMs", c.ended_ms},
         {"endCause", c.end_cause},
         // How long the JVM had no connection before this one (0 for the first).
         {"gapMs", before && before->ended_ms != 0 && c.connected_ms > before->ended_ms
                       ? c.connected_ms - before->ended_ms
                       : 0},
         {"bytes", c.bytes},
         {"droppedEvents", c.dropped_events},
         {"droppedBytes", c.dropped_bytes},
         {"droppedEventsAdded",
          c.dropped_events > events_before ? c.dropped_events - events_before : 0},
         {"droppedBytesAdded", c.dropped_bytes > bytes_before ? c.dropped_bytes - bytes_before : 0},
         {"periods", c.periods_received},
         // From the profile store (an earlier or another collector's), not a session here.
         {"stored", c.stored},
         {"collector", c.collector},
         {"endKnown", c.end_known}});
    if (c.periods_received > 0 && !c.stored) with_periods = &c;
    before = &c;
  }
  // Who the JVM is and whether it is up, from this serve's newest connection.
  const ConnectionRecord* live_newest = &connections.back();
  for (const auto& c : connections)
    if (!c.stored) live_newest = &c;
  const ConnectionRecord& newest = *live_newest;
  return {{"key", key},
          {"identity", newest.identity},
          {"live", newest.live},
          {"current", current},
          {"connected", newest.ended_ms == 0 && newest.live},
          {"connects", connections.size()},
          {"reconnects", reconnects()},
          {"drops", drops()},
          {"droppedEvents", newest.dropped_events},
          {"droppedBytes", newest.dropped_bytes},
          {"latestPeriods", with_periods ? with_periods->latest_periods : nlohmann::json::array()},
          {"connections", std::move(list)},
          {"storeError", store_error}};
}

std::vector<JvmHistory> group_connections(std::vector<ConnectionRecord> records) {
  std::sort(
      records.begin(), records.end(),
      [](const ConnectionRecord& a, const ConnectionRecord& b) { return a.session < b.session; });
  std::vector<JvmHistory> jvms;
  std::map<std::string, size_t> index;
  for (auto& r : records) {
    auto [it, added] = index.try_emplace(r.key, jvms.size());
    if (added) {
      jvms.emplace_back();
      jvms.back().key = r.key;
    }
    jvms[it->second].connections.push_back(std::move(r));
  }
  for (auto& j : jvms) {
    // The agent numbers its connections; serve's session ids say which arrived first when two
    // carry the same number (an agent without connection= counts as 1).
    std::stable_sort(j.connections.begin(), j.connections.end(),
                     [](const ConnectionRecord& a, const ConnectionRecord& b) {
                       return a.connection < b.connection;
                     });
    pick_current(j);
  }
  return jvms;
}

void add_stored_connections(std::vector<JvmHistory>& jvms, store::ProfileStore& profile_store) {
  for (auto& j : jvms) {
    const ConnectionRecord* held = nullptr;
    std::set<int64_t> numbers;
    for (const auto& c : j.connections) {
      if (c.stored || !c.live) continue;
      held = &c;
      numbers.insert(c.connection);
    }
    // Connections 1..N all here (or none with an identity): nothing earlier to read.
    if (held == nullptr || held->identity.value("pid", int64_t{0}) == 0) continue;
    if (*numbers.begin() == 1 && *numbers.rbegin() == static_cast<int64_t>(numbers.size()))
      continue;
    std::vector<store::Connection> stored;
    try {
      stored = profile_store.connections({stored_jvm(held->identity)}, kStoredConnectionsShown);
    } catch (const store::StoreError& e) {
      j.store_error = e.what();
      continue;
    }
    std::set<std::pair<int64_t, int64_t>> here;
    for (const auto& c : j.connections) here.insert({c.connection, c.connected_ms});
    for (const auto& s : stored)
      if (!here.count({std::max<int64_t>(1, s.connection), s.connected_ms}))
        j.connections.push_back(ConnectionRecord::from_stored(s));
    // The agent's order; at one number, the stored (earlier collector's) one first.
    std::stable_sort(j.connections.begin(), j.connections.end(),
                     [](const ConnectionRecord& a, const ConnectionRecord& b) {
                       if (a.connection != b.connection) return a.connection < b.connection;
                       return a.stored && !b.stored;
                     });
    pick_current(j);
  }
}

}  // namespace jvmprof
