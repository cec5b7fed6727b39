// SPDX-License-Identifier: Apache-2.0
// The SQLite store's schema, version by version (docs/profile-store.md explains it). A store made
// at version N is brought to kSqliteSchemaVersion by running kSqliteMigrations[N..] in order.
#pragma once

#include <string_view>

namespace store {

inline constexpr int kSqliteSchemaVersion = 5;

// Version 1: JVMs with their labels as a JSON object, frames and stacks stored once, periods and
// their samples.
inline constexpr std::string_view kSqliteSchemaV1 = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE jvms(id INTEGER PRIMARY KEY, host TEXT NOT NULL, pid INTEGER NOT NULL,
  main TEXT NOT NULL, jvm_version TEXT NOT NULL, start_ms INTEGER NOT NULL,
  labels TEXT NOT NULL, UNIQUE(host, pid, start_ms));
CREATE TABLE frames(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE);
CREATE TABLE stacks(id INTEGER PRIMARY KEY AUTOINCREMENT, frame_ids BLOB NOT NULL UNIQUE);
CREATE TABLE periods(id INTEGER PRIMARY KEY, jvm_id INTEGER NOT NULL REFERENCES jvms(id),
  start_ms INTEGER NOT NULL, end_ms INTEGER NOT NULL, resolution_ms INTEGER NOT NULL);
CREATE INDEX periods_by_time ON periods(start_ms, jvm_id);
CREATE UNIQUE INDEX periods_buckets ON periods(jvm_id, resolution_ms, start_ms)
  WHERE resolution_ms > 0;
CREATE TABLE samples(period_id INTEGER NOT NULL, measure INTEGER NOT NULL,
  stack_id INTEGER NOT NULL, weight INTEGER NOT NULL,
  PRIMARY KEY(period_id, measure, stack_id)) WITHOUT ROWID;
INSERT INTO meta VALUES('schema_version', '1');
)sql";

// Migrations: kSqliteMigrations[i] takes version i + 1 to i + 2.
inline constexpr std::string_view kSqliteMigrations[] = {
    // 1 -> 2: labels as rows, indexed by key and value, so that --match finds its JVMs without
    // reading every JVM's JSON.
    R"sql(
CREATE TABLE labels(jvm_id INTEGER NOT NULL REFERENCES jvms(id), key TEXT NOT NULL,
  value TEXT NOT NULL, PRIMARY KEY(jvm_id, key)) WITHOUT ROWID;
CREATE INDEX labels_by_value ON labels(key, value);
INSERT INTO labels SELECT jvms.id, j.key, j.value FROM jvms, json_each(jvms.labels) AS j;
UPDATE meta SET value = '2' WHERE key = 'schema_version';
)sql",
    // 2 -> 3: one row per (period, measure) whose samples are one blob (sample_codec.h) instead
    // of a row per stack. The blobs are made in C++ between this step and kSqliteV3Finish.
    R"sql(
CREATE TABLE period_samples(period_id INTEGER NOT NULL, measure INTEGER NOT NULL,
  total INTEGER NOT NULL, samples BLOB NOT NULL, PRIMARY KEY(period_id, measure));
)sql",
    // 3 -> 4: each JVM's samples per hour and measure, merged, as one blob (the periods starting
    // in that hour), so that a query over many hours reads one blob per JVM-hour instead of 360.
    // Filled in C++ between this step and kSqliteV4Finish.
    R"sql(
CREATE TABLE hour_samples(hour_ms INTEGER NOT NULL, jvm_id INTEGER NOT NULL,
  measure INTEGER NOT NULL, total INTEGER NOT NULL, samples BLOB NOT NULL,
  PRIMARY KEY(hour_ms, jvm_id, measure)) WITHOUT ROWID;
)sql",
    // 4 -> 5: every connection of a JVM's agent to a collector, so that a restarted collector
    // shows a JVM's earlier connections. ended_ms NULL: no end recorded.
    R"sql(
CREATE TABLE connections(id INTEGER PRIMARY KEY, jvm_id INTEGER NOT NULL REFERENCES jvms(id),
  connection INTEGER NOT NULL, collector TEXT NOT NULL, connected_ms INTEGER NOT NULL,
  ended_ms INTEGER, end_cause TEXT, dropped_events INTEGER NOT NULL, dropped_bytes INTEGER NOT NULL,
  bytes INTEGER NOT NULL, periods INTEGER NOT NULL, UNIQUE(jvm_id, connection, connected_ms));
UPDATE meta SET value = '5' WHERE key = 'schema_version';
)sql",
};

// The end of the 2 -> 3 migration, once every period's samples are in period_samples.
inline constexpr std::string_view kSqliteV3Finish = R"sql(
DROP TABLE samples;
UPDATE meta SET value = '3' WHERE key = 'schema_version';
)sql";

// The end of the 3 -> 4 migration, once every hour of every JVM is in hour_samples.
inline constexpr std::string_view kSqliteV4Finish = R"sql(
UPDATE meta SET value = '4' WHERE key = 'schema_version';
)sql";

}  // namespace store
