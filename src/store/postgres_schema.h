// SPDX-License-Identifier: Apache-2.0
// The PostgreSQL store's schema: the SQLite store's tables (docs/profile-store.md), with periods
// and samples partitioned by the period's start, one partition per UTC day, made on first use.
#pragma once

#include <string_view>

namespace store {

inline constexpr int kPostgresSchemaVersion = 5;

inline constexpr std::string_view kPostgresSchemaV1 = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE jvms(id BIGSERIAL PRIMARY KEY, host TEXT NOT NULL, pid BIGINT NOT NULL,
  main TEXT NOT NULL, jvm_version TEXT NOT NULL, start_ms BIGINT NOT NULL,
  labels TEXT NOT NULL, UNIQUE(host, pid, start_ms));
CREATE TABLE frames(id BIGSERIAL PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE stacks(id BIGSERIAL PRIMARY KEY, frame_ids BYTEA NOT NULL UNIQUE);
CREATE TABLE periods(id BIGSERIAL, jvm_id BIGINT NOT NULL, start_ms BIGINT NOT NULL,
  end_ms BIGINT NOT NULL, resolution_ms BIGINT NOT NULL, PRIMARY KEY(start_ms, id))
  PARTITION BY RANGE (start_ms);
CREATE INDEX periods_by_jvm ON periods(jvm_id, start_ms);
CREATE UNIQUE INDEX periods_buckets ON periods(jvm_id, resolution_ms, start_ms)
  WHERE resolution_ms > 0;
CREATE TABLE samples(period_start BIGINT NOT NULL, period_id BIGINT NOT NULL,
  measure SMALLINT NOT NULL, stack_id BIGINT NOT NULL, weight BIGINT NOT NULL,
  PRIMARY KEY(period_start, period_id, measure, stack_id)) PARTITION BY RANGE (period_start);
INSERT INTO meta VALUES('schema_version', '1');
)sql";

inline constexpr std::string_view kPostgresMigrations[] = {
    // 1 -> 2: labels as rows (see the SQLite schema).
    R"sql(
CREATE TABLE labels(jvm_id BIGINT NOT NULL REFERENCES jvms(id), key TEXT NOT NULL,
  value TEXT NOT NULL, PRIMARY KEY(jvm_id, key));
CREATE INDEX labels_by_value ON labels(key, value);
INSERT INTO labels SELECT jvms.id, j.key, j.value FROM jvms, json_each_text(jvms.labels::json) AS j;
UPDATE meta SET value = '2' WHERE key = 'schema_version';
)sql",
    // 2 -> 3: one row per (period, measure) with its samples as one blob (see the SQLite
    // schema), partitioned like periods. The day partitions and the blobs are made in C++
    // between this step and kPostgresV3Finish.
    R"sql(
CREATE TABLE period_samples(period_start BIGINT NOT NULL, period_id BIGINT NOT NULL,
  measure SMALLINT NOT NULL, total BIGINT NOT NULL, samples BYTEA NOT NULL,
  PRIMARY KEY(period_start, period_id, measure)) PARTITION BY RANGE (period_start);
)sql",
    // 3 -> 4: each JVM's samples per hour and measure merged into one blob (see the SQLite
    // schema), partitioned by day like periods. The partitions and blobs are made in C++ between
    // this step and kPostgresV4Finish.
    R"sql(
CREATE TABLE hour_samples(hour_ms BIGINT NOT NULL, jvm_id BIGINT NOT NULL,
  measure SMALLINT NOT NULL, total BIGINT NOT NULL, samples BYTEA NOT NULL,
  PRIMARY KEY(hour_ms, jvm_id, measure)) PARTITION BY RANGE (hour_ms);
)sql",
    // 4 -> 5: every connection of a JVM's agent to a collector (see the SQLite schema); few
    // rows (two writes per connection), so not partitioned.
    R"sql(
CREATE TABLE connections(id BIGSERIAL PRIMARY KEY, jvm_id BIGINT NOT NULL,
  connection BIGINT NOT NULL, collector TEXT NOT NULL, connected_ms BIGINT NOT NULL,
  ended_ms BIGINT, end_cause TEXT, dropped_events BIGINT NOT NULL, dropped_bytes BIGINT NOT NULL,
  bytes BIGINT NOT NULL, periods BIGINT NOT NULL, UNIQUE(jvm_id, connection, connected_ms));
UPDATE meta SET value = '5' WHERE key = 'schema_version';
)sql",
};

// The end of the 2 -> 3 migration, once every period's samples are in period_samples.
inline constexpr std::string_view kPostgresV3Finish = R"sql(
DROP TABLE samples;
UPDATE meta SET value = '3' WHERE key = 'schema_version';
)sql";

// The end of the 3 -> 4 migration, once every hour of every JVM is in hour_samples.
inline constexpr std::string_view kPostgresV4Finish = R"sql(
UPDATE meta SET value = '4' WHERE key = 'schema_version';
)sql";

}  // namespace store
