// SPDX-License-Identifier: Apache-2.0
// The PostgreSQL backend: several collectors write into one database and any of them answers
// queries over all JVMs. Frames, stacks and JVMs are resolved in short statements of their own
// (ON CONFLICT DO NOTHING, so that two collectors meeting the same new stack agree on its row
// and never deadlock over it); a batch's periods and samples then go in one transaction. Periods
// and samples are partitioned by the period's start, one partition per UTC day.
#include <libpq-fe.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <unordered_map>

#include "hours.h"
#include "measure_codes.h"
#include "postgres_schema.h"
#include "retention_sql.h"
#include "sample_codec.h"
#include "stack_codec.h"
#include "store_backend.h"

namespace store {
namespace {

constexpr int64_t kDayMs = 86'400'000;
// The advisory lock that serialises schema changes (creation, migration, new partitions)
// between collectors.
constexpr const char* kSchemaLock = "SELECT pg_advisory_xact_lock(7370726)";

class Result {
 public:
  explicit Result(PGresult* r) : r_(r) {}
  ~Result() { PQclear(r_); }
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;
  int rows() const { return PQntuples(r_); }
  std::string text(int row, int col) const { return PQgetvalue(r_, row, col); }
  int64_t integer(int row, int col) const { return std::stoll(PQgetvalue(r_, row, col)); }
  bool null(int row, int col) const { return PQgetisnull(r_, row, col); }

 private:
  PGresult* r_;
};

std::string labels_json(const std::map<std::string, std::string>& labels) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : labels) j[k] = v;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A blob as a bytea literal in hex form ('\x0102...'; standard_conforming_strings is on).
std::string bytea_literal(std::string_view blob) {
  static const char hex[] = "0123456789abcdef";
  std::string out = "'\\x";
  out.reserve(blob.size() * 2 + 4);
  for (unsigned char c : blob) {
    out.push_back(hex[c >> 4]);
    out.push_back(hex[c & 15]);
  }
  out.push_back('\'');
  return out;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A bytea column's text form (hex, PostgreSQL's default bytea_output) as bytes; false when it is
// not that form.
bool from_bytea_text(std::string_view text, std::string& out) {
  out.clear();
  if (text.size() < 2 || text[0] != '\\' || text[1] != 'x' || text.size() % 2 != 0) return false;
  out.reserve(text.size() / 2 - 1);
  for (size_t i = 2; i < text.size(); i += 2) {
    const int hi = hex_digit(text[i]), lo = hex_digit(text[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return true;
}

// The connection string without its password, for messages.
std::string redacted(const std::string& uri) {
  const size_t scheme = uri.find("://");
  const size_t at = uri.find('@');
  if (scheme == std::string::npos || at == std::string::npos) return uri;
  const size_t colon = uri.find(':', scheme + 3);
  if (colon == std::string::npos || colon > at) return uri;
  return uri.substr(0, colon) + ":***" + uri.substr(at);
}

class PostgresBackend final : public Backend {
 public:
  explicit PostgresBackend(const std::string& uri) : name_(redacted(uri)) {
    conn_ = PQconnectdb(uri.c_str());
    if (PQstatus(conn_) != CONNECTION_OK) {
      std::string msg = PQerrorMessage(conn_);
      PQfinish(conn_);
      throw StoreError("cannot connect to the profile store " + name_ + ": " + one_line(msg));
    }
    exec("SET client_min_messages = warning");
    prepare_schema();
  }
  ~PostgresBackend() override { PQfinish(conn_); }

  std::string describe() const override { return "postgresql " + name_; }

  void write(const std::vector<Period>& batch) override {
    try {
      write_once(batch);
    } catch (const StoreError&) {
      // Another collector's retention may have dropped a day partition this one had made (a
      // late period for a day past retention): forget the partitions known and try once more,
      // which makes them again. Any other error fails again the same way.
      partitions_.clear();
      write_once(batch);
    }
  }

  void write_connections(const std::vector<Connection>& batch) override {
    // The JVM rows first, each its own statement (as for periods), then the batch in one
    // transaction: a beginning adds its row once; an end updates it (or adds it, its beginning
    // lost).
    std::vector<int64_t> jvm_of;
    for (const Connection& c : batch) jvm_of.push_back(jvm_id(c.jvm));
    exec("BEGIN");
    try {
      for (size_t i = 0; i < batch.size(); ++i) {
        const Connection& c = batch[i];
        std::vector<std::string> params = {std::to_string(jvm_of[i]),
                                           std::to_string(c.connection),
                                           c.collector,
                                           std::to_string(c.connected_ms),
                                           std::to_string(c.dropped_events),
                                           std::to_string(c.dropped_bytes),
                                           std::to_string(c.bytes),
                                           std::to_string(c.periods)};
        if (c.ended_ms == 0) {
          exec_params(
              "INSERT INTO connections(jvm_id, connection, collector, connected_ms, "
              "dropped_events, dropped_bytes, bytes, periods) VALUES($1, $2, $3, $4, $5, $6, $7, "
              "$8) ON CONFLICT(jvm_id, connection, connected_ms) DO NOTHING",
              params);
        } else {
          params.push_back(std::to_string(c.ended_ms));
          params.push_back(c.end_cause);
          exec_params(
              "INSERT INTO connections(jvm_id, connection, collector, connected_ms, "
              "dropped_events, dropped_bytes, bytes, periods, ended_ms, end_cause) VALUES($1, "
              "$2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT(jvm_id, connection, "
              "connected_ms) DO UPDATE SET ended_ms = excluded.ended_ms, end_cause = "
              "excluded.end_cause, dropped_events = excluded.dropped_events, dropped_bytes = "
              "excluded.dropped_bytes, bytes = excluded.bytes, periods = excluded.periods",
              params);
        }
      }
      exec("COMMIT");
    } catch (...) {
      PQexec(conn_, "ROLLBACK");
      jvm_ids_.clear();
      throw;
    }
  }

  std::vector<Connection> connections(const std::vector<JvmIdentity>& jvms,
                                      size_t per_jvm) override {
    std::vector<Connection> out;
    for (const JvmIdentity& j : jvms) {
      Result r(query_params(
          "SELECT * FROM (SELECT c.connection, c.collector, c.connected_ms, COALESCE(c.ended_ms, "
          "0), COALESCE(c.end_cause, ''), c.dropped_events, c.dropped_bytes, c.bytes, c.periods "
          "FROM connections c JOIN jvms j ON j.id = c.jvm_id WHERE j.host = $1 AND j.pid = $2 "
          "AND j.start_ms = $3 ORDER BY c.connection DESC, c.connected_ms DESC LIMIT $4) AS "
          "newest ORDER BY 1, 3",
          {j.host, std::to_string(j.pid), std::to_string(j.start_ms), std::to_string(per_jvm)}));
      for (int i = 0; i < r.rows(); ++i) {
        Connection c;
        c.jvm = j;
        c.connection = r.integer(i, 0);
        c.collector = r.text(i, 1);
        c.connected_ms = r.integer(i, 2);
        c.ended_ms = r.integer(i, 3);
        c.end_cause = r.text(i, 4);
        c.dropped_events = static_cast<uint64_t>(r.integer(i, 5));
        c.dropped_bytes = static_cast<uint64_t>(r.integer(i, 6));
        c.bytes = static_cast<uint64_t>(r.integer(i, 7));
        c.periods = static_cast<uint64_t>(r.integer(i, 8));
        out.push_back(std::move(c));
      }
    }
    return out;
  }

 private:
  void write_once(const std::vector<Period>& batch) {
    // Rows shared between collectors first, each its own statement (outside the transaction).
    std::vector<int64_t> jvm_of(batch.size());
    std::vector<std::map<int, std::vector<StackWeight>>> weights(batch.size());  // by measure
    for (size_t i = 0; i < batch.size(); ++i) {
      jvm_of[i] = jvm_id(batch[i].jvm);
      ensure_partition(batch[i].start_ms);
      for (const auto& [m, stacks] : batch[i].stacks) {
        std::vector<StackWeight> samples;
        samples.reserve(stacks.size());
        for (const profiles::Stack& s : stacks)
          if (s.weight > 0 && !s.frames.empty()) samples.push_back({stack_id(s.frames), s.weight});
        sum_by_stack(samples);
        if (!samples.empty()) weights[i][measure_code(m)] = std::move(samples);
      }
    }
    exec("BEGIN");
    try {
      Result ids(query_params("SELECT nextval('periods_id_seq') FROM generate_series(1, $1)",
                              {std::to_string(batch.size())}));
      // The rows go in through COPY (text format): no statement for the server to parse, and
      // no size limit on one statement's text.
      std::string periods, samples;
      for (size_t i = 0; i < batch.size(); ++i) {
        const int64_t id = ids.integer(static_cast<int>(i), 0);
        const std::string start = std::to_string(batch[i].start_ms), period = std::to_string(id);
        periods += period + '\t' + std::to_string(jvm_of[i]) + '\t' + start + '\t' +
                   std::to_string(batch[i].end_ms) + "\t0\n";
        for (const auto& [measure, run] : weights[i]) {
          samples += start + '\t' + period + '\t' + std::to_string(measure) + '\t' +
                     std::to_string(total_weight(run)) + '\t';
          append_copy_bytea(samples, encode_samples(run));
          samples += '\n';
        }
      }
      copy_in("periods(id, jvm_id, start_ms, end_ms, resolution_ms)", periods);
      if (!samples.empty())
        copy_in("period_samples(period_start, period_id, measure, total, samples)", samples);
      add_to_hours(batch, jvm_of, weights);
      exec("COMMIT");
    } catch (...) {
      PQexec(conn_, "ROLLBACK");
      throw;
    }
  }

  // A bytea in COPY's text format: the hex form with its backslash escaped ("\\x0102...").
  static void append_copy_bytea(std::string& out, std::string_view blob) {
    static const char hex[] = "0123456789abcdef";
    out += "\\\\x";
    for (unsigned char c : blob) {
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }

  // COPY table(columns) FROM STDIN with `rows` (text format, each ending in a newline).
  void copy_in(const std::string& table, const std::string& rows) {
    PGresult* r = PQexec(conn_, ("COPY " + table + " FROM STDIN").c_str());
    const bool started = PQresultStatus(r) == PGRES_COPY_IN;
    std::string msg = started ? "" : PQresultErrorMessage(r);
    PQclear(r);
    if (!started) throw StoreError("profile store " + name_ + ": " + one_line(msg));
    const bool sent = PQputCopyData(conn_, rows.data(), static_cast<int>(rows.size())) == 1;
    PQputCopyEnd(conn_, sent ? nullptr : "the rows could not be sent");
    bool ok = true;
    while ((r = PQgetResult(conn_)) != nullptr) {
      if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        ok = false;
        msg = PQresultErrorMessage(r);
      }
      PQclear(r);
    }
    if (!ok || !sent)
      throw StoreError("profile store " + name_ + ": " +
                       one_line(msg.empty() ? PQerrorMessage(conn_) : msg));
  }

 public:
  std::vector<profiles::Stack> query(const Query& q) override {
    // The blobs are decoded and added up here: the database cannot look inside them. The whole
    // hours of the range come from hour_samples (one blob per JVM-hour), the ends from the
    // periods.
    const std::string jvms = jvm_filter(q.match);
    const std::string code = std::to_string(measure_code(q.measure));
    std::unordered_map<int64_t, uint64_t> weights;
    auto add_periods = [&](int64_t from, int64_t to) {
      if (from >= to) return;
      Result r(query_params(
          "SELECT p.id, s.samples FROM periods p JOIN period_samples s ON s.period_id = p.id AND "
          "s.period_start = p.start_ms AND s.measure = $1 WHERE p.start_ms >= $2 AND p.start_ms "
          "< $3 AND s.period_start >= $2 AND s.period_start < $3" +
              jvms,
          {code, std::to_string(from), std::to_string(to)}));
      for (int i = 0; i < r.rows(); ++i)
        for (const StackWeight& s : decode(r, i, 0, 1)) weights[s.stack_id] += s.weight;
    };
    const int64_t first_hour = hour_ceil(q.from_ms), end_hour = hour_floor(q.to_ms);
    if (first_hour < end_hour) {
      Result r(query_params(
          "SELECT p.hour_ms, p.samples FROM hour_samples p WHERE p.measure = $1 AND p.hour_ms >= "
          "$2 AND p.hour_ms < $3" +
              jvms,
          {code, std::to_string(first_hour), std::to_string(end_hour)}));
      for (int i = 0; i < r.rows(); ++i)
        for (const StackWeight& s : decode(r, i, 0, 1)) weights[s.stack_id] += s.weight;
      add_periods(q.from_ms, first_hour);
      add_periods(end_hour, q.to_ms);
    } else {
      add_periods(q.from_ms, q.to_ms);
    }
    std::vector<profiles::Stack> out;
    out.reserve(weights.size());
    for (const auto& [id, weight] : weights) {
      profiles::Stack s;
      s.weight = weight;
      s.frames = stack_frames(id);
      s.trace_frames = s.frames.size();
      out.push_back(std::move(s));
    }
    return out;
  }

  std::vector<StoredJvm> jvms() override {
    Result r(query_params(
        "SELECT j.host, j.pid, j.main, j.jvm_version, j.start_ms, j.labels, MIN(p.start_ms), "
        "MAX(p.end_ms), COUNT(p.id) FROM jvms j JOIN periods p ON p.jvm_id = j.id GROUP BY j.id "
        "ORDER BY j.host, j.pid, j.start_ms",
        {}));
    std::vector<StoredJvm> out;
    for (int i = 0; i < r.rows(); ++i) {
      StoredJvm j;
      j.identity = {r.text(i, 0), r.integer(i, 1), r.text(i, 2), r.text(i, 3), r.integer(i, 4), {}};
      const auto labels = nlohmann::json::parse(r.text(i, 5), nullptr, false);
      if (labels.is_object())
        for (const auto& [k, v] : labels.items())
          if (v.is_string()) j.identity.labels[k] = v.get<std::string>();
      j.first_ms = r.integer(i, 6);
      j.last_ms = r.integer(i, 7);
      j.periods = static_cast<uint64_t>(r.integer(i, 8));
      out.push_back(std::move(j));
    }
    return out;
  }

  std::map<std::string, std::vector<std::string>> labels() override {
    Result r(query_params("SELECT DISTINCT key, value FROM labels ORDER BY key, value", {}));
    std::map<std::string, std::vector<std::string>> out;
    for (int i = 0; i < r.rows(); ++i) out[r.text(i, 0)].push_back(r.text(i, 1));
    return out;
  }

  std::vector<TimelinePoint> timeline(const Query& q, int64_t bucket_ms,
                                      const std::string& group_by) override {
    if (bucket_ms <= 0) throw StoreError("a timeline's bucket must be longer than 0 ms");
    Result r(query_params(
        "SELECT (p.start_ms / $4) * $4, COALESCE(l.value, ''), SUM(s.total)::bigint FROM "
        "periods p JOIN period_samples s ON s.period_id = p.id AND s.period_start = p.start_ms AND "
        "s.measure = $1 LEFT JOIN labels l ON l.jvm_id = p.jvm_id AND l.key = $5 WHERE "
        "p.start_ms >= $2 AND p.start_ms < $3 AND s.period_start >= $2 AND s.period_start < $3" +
            jvm_filter(q.match) + " GROUP BY 1, 2 ORDER BY 1, 2",
        {std::to_string(measure_code(q.measure)), std::to_string(q.from_ms),
         std::to_string(q.to_ms), std::to_string(bucket_ms), group_by}));
    std::vector<TimelinePoint> out;
    for (int i = 0; i < r.rows(); ++i)
      out.push_back({r.integer(i, 0), r.text(i, 1), static_cast<uint64_t>(r.integer(i, 2))});
    return out;
  }

  std::map<profiles::Measure, std::vector<TimelinePoint>> timelines(
      const Query& q, int64_t bucket_ms, const std::string& group_by) override {
    if (bucket_ms <= 0) throw StoreError("a timeline's bucket must be longer than 0 ms");
    Result r(query_params(
        "SELECT s.measure, (p.start_ms / $3) * $3, COALESCE(l.value, ''), SUM(s.total)::bigint "
        "FROM periods p JOIN period_samples s ON s.period_id = p.id AND s.period_start = "
        "p.start_ms LEFT JOIN labels l ON l.jvm_id = p.jvm_id AND l.key = $4 WHERE p.start_ms >= "
        "$1 AND p.start_ms < $2 AND s.period_start >= $1 AND s.period_start < $2" +
            jvm_filter(q.match) + " GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
        {std::to_string(q.from_ms), std::to_string(q.to_ms), std::to_string(bucket_ms), group_by}));
    std::map<profiles::Measure, std::vector<TimelinePoint>> out;
    for (int i = 0; i < r.rows(); ++i)
      if (const auto m = measure_from_code(r.integer(i, 0)))
        out[*m].push_back({r.integer(i, 1), r.text(i, 2), static_cast<uint64_t>(r.integer(i, 3))});
    return out;
  }

  MaintenanceResult maintain(const RetentionPolicy& policy, int64_t now_ms) override {
    MaintenanceResult r;
    exec("BEGIN");
    try {
      // One collector at a time: two merging the same buckets would add them twice.
      exec(kSchemaLock);
      if (policy.retention_ms > 0) {
        const int64_t cut_ms = now_ms - policy.retention_ms;
        r.periods_deleted += drop_expired_partitions(cut_ms);
        // What is left to delete row by row lies in the partitions the cut falls into: a period
        // that ended before the cut also started before it, which prunes the others.
        const std::string cut = std::to_string(cut_ms);
        exec(
            "DELETE FROM period_samples s USING periods p WHERE s.period_id = p.id AND "
            "s.period_start = p.start_ms AND p.end_ms < " +
            cut + " AND p.start_ms < " + cut + " AND s.period_start < " + cut);
        r.periods_deleted +=
            affected("DELETE FROM periods WHERE end_ms < " + cut + " AND start_ms < " + cut);
        // The hours that lost periods (every hour before the cut's) are made again from what is
        // left; downsampling merges within an hour, so it keeps the hours' sums.
        if (r.periods_deleted > 0) rebuild_hours_before(hour_ceil(cut_ms));
        // A connection without an end (its collector stopped first) goes by its beginning.
        r.connections_deleted +=
            affected("DELETE FROM connections WHERE COALESCE(ended_ms, connected_ms) < " + cut);
      }
      r.periods_merged += downsample(60'000, now_ms - policy.minute_after_ms);
      r.periods_merged += downsample(3'600'000, now_ms - policy.hour_after_ms);
      // Stacks and frames are kept: another collector may be about to refer to them.
      if (r.periods_deleted > 0 || r.periods_merged > 0 || r.connections_deleted > 0) {
        exec(kDeleteUnreferencedLabels);
        exec(kDeleteUnreferencedJvms);
      }
      exec("COMMIT");
    } catch (...) {
      PQexec(conn_, "ROLLBACK");
      throw;
    }
    jvm_ids_.clear();
    return r;
  }

 private:
  static std::string one_line(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    for (char& c : s)
      if (c == '\n') c = ' ';
    return s;
  }

  PGresult* query_params(const std::string& sql, const std::vector<std::string>& params) {
    std::vector<const char*> values;
    for (const auto& p : params) values.push_back(p.c_str());
    PGresult* r = PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr,
                               values.data(), nullptr, nullptr, 0);
    const auto status = PQresultStatus(r);
    if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
      std::string msg = PQresultErrorMessage(r);
      PQclear(r);
      throw StoreError("profile store " + name_ + ": " + one_line(msg));
    }
    return r;
  }

  // Without parameters: several statements at once (the schema) are allowed.
  void exec(const std::string& sql) {
    PGresult* r = PQexec(conn_, sql.c_str());
    const auto status = PQresultStatus(r);
    if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
      std::string msg = PQresultErrorMessage(r);
      PQclear(r);
      throw StoreError("profile store " + name_ + ": " + one_line(msg));
    }
    PQclear(r);
  }

  uint64_t affected(const std::string& sql) {
    PGresult* r = query_params(sql, {});
    const uint64_t n = std::strtoull(PQcmdTuples(r), nullptr, 10);
    PQclear(r);
    return n;
  }

  void prepare_schema() {
    exec("BEGIN");
    try {
      exec(kSchemaLock);
      Result meta(query_params("SELECT to_regclass('meta') IS NOT NULL", {}));
      if (meta.text(0, 0) != "t") {
        Result tables(
            query_params("SELECT COUNT(*) FROM pg_tables WHERE schemaname = current_schema()", {}));
        if (tables.integer(0, 0) != 0)
          throw StoreError(name_ + " holds tables but is not a profile store (left as it is)");
        exec(std::string(kPostgresSchemaV1));
      }
      int version = read_version();
      if (version > kPostgresSchemaVersion)
        throw StoreError(name_ + " has schema version " + std::to_string(version) +
                         ", newer than this jvmprof's " + std::to_string(kPostgresSchemaVersion));
      for (; version < kPostgresSchemaVersion; version = read_version()) {
        exec(std::string(kPostgresMigrations[version - 1]));
        if (version == 2) {
          samples_rows_to_blobs();
          exec(std::string(kPostgresV3Finish));
        } else if (version == 3) {
          for (int64_t day : period_days()) create_partitions(day);
          rebuild_hours_before(std::numeric_limits<int64_t>::max());
          exec(std::string(kPostgresV4Finish));
        }
      }
      exec("COMMIT");
    } catch (...) {
      PQexec(conn_, "ROLLBACK");
      throw;
    }
  }

  int read_version() {
    Result v(query_params("SELECT value FROM meta WHERE key = 'schema_version'", {}));
    if (v.rows() != 1) throw StoreError(name_ + " has no schema version: not a profile store");
    const int version = std::atoi(v.text(0, 0).c_str());
    if (version < 1) throw StoreError(name_ + " has a malformed schema version");
    return version;
  }

  // The day's partitions of periods and samples, made once by whichever collector needs them.
  void ensure_partition(int64_t start_ms) {
    const int64_t day = (start_ms >= 0 ? start_ms : start_ms - kDayMs + 1) / kDayMs;
    if (partitions_.count(day)) return;
    exec("BEGIN");
    try {
      exec(kSchemaLock);
      create_partitions(day);
      exec("COMMIT");
    } catch (...) {
      PQexec(conn_, "ROLLBACK");
      throw;
    }
    partitions_.insert(day);
  }

  // Day partitions whose every period ended before `cut_ms` are dropped whole (periods and their
  // samples), instead of deleting their rows one by one: no dead rows left for VACUUM, and the
  // space goes back to the file system at once. Inside maintain()'s transaction, which holds
  // kSchemaLock; returns how many periods went with them.
  uint64_t drop_expired_partitions(int64_t cut_ms) {
    Result parts(query_params(
        "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE "
        "i.inhparent = 'periods'::regclass AND c.relname LIKE 'periods_d%'",
        {}));
    uint64_t deleted = 0;
    for (int i = 0; i < parts.rows(); ++i) {
      const std::string name = parts.text(i, 0);
      const std::string suffix = name.substr(std::string_view("periods_d").size());
      const std::string digits = suffix.substr(!suffix.empty() && suffix[0] == 'm' ? 1 : 0);
      // Not one of ours (create_partitions names them): left alone.
      if (digits.empty() || digits.size() > 12 ||
          digits.find_first_not_of("0123456789") != std::string::npos)
        continue;
      const int64_t day = (suffix[0] == 'm' ? -1 : 1) * std::stoll(digits);
      // Only days that start before the cut can be wholly older; the partition's latest end
      // decides (a period may end after its day's midnight).
      if (day * kDayMs >= cut_ms) continue;
      Result last(query_params("SELECT COUNT(*), MAX(end_ms) FROM " + name, {}));
      if (!last.null(0, 1) && last.integer(0, 1) >= cut_ms) continue;
      deleted += static_cast<uint64_t>(last.integer(0, 0));
      exec("DROP TABLE IF EXISTS period_samples_d" + suffix);
      exec("DROP TABLE IF EXISTS hour_samples_d" + suffix);
      exec("DROP TABLE " + name);
      partitions_.erase(day);
    }
    return deleted;
  }

  // Inside a transaction holding kSchemaLock.
  void create_partitions(int64_t day) {
    const std::string from = std::to_string(day * kDayMs), to = std::to_string((day + 1) * kDayMs);
    const std::string suffix = day < 0 ? "m" + std::to_string(-day) : std::to_string(day);
    exec("CREATE TABLE IF NOT EXISTS periods_d" + suffix +
         " PARTITION OF periods FOR VALUES FROM (" + from + ") TO (" + to + ")");
    exec("CREATE TABLE IF NOT EXISTS period_samples_d" + suffix +
         " PARTITION OF period_samples FOR VALUES FROM (" + from + ") TO (" + to + ")");
    // Not yet during the 2 -> 3 migration, which comes before hour_samples.
    Result hours(query_params("SELECT to_regclass('hour_samples') IS NOT NULL", {}));
    if (hours.text(0, 0) == "t")
      exec("CREATE TABLE IF NOT EXISTS hour_samples_d" + suffix +
           " PARTITION OF hour_samples FOR VALUES FROM (" + from + ") TO (" + to + ")");
  }

  // The UTC days that have periods (days since the epoch).
  std::vector<int64_t> period_days() {
    Result days(query_params("SELECT DISTINCT floor(start_ms::numeric / " + std::to_string(kDayMs) +
                                 ")::bigint FROM periods",
                             {}));
    std::vector<int64_t> out;
    for (int i = 0; i < days.rows(); ++i) out.push_back(days.integer(i, 0));
    return out;
  }

  // What a batch adds to each (hour, JVM, measure), added into hour_samples inside write()'s
  // transaction: missing rows made empty, every row of the batch locked in key order (so that
  // two collectors writing the same JVM-hour wait for each other instead of losing an
  // addition, and never deadlock), merged here and written back in one statement.
  void add_to_hours(const std::vector<Period>& batch, const std::vector<int64_t>& jvm_of,
                    const std::vector<std::map<int, std::vector<StackWeight>>>& weights) {
    std::map<std::tuple<int64_t, int64_t, int>, std::vector<StackWeight>> adds;
    for (size_t i = 0; i < batch.size(); ++i)
      for (const auto& [measure, samples] : weights[i]) {
        auto& into = adds[{hour_floor(batch[i].start_ms), jvm_of[i], measure}];
        into.insert(into.end(), samples.begin(), samples.end());
      }
    if (adds.empty()) return;
    std::string keys, empty;
    for (const auto& [key, stacks] : adds) {
      const auto& [hour, jvm, measure] = key;
      const std::string k =
          std::to_string(hour) + "," + std::to_string(jvm) + "," + std::to_string(measure);
      keys += (keys.empty() ? "(" : ",(") + k + ")";
      empty += (empty.empty() ? "(" : ",(") + k + ",0,'\\x00')";
    }
    exec("INSERT INTO hour_samples(hour_ms, jvm_id, measure, total, samples) VALUES " + empty +
         " ON CONFLICT DO NOTHING");
    Result old(query_params(
        "SELECT hour_ms, jvm_id, measure, samples FROM hour_samples WHERE (hour_ms, jvm_id, "
        "measure) IN (" +
            keys + ") ORDER BY 1, 2, 3 FOR UPDATE",
        {}));
    std::map<std::tuple<int64_t, int64_t, int>, std::vector<StackWeight>> merged;
    for (int i = 0; i < old.rows(); ++i)
      merged[{old.integer(i, 0), old.integer(i, 1), static_cast<int>(old.integer(i, 2))}] =
          decode(old, i, 0, 3);
    std::vector<std::string> rows;
    for (auto& [key, add] : adds) {
      sum_by_stack(add);
      const auto& samples = merge_samples(merged[key], add);
      rows.push_back("(" + std::to_string(std::get<0>(key)) + "," +
                     std::to_string(std::get<1>(key)) + "," + std::to_string(std::get<2>(key)) +
                     "," + std::to_string(total_weight(samples)) + "," +
                     bytea_literal(encode_samples(samples)) + ")");
    }
    put_hours(rows);
  }

  void put_hours(const std::vector<std::string>& rows) {
    if (rows.empty()) return;
    std::string sql = "INSERT INTO hour_samples(hour_ms, jvm_id, measure, total, samples) VALUES ";
    for (size_t i = 0; i < rows.size(); ++i) sql += (i ? "," : "") + rows[i];
    exec(sql +
         " ON CONFLICT (hour_ms, jvm_id, measure) DO UPDATE SET total = excluded.total, "
         "samples = excluded.samples");
  }

  // hour_samples before `end_hour` (an hour's start) made again from the periods: after retention
  // deleted some (then only the periods that ended after the cut are left before it), and by the
  // 3 -> 4 migration. Inside a transaction; the periods come through a cursor in (JVM, start)
  // order, so that one JVM-hour at a time is held in memory.
  void rebuild_hours_before(int64_t end_hour) {
    const std::string end = std::to_string(end_hour);
    exec("DELETE FROM hour_samples WHERE hour_ms < " + end);
    exec(
        "DECLARE hour_periods NO SCROLL CURSOR FOR SELECT p.id, p.jvm_id, p.start_ms, s.measure, "
        "s.samples FROM periods p JOIN period_samples s ON s.period_id = p.id AND s.period_start "
        "= p.start_ms WHERE p.start_ms < " +
        end + " AND s.period_start < " + end + " ORDER BY p.jvm_id, p.start_ms");
    int64_t jvm = -1, hour = 0;
    std::map<int64_t, std::vector<StackWeight>> merged;  // by measure
    std::vector<std::string> rows;
    auto flush = [&] {
      for (const auto& [measure, samples] : merged)
        rows.push_back("(" + std::to_string(hour) + "," + std::to_string(jvm) + "," +
                       std::to_string(measure) + "," + std::to_string(total_weight(samples)) + "," +
                       bytea_literal(encode_samples(samples)) + ")");
      merged.clear();
      if (rows.size() >= 500) {
        put_hours(rows);
        rows.clear();
      }
    };
    for (;;) {
      Result slice(query_params("FETCH 5000 FROM hour_periods", {}));
      if (slice.rows() == 0) break;
      for (int i = 0; i < slice.rows(); ++i) {
        if (slice.integer(i, 1) != jvm || hour_floor(slice.integer(i, 2)) != hour) {
          flush();
          jvm = slice.integer(i, 1);
          hour = hour_floor(slice.integer(i, 2));
        }
        auto& into = merged[slice.integer(i, 3)];
        into = merge_samples(into, decode(slice, i, 0, 4));
      }
    }
    flush();
    put_hours(rows);
    exec("CLOSE hour_periods");
  }

  std::vector<StackWeight> decode(const Result& r, int row, int period_col, int blob_col) {
    std::string blob;
    if (!from_bytea_text(r.text(row, blob_col), blob))
      throw StoreError(name_ + ": period " + r.text(row, period_col) +
                       ": samples are not a bytea in hex form");
    try {
      return decode_samples(blob);
    } catch (const StoreError& e) {
      throw StoreError(name_ + ": period " + r.text(row, period_col) + ": " + e.what());
    }
  }

  std::string samples_row(const std::string& start, int64_t period, int64_t measure,
                          const std::vector<StackWeight>& samples) {
    return "(" + start + "," + std::to_string(period) + "," + std::to_string(measure) + "," +
           std::to_string(total_weight(samples)) + "," + bytea_literal(encode_samples(samples)) +
           ")";
  }

  // Rows of period_samples, replacing those of the same (period, measure).
  void put_samples(const std::vector<std::string>& rows) {
    if (rows.empty()) return;
    std::string sql =
        "INSERT INTO period_samples(period_start, period_id, measure, total, samples) VALUES ";
    for (size_t i = 0; i < rows.size(); ++i) sql += (i ? "," : "") + rows[i];
    exec(sql +
         " ON CONFLICT (period_start, period_id, measure) DO UPDATE SET total = excluded.total, "
         "samples = excluded.samples");
  }

  // 2 -> 3 (inside prepare_schema's transaction): the day partitions of period_samples, then
  // each (period, measure)'s sample rows as one blob, read through a cursor in slices.
  void samples_rows_to_blobs() {
    for (int64_t day : period_days()) create_partitions(day);
    exec(
        "DECLARE old_samples NO SCROLL CURSOR FOR SELECT period_start, period_id, measure, "
        "stack_id, weight FROM samples WHERE weight > 0 ORDER BY period_id, measure, stack_id");
    std::vector<StackWeight> samples;
    std::vector<std::string> rows;
    std::string start;
    int64_t period = -1, measure = -1;
    auto flush = [&] {
      if (!samples.empty()) rows.push_back(samples_row(start, period, measure, samples));
      samples.clear();
      if (rows.size() >= 1000) {
        put_samples(rows);
        rows.clear();
      }
    };
    for (;;) {
      Result slice(query_params("FETCH 50000 FROM old_samples", {}));
      if (slice.rows() == 0) break;
      for (int i = 0; i < slice.rows(); ++i) {
        if (slice.integer(i, 1) != period || slice.integer(i, 2) != measure) {
          flush();
          start = slice.text(i, 0);
          period = slice.integer(i, 1);
          measure = slice.integer(i, 2);
        }
        samples.push_back({slice.integer(i, 3), static_cast<uint64_t>(slice.integer(i, 4))});
      }
    }
    flush();
    put_samples(rows);
    exec("CLOSE old_samples");
  }

  int64_t jvm_id(const JvmIdentity& j) {
    const std::string key =
        j.host + '\0' + std::to_string(j.pid) + '\0' + std::to_string(j.start_ms);
    if (auto it = jvm_ids_.find(key); it != jvm_ids_.end()) return it->second;
    const std::vector<std::string> id_params = {j.host, std::to_string(j.pid),
                                                std::to_string(j.start_ms)};
    Result inserted(query_params(
        "INSERT INTO jvms(host, pid, start_ms, main, jvm_version, labels) VALUES($1, $2, $3, $4, "
        "$5, $6) ON CONFLICT(host, pid, start_ms) DO NOTHING RETURNING id",
        {j.host, std::to_string(j.pid), std::to_string(j.start_ms), j.main, j.jvm_version,
         labels_json(j.labels)}));
    int64_t id;
    if (inserted.rows() == 1) {
      id = inserted.integer(0, 0);
      for (const auto& [k, v] : j.labels)
        exec_params(
            "INSERT INTO labels(jvm_id, key, value) VALUES($1, $2, $3) ON CONFLICT DO "
            "NOTHING",
            {std::to_string(id), k, v});
    } else {
      Result found(query_params(
          "SELECT id FROM jvms WHERE host = $1 AND pid = $2 AND start_ms = $3", id_params));
      if (found.rows() != 1) throw StoreError(name_ + ": JVM row missing");
      id = found.integer(0, 0);
    }
    jvm_ids_[key] = id;
    return id;
  }

  void exec_params(const std::string& sql, const std::vector<std::string>& params) {
    Result r(query_params(sql, params));
  }

  int64_t frame_id(const std::string& name) {
    if (auto it = frame_ids_.find(name); it != frame_ids_.end()) return it->second;
    Result r(query_params(
        "WITH ins AS (INSERT INTO frames(name) VALUES($1) ON CONFLICT(name) DO NOTHING "
        "RETURNING id) SELECT id FROM ins UNION ALL SELECT id FROM frames WHERE name = $1",
        {name}));
    const int64_t id = r.rows() > 0 ? r.integer(0, 0)
                                    : committed_id("SELECT id FROM frames WHERE name = $1", {name});
    frame_ids_.emplace(name, id);
    return id;
  }

  int64_t stack_id(const std::vector<std::string>& frames) {
    return stack_by_frames_.get(frames, [this](const auto& f) { return resolve_stack(f); });
  }

  int64_t resolve_stack(const std::vector<std::string>& frames) {
    std::vector<int64_t> ids;
    for (const std::string& f : frames) ids.push_back(frame_id(f));
    const std::string blob = encode_frame_ids(ids);
    if (auto it = stack_ids_.find(blob); it != stack_ids_.end()) return it->second;
    // bytea in hex form: '\x0102...'.
    static const char hex[] = "0123456789abcdef";
    std::string literal = "\\x";
    for (unsigned char c : blob) {
      literal.push_back(hex[c >> 4]);
      literal.push_back(hex[c & 15]);
    }
    Result r(query_params(
        "WITH ins AS (INSERT INTO stacks(frame_ids) VALUES($1::bytea) ON CONFLICT(frame_ids) DO "
        "NOTHING RETURNING id) SELECT id FROM ins UNION ALL SELECT id FROM stacks WHERE "
        "frame_ids = $1::bytea",
        {literal}));
    const int64_t id =
        r.rows() > 0 ? r.integer(0, 0)
                     : committed_id("SELECT id FROM stacks WHERE frame_ids = $1::bytea", {literal});
    stack_ids_.emplace(blob, id);
    return id;
  }

  // The row another collector inserted while our statement ran: its snapshot did not show the
  // row, a new statement's does.
  int64_t committed_id(const std::string& sql, const std::vector<std::string>& params) {
    Result r(query_params(sql, params));
    if (r.rows() != 1) throw StoreError(name_ + ": a frame or stack row is missing");
    return r.integer(0, 0);
  }

  std::vector<std::string> stack_frames(int64_t id) {
    if (auto it = stack_frames_.find(id); it != stack_frames_.end()) return it->second;
    Result r(query_params("SELECT encode(frame_ids, 'hex') FROM stacks WHERE id = $1",
                          {std::to_string(id)}));
    std::vector<int64_t> ids;
    std::string blob;
    if (r.rows() == 1) {
      const std::string hex = r.text(0, 0);
      for (size_t i = 0; i + 1 < hex.size(); i += 2)
        blob.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    }
    if (r.rows() != 1 || !decode_frame_ids(blob, ids))
      throw StoreError(name_ + ": stack " + std::to_string(id) + " is missing or malformed");
    std::vector<std::string> frames;
    for (int64_t f : ids) frames.push_back(frame_name(f));
    stack_frames_[id] = frames;
    return frames;
  }

  std::string frame_name(int64_t id) {
    if (auto it = frame_names_.find(id); it != frame_names_.end()) return it->second;
    Result r(query_params("SELECT name FROM frames WHERE id = $1", {std::to_string(id)}));
    if (r.rows() != 1) throw StoreError(name_ + ": frame " + std::to_string(id) + " is missing");
    return frame_names_[id] = r.text(0, 0);
  }

  std::string jvm_filter(const std::vector<LabelMatcher>& match) {
    if (match.empty()) return "";
    std::string sql = "SELECT jvm_id FROM labels WHERE key = $1 AND value = $2";
    std::vector<std::string> params = {match[0].key, match[0].value};
    for (size_t i = 1; i < match.size(); ++i) {
      sql += " INTERSECT SELECT jvm_id FROM labels WHERE key = $" + std::to_string(2 * i + 1) +
             " AND value = $" + std::to_string(2 * i + 2);
      params.push_back(match[i].key);
      params.push_back(match[i].value);
    }
    Result r(query_params(sql, params));
    std::string ids;
    for (int i = 0; i < r.rows(); ++i) ids += (i ? "," : "") + r.text(i, 0);
    return ids.empty() ? " AND FALSE" : " AND p.jvm_id IN (" + ids + ")";
  }

  uint64_t downsample(int64_t resolution, int64_t cut) {
    const std::string r = std::to_string(resolution), c = std::to_string(cut);
    exec(
        "INSERT INTO periods(jvm_id, start_ms, end_ms, resolution_ms) SELECT jvm_id, (start_ms / " +
        r + ") * " + r + ", (start_ms / " + r + ") * " + r + " + " + r + ", " + r +
        " FROM periods WHERE resolution_ms < " + r + " AND end_ms < " + c +
        " GROUP BY 1, 2 ON CONFLICT (jvm_id, resolution_ms, start_ms) WHERE resolution_ms > 0 DO "
        "NOTHING");
    // Each bucket's blobs merged in C++: its own (a bucket may exist from an earlier run) and
    // those of the periods folded into it.
    Result buckets(query_params(
        "SELECT DISTINCT b.id, b.jvm_id, b.start_ms FROM periods p JOIN periods b ON b.jvm_id = "
        "p.jvm_id AND b.resolution_ms = " +
            r + " AND b.start_ms = (p.start_ms / " + r + ") * " + r + " WHERE p.resolution_ms < " +
            r + " AND p.end_ms < " + c,
        {}));
    std::vector<std::string> rows;
    for (int i = 0; i < buckets.rows(); ++i) {
      const std::string id = buckets.text(i, 0), start = buckets.text(i, 2);
      // The start range (widened by one bucket each way for integer division's rounding towards
      // zero) prunes partitions; the division picks the bucket exactly.
      Result sources(query_params(
          "SELECT p.id, s.measure, s.samples FROM periods p JOIN period_samples s ON s.period_id "
          "= p.id AND s.period_start = p.start_ms WHERE p.start_ms > $3::bigint - $1::bigint AND "
          "p.start_ms < $3::bigint + $1::bigint AND s.period_start > $3::bigint - $1::bigint AND "
          "s.period_start < $3::bigint + $1::bigint AND p.jvm_id = $4 AND (p.start_ms / "
          "$1::bigint) * $1::bigint = $3::bigint AND ((p.resolution_ms < $1::bigint AND p.end_ms "
          "< $2::bigint) OR p.id = $5::bigint)",
          {r, c, start, buckets.text(i, 1), id}));
      std::map<int64_t, std::vector<StackWeight>> merged;
      for (int k = 0; k < sources.rows(); ++k) {
        auto& into = merged[sources.integer(k, 1)];
        into = merge_samples(into, decode(sources, k, 0, 2));
      }
      for (const auto& [measure, samples] : merged)
        rows.push_back(samples_row(start, buckets.integer(i, 0), measure, samples));
      if (rows.size() >= 1000) {
        put_samples(rows);
        rows.clear();
      }
    }
    put_samples(rows);
    exec(
        "DELETE FROM period_samples s USING periods p WHERE s.period_id = p.id AND "
        "s.period_start = p.start_ms AND p.resolution_ms < " +
        r + " AND p.end_ms < " + c);
    return affected("DELETE FROM periods WHERE resolution_ms < " + r + " AND end_ms < " + c);
  }

  std::string name_;
  PGconn* conn_ = nullptr;
  std::set<int64_t> partitions_;
  std::unordered_map<std::string, int64_t> jvm_ids_, frame_ids_, stack_ids_;
  StackIdCache stack_by_frames_;
  std::unordered_map<int64_t, std::vector<std::string>> stack_frames_;
  std::unordered_map<int64_t, std::string> frame_names_;
};

}  // namespace

std::unique_ptr<Backend> open_postgres_backend(const std::string& uri) {
  return std::make_unique<PostgresBackend>(uri);
}

}  // namespace store
