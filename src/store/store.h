// SPDX-License-Identifier: Apache-2.0
// store: a history of profiles over time. Every period of every JVM (its identity and labels, its
// time range, its weighted stacks per measure) is kept in a database -- SQLite in one file by
// default, PostgreSQL when several collectors share one store -- and answers time-range queries
// merged across JVMs that match labels, timelines, and retention with downsampling that keeps
// sums. The schema is described in docs/profile-store.md.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "profiles.h"

namespace store {

// Who a JVM is. Two periods belong to the same JVM when host, pid and start_ms agree.
struct JvmIdentity {
  std::string host;
  int64_t pid = 0;
  std::string main;  // main class or jar
  std::string jvm_version;
  int64_t start_ms = 0;  // JVM start, ms since the Unix epoch
  std::map<std::string, std::string> labels;
};

// What one JVM added between start_ms and end_ms (ms since the Unix epoch): weighted root-first
// stacks per measure. Threads are not kept (thread serials mean nothing across runs).
struct Period {
  JvmIdentity jvm;
  int64_t start_ms = 0, end_ms = 0;
  std::map<profiles::Measure, std::vector<profiles::Stack>> stacks;
};

// A period holding profiles::stacks() of `delta` for every measure it has.
Period period_from_profile(const JvmIdentity& jvm, int64_t start_ms, int64_t end_ms,
                           const profiles::JavaProfile& delta);

// Merged stacks as a profile with the one measure's report, so that every export of the profiles
// library (HTML, pprof, speedscope, diffs) draws a query's answer.
profiles::JavaProfile profile_from_stacks(profiles::Measure m,
                                          const std::vector<profiles::Stack>& stacks,
                                          const std::string& source);

// The store cannot be opened or used: not a profile store, a newer schema, a database error.
// The message is one line.
class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// label key = value; every matcher of a query must hold for a JVM to count.
struct LabelMatcher {
  std::string key, value;
};
// "k=v" -> matcher; nullopt when there is no '=' or the key is empty.
std::optional<LabelMatcher> parse_matcher(std::string_view text);

struct Query {
  int64_t from_ms = 0, to_ms = 0;  // periods whose start is in [from_ms, to_ms)
  std::vector<LabelMatcher> match;
  profiles::Measure measure = profiles::Measure::kCpuSamples;
};

struct StoredJvm {
  JvmIdentity identity;
  int64_t first_ms = 0, last_ms = 0;  // the earliest period's start, the latest period's end
  uint64_t periods = 0;
};

// One bar of a timeline: the measure's total over the periods starting in
// [bucket_ms, bucket_ms + bucket width) of the JVMs whose label has `value` ("" when a JVM lacks
// the label, or every JVM when no label is grouped by).
struct TimelinePoint {
  int64_t bucket_ms = 0;
  std::string value;
  uint64_t total = 0;
};

// Downsampling and retention. Periods whose end is older than `minute_after` are merged into
// 1-minute buckets per JVM, older than `hour_after` into 1-hour buckets, older than `retention`
// deleted (0: kept for ever). Merging adds weights, so every sum over whole buckets is unchanged.
struct RetentionPolicy {
  int64_t retention_ms = 0;
  int64_t minute_after_ms = int64_t{24} * 3600 * 1000;
  int64_t hour_after_ms = int64_t{7} * 24 * 3600 * 1000;
};

struct MaintenanceResult {
  uint64_t periods_merged = 0;       // raw or minute periods folded into coarser buckets
  uint64_t periods_deleted = 0;      // past retention
  uint64_t connections_deleted = 0;  // connections that ended (or began, without an end) before
                                     // the retention's cut
};

// One connection of a JVM's agent to a collector (jvmprof serve), kept so that a restarted
// collector can show the JVM's earlier connections. Written when it begins and again when it
// ends, never per period.
struct Connection {
  JvmIdentity jvm;
  int64_t connection = 1;  // the agent's connection=N (1: its first)
  std::string collector;   // which collector held it ("host pid N")
  int64_t connected_ms = 0;
  int64_t ended_ms = 0;  // 0: no end recorded (still up, or its collector stopped first)
  std::string end_cause;
  uint64_t dropped_events = 0, dropped_bytes = 0;  // the agent's DROPPED totals at its end
  uint64_t bytes = 0, periods = 0;                 // received on it
};

struct StoreStats {
  uint64_t appended = 0;  // periods handed to append()
  uint64_t committed = 0;
  uint64_t dropped = 0;  // whole periods dropped because the queue was full
  uint64_t failed = 0;   // periods whose transaction failed (the error is last_error)
  size_t queued = 0;
  uint64_t connections_dropped = 0;  // connection records dropped because the queue was full
  uint64_t connections_failed = 0;   // connection records whose transaction failed
  std::string last_error;
};

struct StoreOptions {
  size_t queue_periods = 4096;  // the write queue's bound, in periods
  size_t batch_periods = 256;   // at most this many periods per transaction
};

// A profile history. append() never blocks: periods go through a bounded queue to one writer
// thread that commits them in batches, one transaction per batch, so that a crash loses at most
// the periods not yet committed and never stores part of one. Queries read what is committed.
class ProfileStore {
 public:
  virtual ~ProfileStore() = default;
  // Queues a period; false when the queue is full and the period was dropped (counted).
  virtual bool append(Period period) = 0;
  // Waits until every period queued before the call is committed (or failed).
  virtual void flush() = 0;
  virtual StoreStats stats() const = 0;
  // Queues a connection's record: with ended_ms 0 it is added (once: the same JVM, connection
  // and connected_ms again changes nothing), with an end it is updated (or added, when its
  // beginning was never written). Written in order with the periods, sharing their queue's
  // bound; false when the queue is full (counted).
  virtual bool record_connection(Connection connection) = 0;

  // The query's matching periods merged: one stack per distinct frame list, weights summed.
  virtual std::vector<profiles::Stack> query(const Query& q) = 0;
  virtual std::vector<StoredJvm> jvms() = 0;
  // The committed connections of each JVM (host, pid, start_ms), at most `per_jvm` of each
  // (its newest), each JVM's in the agent's order (connection, then connected_ms).
  virtual std::vector<Connection> connections(const std::vector<JvmIdentity>& jvms,
                                              size_t per_jvm) = 0;
  // Label keys and their values, over every stored JVM.
  virtual std::map<std::string, std::vector<std::string>> labels() = 0;
  virtual std::vector<TimelinePoint> timeline(const Query& q, int64_t bucket_ms,
                                              const std::string& group_by_label) = 0;
  // Every measure's timeline in one database query (grouped by measure as well; q.measure is
  // not looked at): the measures with periods in the range, each with the bars timeline() gives.
  virtual std::map<profiles::Measure, std::vector<TimelinePoint>> timelines(
      const Query& q, int64_t bucket_ms, const std::string& group_by_label) = 0;
  // Downsamples and deletes by the policy as of `now_ms`; runs after what is queued.
  virtual MaintenanceResult maintain(const RetentionPolicy& policy, int64_t now_ms) = 0;
  // "sqlite" or "postgresql", and where (a path or the connection string without a password).
  virtual std::string describe() const = 0;
};

// Opens (creating when missing) the store at `location`: a path to a SQLite file, or a
// postgresql:// connection URI. Throws StoreError.
std::unique_ptr<ProfileStore> open_store(const std::string& location,
                                         const StoreOptions& options = {});

// $XDG_DATA_HOME/jvmprof/profiles.db ($HOME/.local/share when XDG_DATA_HOME is unset); the
// directory is created. Throws StoreError when neither variable is set or it cannot be made.
std::string default_store_path();

// A time for --from / --to: RFC 3339 ("2026-11-27T14:00:00Z", "...+01:00", fractions of a second
// allowed), relative to `now_ms` ("-1h", "-30m", "-2d", "-90s", "now"), or ms since the epoch.
// nullopt when it is none of these.
std::optional<int64_t> parse_time(std::string_view text, int64_t now_ms);
// A duration: "14d", "12h", "30m", "45s", "500ms"; nullopt otherwise.
std::optional<int64_t> parse_duration(std::string_view text);

}  // namespace store
