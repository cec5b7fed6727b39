// SPDX-License-Identifier: Apache-2.0
// The SQLite backend: one file in WAL mode (readers never wait for the writer), synchronous=NORMAL
// (a committed transaction survives the process being killed; a power cut may lose the last
// ones, never corrupt the file). A file that is not a SQLite database, or a database that is not
// a profile store, is an error and is left as it is.
#include <sqlite3.h>

#include <cstdio>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "hours.h"
#include "measure_codes.h"
#include "retention_sql.h"
#include "sample_codec.h"
#include "sqlite_schema.h"
#include "stack_codec.h"
#include "store_backend.h"

namespace store {
namespace {

class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql, const std::string& where) : db_(db), where_(where) {
    if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) !=
        SQLITE_OK)
      throw StoreError(where_ + ": " + sqlite3_errmsg(db));
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, int64_t v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }
  Statement& bind(int i, std::string_view v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& bind_blob(int i, std::string_view v) {
    sqlite3_bind_blob(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  // true while there is a row.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw StoreError(where_ + ": " + sqlite3_errmsg(db_));
  }
  void run() {
    while (step()) {
    }
    reset();
  }
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  int64_t integer(int col) { return sqlite3_column_int64(stmt_, col); }
  std::string text(int col) {
    const auto* p = sqlite3_column_text(stmt_, col);
    return p == nullptr
               ? std::string()
               : std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, col));
  }
  // Valid until the next step() or reset().
  std::string_view blob_view(int col) {
    const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, col));
    return p == nullptr ? std::string_view()
                        : std::string_view(p, sqlite3_column_bytes(stmt_, col));
  }
  std::string blob(int col) {
    const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, col));
    return p == nullptr ? std::string() : std::string(p, sqlite3_column_bytes(stmt_, col));
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string where_;
};

std::string labels_json(const std::map<std::string, std::string>& labels) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : labels) j[k] = v;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::map<std::string, std::string> labels_from_json(const std::string& text) {
  std::map<std::string, std::string> out;
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return out;
  for (const auto& [k, v] : j.items())
    if (v.is_string()) out[k] = v.get<std::string>();
  return out;
}

// The first bytes of every SQLite 3 database file.
constexpr char kSqliteMagic[] = "SQLite format 3";

class SqliteBackend final : public Backend {
 public:
  explicit SqliteBackend(const std::string& path) : path_(path) {
    check_header();
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
        SQLITE_OK) {
      const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      throw StoreError("cannot open the profile store " + path + ": " + msg);
    }
    try {
      sqlite3_busy_timeout(db_, 10000);
      // Checked before WAL mode is set: setting it writes to the file's header.
      check_is_store();
      exec("PRAGMA journal_mode=WAL");
      exec("PRAGMA synchronous=NORMAL");
      prepare_schema();
    } catch (...) {
      sqlite3_close(db_);
      throw;
    }
  }
  ~SqliteBackend() override {
    // Prepared statements first: a connection with live statements does not close.
    for (auto* st :
         {&insert_jvm_, &select_jvm_, &insert_label_, &insert_frame_, &select_frame_,
          &insert_stack_, &select_stack_, &insert_period_, &insert_samples_, &insert_hour_})
      st->reset();
    sqlite3_close(db_);
  }

  std::string describe() const override { return "sqlite " + path_; }

  void write(const std::vector<Period>& batch) override {
    exec("BEGIN IMMEDIATE");
    try {
      for (const Period& p : batch) write_period(p);
      add_to_hours();
      exec("COMMIT");
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      hour_adds_.clear();
      // Ids cached during the failed transaction name rows that no longer exist.
      jvm_ids_.clear();
      frame_ids_.clear();
      stack_ids_.clear();
      stack_by_frames_.clear();
      throw;
    }
  }

  void write_connections(const std::vector<Connection>& batch) override {
    exec("BEGIN IMMEDIATE");
    try {
      // A beginning adds the row once; an end updates it (or adds it, its beginning lost).
      Statement begun(db_,
                      "INSERT INTO connections(jvm_id, connection, collector, connected_ms, "
                      "ended_ms, end_cause, dropped_events, dropped_bytes, bytes, periods) "
                      "VALUES(?1, ?2, ?3, ?4, NULL, NULL, ?5, ?6, ?7, ?8) ON CONFLICT(jvm_id, "
                      "connection, connected_ms) DO NOTHING",
                      where("write connections"));
      Statement ended(db_,
                      "INSERT INTO connections(jvm_id, connection, collector, connected_ms, "
                      "ended_ms, end_cause, dropped_events, dropped_bytes, bytes, periods) "
                      "VALUES(?1, ?2, ?3, ?4, ?9, ?10, ?5, ?6, ?7, ?8) ON CONFLICT(jvm_id, "
                      "connection, connected_ms) DO UPDATE SET ended_ms = excluded.ended_ms, "
                      "end_cause = excluded.end_cause, dropped_events = excluded.dropped_events, "
                      "dropped_bytes = excluded.dropped_bytes, bytes = excluded.bytes, periods = "
                      "excluded.periods",
                      where("write connections"));
      for (const Connection& c : batch) {
        Statement& st = c.ended_ms == 0 ? begun : ended;
        st.bind(1, jvm_id(c.jvm)).bind(2, c.connection).bind(3, c.collector);
        st.bind(4, c.connected_ms).bind(5, static_cast<int64_t>(c.dropped_events));
        st.bind(6, static_cast<int64_t>(c.dropped_bytes)).bind(7, static_cast<int64_t>(c.bytes));
        st.bind(8, static_cast<int64_t>(c.periods));
        if (c.ended_ms != 0) st.bind(9, c.ended_ms).bind(10, c.end_cause);
        st.run();
      }
      exec("COMMIT");
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      jvm_ids_.clear();
      throw;
    }
  }

  std::vector<Connection> connections(const std::vector<JvmIdentity>& jvms,
                                      size_t per_jvm) override {
    Statement st(db_,
                 "SELECT * FROM (SELECT c.connection, c.collector, c.connected_ms, "
                 "COALESCE(c.ended_ms, 0), COALESCE(c.end_cause, ''), c.dropped_events, "
                 "c.dropped_bytes, c.bytes, c.periods FROM connections c JOIN jvms j ON j.id = "
                 "c.jvm_id WHERE j.host = ?1 AND j.pid = ?2 AND j.start_ms = ?3 ORDER BY "
                 "c.connection DESC, c.connected_ms DESC LIMIT ?4) ORDER BY 1, 3",
                 where("read connections"));
    std::vector<Connection> out;
    for (const JvmIdentity& j : jvms) {
      st.bind(1, j.host).bind(2, j.pid).bind(3, j.start_ms);
      st.bind(4, static_cast<int64_t>(per_jvm));
      while (st.step()) {
        Connection c;
        c.jvm = j;
        c.connection = st.integer(0);
        c.collector = st.text(1);
        c.connected_ms = st.integer(2);
        c.ended_ms = st.integer(3);
        c.end_cause = st.text(4);
        c.dropped_events = static_cast<uint64_t>(st.integer(5));
        c.dropped_bytes = static_cast<uint64_t>(st.integer(6));
        c.bytes = static_cast<uint64_t>(st.integer(7));
        c.periods = static_cast<uint64_t>(st.integer(8));
        out.push_back(std::move(c));
      }
      st.reset();
    }
    return out;
  }

  std::vector<profiles::Stack> query(const Query& q) override {
    // The blobs are decoded and added up here: SQLite cannot look inside them. The whole hours
    // of the range come from hour_samples (one blob per JVM-hour), the ends from the periods.
    const std::string jvms = jvm_filter(q.match);
    const int64_t code = measure_code(q.measure);
    std::unordered_map<int64_t, uint64_t> weights;
    auto add_periods = [&](int64_t from, int64_t to) {
      if (from >= to) return;
      Statement st(db_,
                   "SELECT p.id, s.samples FROM periods p JOIN period_samples s ON s.period_id = "
                   "p.id AND s.measure = ?1 WHERE p.start_ms >= ?2 AND p.start_ms < ?3" +
                       jvms,
                   where("query"));
      st.bind(1, code).bind(2, from).bind(3, to);
      while (st.step())
        for (const StackWeight& s : decode(st.integer(0), st.blob_view(1)))
          weights[s.stack_id] += s.weight;
    };
    const int64_t first_hour = hour_ceil(q.from_ms), end_hour = hour_floor(q.to_ms);
    if (first_hour < end_hour) {
      Statement st(db_,
                   "SELECT p.hour_ms, p.samples FROM hour_samples p WHERE p.measure = ?1 AND "
                   "p.hour_ms >= ?2 AND p.hour_ms < ?3" +
                       jvms,
                   where("query"));
      st.bind(1, code).bind(2, first_hour).bind(3, end_hour);
      while (st.step())
        for (const StackWeight& s : decode_hour(st.integer(0), st.blob_view(1)))
          weights[s.stack_id] += s.weight;
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
    Statement st(db_,
                 "SELECT j.host, j.pid, j.main, j.jvm_version, j.start_ms, j.labels, "
                 "MIN(p.start_ms), MAX(p.end_ms), COUNT(p.id) FROM jvms j JOIN periods p ON "
                 "p.jvm_id = j.id GROUP BY j.id ORDER BY j.host, j.pid, j.start_ms",
                 where("list JVMs"));
    std::vector<StoredJvm> out;
    while (st.step()) {
      StoredJvm j;
      j.identity = {st.text(0), st.integer(1), st.text(2),
                    st.text(3), st.integer(4), labels_from_json(st.text(5))};
      j.first_ms = st.integer(6);
      j.last_ms = st.integer(7);
      j.periods = static_cast<uint64_t>(st.integer(8));
      out.push_back(std::move(j));
    }
    return out;
  }

  std::map<std::string, std::vector<std::string>> labels() override {
    Statement st(db_, "SELECT DISTINCT key, value FROM labels ORDER BY key, value",
                 where("list labels"));
    std::map<std::string, std::vector<std::string>> out;
    while (st.step()) out[st.text(0)].push_back(st.text(1));
    return out;
  }

  std::vector<TimelinePoint> timeline(const Query& q, int64_t bucket_ms,
                                      const std::string& group_by) override {
    if (bucket_ms <= 0) throw StoreError("a timeline's bucket must be longer than 0 ms");
    std::string sql =
        "SELECT (p.start_ms / ?4) * ?4, COALESCE(l.value, ''), SUM(s.total) FROM periods p "
        "JOIN period_samples s ON s.period_id = p.id AND s.measure = ?1 LEFT JOIN labels l ON "
        "l.jvm_id = p.jvm_id AND l.key = ?5 WHERE p.start_ms >= ?2 AND p.start_ms < ?3" +
        jvm_filter(q.match) + " GROUP BY 1, 2 ORDER BY 1, 2";
    Statement st(db_, sql, where("timeline"));
    st.bind(1, measure_code(q.measure)).bind(2, q.from_ms).bind(3, q.to_ms).bind(4, bucket_ms);
    st.bind(5, group_by);
    std::vector<TimelinePoint> out;
    while (st.step())
      out.push_back({st.integer(0), st.text(1), static_cast<uint64_t>(st.integer(2))});
    return out;
  }

  std::map<profiles::Measure, std::vector<TimelinePoint>> timelines(
      const Query& q, int64_t bucket_ms, const std::string& group_by) override {
    if (bucket_ms <= 0) throw StoreError("a timeline's bucket must be longer than 0 ms");
    std::string sql =
        "SELECT s.measure, (p.start_ms / ?3) * ?3, COALESCE(l.value, ''), SUM(s.total) FROM "
        "periods p JOIN period_samples s ON s.period_id = p.id LEFT JOIN labels l ON l.jvm_id = "
        "p.jvm_id AND l.key = ?4 WHERE p.start_ms >= ?1 AND p.start_ms < ?2" +
        jvm_filter(q.match) + " GROUP BY 1, 2, 3 ORDER BY 1, 2, 3";
    Statement st(db_, sql, where("timelines"));
    st.bind(1, q.from_ms).bind(2, q.to_ms).bind(3, bucket_ms).bind(4, group_by);
    std::map<profiles::Measure, std::vector<TimelinePoint>> out;
    while (st.step())
      if (const auto m = measure_from_code(st.integer(0)))
        out[*m].push_back({st.integer(1), st.text(2), static_cast<uint64_t>(st.integer(3))});
    return out;
  }

  MaintenanceResult maintain(const RetentionPolicy& policy, int64_t now_ms) override {
    MaintenanceResult r;
    exec("BEGIN IMMEDIATE");
    try {
      if (policy.retention_ms > 0) {
        const int64_t cut = now_ms - policy.retention_ms;
        Statement del_samples(
            db_,
            "DELETE FROM period_samples WHERE period_id IN (SELECT id FROM periods WHERE end_ms < "
            "?1)",
            where("retention"));
        del_samples.bind(1, cut).run();
        Statement del(db_, "DELETE FROM periods WHERE end_ms < ?1", where("retention"));
        del.bind(1, cut).run();
        r.periods_deleted += static_cast<uint64_t>(sqlite3_changes(db_));
        // The hours that lost periods (every hour before the cut's) are made again from what is
        // left. Downsampling below needs nothing: it merges within an hour, so hours keep their
        // sums.
        if (r.periods_deleted > 0) rebuild_hours_before(hour_ceil(cut));
        // A connection without an end (its collector stopped first) goes by its beginning.
        Statement del_connections(
            db_, "DELETE FROM connections WHERE COALESCE(ended_ms, connected_ms) < ?1",
            where("retention"));
        del_connections.bind(1, cut).run();
        r.connections_deleted += static_cast<uint64_t>(sqlite3_changes(db_));
      }
      r.periods_merged += downsample(60'000, now_ms - policy.minute_after_ms);
      r.periods_merged += downsample(3'600'000, now_ms - policy.hour_after_ms);
      // Stacks nothing refers to any more: only deleting periods can leave some (merging keeps
      // every stack), and finding them reads every blob, so only then. Frames stay: they are
      // few and small.
      if (r.periods_deleted > 0) delete_unreferenced_stacks();
      if (r.periods_deleted > 0 || r.periods_merged > 0 || r.connections_deleted > 0) {
        exec(kDeleteUnreferencedLabels);
        exec(kDeleteUnreferencedJvms);
      }
      exec("COMMIT");
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
    jvm_ids_.clear();
    stack_ids_.clear();
    stack_by_frames_.clear();
    stack_frames_.clear();
    return r;
  }

 private:
  std::string where(std::string_view what) const { return path_ + " (" + std::string(what) + ")"; }

  void exec(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : sqlite3_errmsg(db_);
      sqlite3_free(err);
      throw StoreError("profile store " + path_ + ": " + msg);
    }
  }

  // A file with other content is refused before SQLite sees it: nothing of it is overwritten.
  void check_header() {
    std::FILE* f = std::fopen(path_.c_str(), "rb");
    if (f == nullptr) return;  // created on first use
    char head[16] = {};
    const size_t n = std::fread(head, 1, sizeof head, f);
    std::fclose(f);
    if (n == 0) return;
    if (n < sizeof head || std::memcmp(head, kSqliteMagic, sizeof kSqliteMagic) != 0)
      throw StoreError(path_ + " is not a SQLite database, so not a profile store (left as it is)");
  }

  // Empty, or holding a meta table: anything else is someone else's database.
  bool check_is_store() {
    Statement tables(db_, "SELECT COUNT(*) FROM sqlite_master", where("open"));
    tables.step();
    const int64_t objects = tables.integer(0);
    Statement meta(db_, "SELECT COUNT(*) FROM sqlite_master WHERE type='table' AND name='meta'",
                   where("open"));
    meta.step();
    if (meta.integer(0) == 0 && objects != 0)
      throw StoreError(path_ + " is a SQLite database but not a profile store (left as it is)");
    return meta.integer(0) != 0;
  }

  void prepare_schema() {
    exec("BEGIN IMMEDIATE");
    try {
      if (!check_is_store()) exec(std::string(kSqliteSchemaV1).c_str());
      int version = read_version();
      if (version > kSqliteSchemaVersion)
        throw StoreError(path_ + " has schema version " + std::to_string(version) +
                         ", newer than this jvmprof's " + std::to_string(kSqliteSchemaVersion));
      for (; version < kSqliteSchemaVersion; version = read_version()) {
        exec(std::string(kSqliteMigrations[version - 1]).c_str());
        if (version == 2) {
          samples_rows_to_blobs();
          exec(std::string(kSqliteV3Finish).c_str());
        } else if (version == 3) {
          rebuild_hours_before(std::numeric_limits<int64_t>::max());
          exec(std::string(kSqliteV4Finish).c_str());
        }
      }
      exec("COMMIT");
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }

  int read_version() {
    Statement v(db_, "SELECT value FROM meta WHERE key='schema_version'", where("open"));
    if (!v.step()) throw StoreError(path_ + " has no schema version: not a profile store");
    const int version = std::atoi(v.text(0).c_str());
    if (version < 1) throw StoreError(path_ + " has a malformed schema version");
    return version;
  }

  int64_t jvm_id(const JvmIdentity& j) {
    const std::string key =
        j.host + '\0' + std::to_string(j.pid) + '\0' + std::to_string(j.start_ms);
    if (auto it = jvm_ids_.find(key); it != jvm_ids_.end()) return it->second;
    if (!insert_jvm_) {
      insert_jvm_ = std::make_unique<Statement>(
          db_,
          "INSERT INTO jvms(host, pid, main, jvm_version, start_ms, labels) VALUES(?1, ?2, ?3, ?4, "
          "?5, ?6) ON CONFLICT(host, pid, start_ms) DO NOTHING",
          where("write"));
      select_jvm_ = std::make_unique<Statement>(
          db_, "SELECT id FROM jvms WHERE host = ?1 AND pid = ?2 AND start_ms = ?3",
          where("write"));
      insert_label_ = std::make_unique<Statement>(
          db_, "INSERT OR IGNORE INTO labels(jvm_id, key, value) VALUES(?1, ?2, ?3)",
          where("write"));
    }
    insert_jvm_->bind(1, j.host).bind(2, j.pid).bind(3, j.main).bind(4, j.jvm_version);
    insert_jvm_->bind(5, j.start_ms).bind(6, labels_json(j.labels)).run();
    const bool created = sqlite3_changes(db_) > 0;
    select_jvm_->bind(1, j.host).bind(2, j.pid).bind(3, j.start_ms);
    if (!select_jvm_->step()) throw StoreError(where("write") + ": JVM row missing");
    const int64_t id = select_jvm_->integer(0);
    select_jvm_->reset();
    if (created)
      for (const auto& [k, v] : j.labels) insert_label_->bind(1, id).bind(2, k).bind(3, v).run();
    jvm_ids_[key] = id;
    return id;
  }

  int64_t frame_id(const std::string& name) {
    if (auto it = frame_ids_.find(name); it != frame_ids_.end()) return it->second;
    if (!insert_frame_) {
      insert_frame_ = std::make_unique<Statement>(
          db_, "INSERT OR IGNORE INTO frames(name) VALUES(?1)", where("write"));
      select_frame_ =
          std::make_unique<Statement>(db_, "SELECT id FROM frames WHERE name = ?1", where("write"));
    }
    insert_frame_->bind(1, name).run();
    select_frame_->bind(1, name);
    if (!select_frame_->step()) throw StoreError(where("write") + ": frame row missing");
    const int64_t id = select_frame_->integer(0);
    select_frame_->reset();
    frame_ids_.emplace(name, id);
    return id;
  }

  int64_t stack_id(const std::vector<std::string>& frames) {
    return stack_by_frames_.get(frames, [this](const auto& f) { return resolve_stack(f); });
  }

  int64_t resolve_stack(const std::vector<std::string>& frames) {
    std::vector<int64_t> ids;
    ids.reserve(frames.size());
    for (const std::string& f : frames) ids.push_back(frame_id(f));
    const std::string blob = encode_frame_ids(ids);
    if (auto it = stack_ids_.find(blob); it != stack_ids_.end()) return it->second;
    if (!insert_stack_) {
      insert_stack_ = std::make_unique<Statement>(
          db_, "INSERT OR IGNORE INTO stacks(frame_ids) VALUES(?1)", where("write"));
      select_stack_ = std::make_unique<Statement>(db_, "SELECT id FROM stacks WHERE frame_ids = ?1",
                                                  where("write"));
    }
    insert_stack_->bind_blob(1, blob).run();
    select_stack_->bind_blob(1, blob);
    if (!select_stack_->step()) throw StoreError(where("write") + ": stack row missing");
    const int64_t id = select_stack_->integer(0);
    select_stack_->reset();
    stack_ids_.emplace(blob, id);
    return id;
  }

  void write_period(const Period& p) {
    const int64_t jvm = jvm_id(p.jvm);
    if (!insert_period_) {
      insert_period_ = std::make_unique<Statement>(
          db_, "INSERT INTO periods(jvm_id, start_ms, end_ms, resolution_ms) VALUES(?1, ?2, ?3, 0)",
          where("write"));
    }
    insert_period_->bind(1, jvm).bind(2, p.start_ms).bind(3, p.end_ms).run();
    const int64_t period = sqlite3_last_insert_rowid(db_);
    for (const auto& [measure, stacks] : p.stacks) {
      // Stacks that differ only in what is not stored (line numbers, threads) are one entry.
      std::vector<StackWeight> samples;
      samples.reserve(stacks.size());
      for (const profiles::Stack& s : stacks)
        if (s.weight > 0 && !s.frames.empty()) samples.push_back({stack_id(s.frames), s.weight});
      sum_by_stack(samples);
      if (!samples.empty()) put_samples(period, measure_code(measure), samples);
      auto& hour = hour_adds_[{hour_floor(p.start_ms), jvm, measure_code(measure)}];
      hour.insert(hour.end(), samples.begin(), samples.end());
    }
  }

  // The batch's samples added into hour_samples (in write()'s transaction): each (hour, JVM,
  // measure) read, merged and written once per batch.
  void add_to_hours() {
    Statement read(db_,
                   "SELECT samples FROM hour_samples WHERE hour_ms = ?1 AND jvm_id = ?2 AND "
                   "measure = ?3",
                   where("write"));
    for (auto& [key, samples] : hour_adds_) {
      const auto& [hour, jvm, measure] = key;
      sum_by_stack(samples);
      read.bind(1, hour).bind(2, jvm).bind(3, measure);
      if (read.step()) samples = merge_samples(decode_hour(hour, read.blob_view(0)), samples);
      read.reset();
      put_hour(hour, jvm, measure, samples);
    }
    hour_adds_.clear();
  }

  void put_hour(int64_t hour, int64_t jvm, int64_t measure,
                const std::vector<StackWeight>& samples) {
    if (!insert_hour_)
      insert_hour_ = std::make_unique<Statement>(
          db_,
          "INSERT OR REPLACE INTO hour_samples(hour_ms, jvm_id, measure, total, samples) "
          "VALUES(?1, ?2, ?3, ?4, ?5)",
          where("write"));
    insert_hour_->bind(1, hour).bind(2, jvm).bind(3, measure);
    insert_hour_->bind(4, static_cast<int64_t>(total_weight(samples)));
    insert_hour_->bind_blob(5, encode_samples(samples)).run();
  }

  // hour_samples before `end_hour` (an hour's start) made again from the periods: after
  // retention deleted some, and by the 3 -> 4 migration. The periods are read in (JVM, start)
  // order, so that one (JVM, hour) at a time is held in memory.
  void rebuild_hours_before(int64_t end_hour) {
    Statement del(db_, "DELETE FROM hour_samples WHERE hour_ms < ?1", where("rebuild hours"));
    del.bind(1, end_hour).run();
    Statement periods(db_,
                      "SELECT p.id, p.jvm_id, p.start_ms, s.measure, s.samples FROM periods p JOIN "
                      "period_samples s ON s.period_id = p.id WHERE p.start_ms < ?1 ORDER BY "
                      "p.jvm_id, p.start_ms",
                      where("rebuild hours"));
    periods.bind(1, end_hour);
    int64_t jvm = -1, hour = 0;
    std::map<int64_t, std::vector<StackWeight>> merged;  // by measure
    auto flush = [&] {
      for (const auto& [measure, samples] : merged) put_hour(hour, jvm, measure, samples);
      merged.clear();
    };
    while (periods.step()) {
      if (periods.integer(1) != jvm || hour_floor(periods.integer(2)) != hour) {
        flush();
        jvm = periods.integer(1);
        hour = hour_floor(periods.integer(2));
      }
      auto& into = merged[periods.integer(3)];
      into = merge_samples(into, decode(periods.integer(0), periods.blob_view(4)));
    }
    flush();
  }

  std::vector<StackWeight> decode_hour(int64_t hour, std::string_view blob) {
    try {
      return decode_samples(blob);
    } catch (const StoreError& e) {
      throw StoreError(where("read hour " + std::to_string(hour)) + ": " + e.what());
    }
  }

  void put_samples(int64_t period, int64_t measure, const std::vector<StackWeight>& samples) {
    if (!insert_samples_)
      insert_samples_ = std::make_unique<Statement>(
          db_,
          "INSERT OR REPLACE INTO period_samples(period_id, measure, total, samples) VALUES(?1, "
          "?2, ?3, ?4)",
          where("write"));
    insert_samples_->bind(1, period).bind(2, measure);
    insert_samples_->bind(3, static_cast<int64_t>(total_weight(samples)));
    insert_samples_->bind_blob(4, encode_samples(samples)).run();
  }

  std::vector<StackWeight> decode(int64_t period, std::string_view blob) {
    try {
      return decode_samples(blob);
    } catch (const StoreError& e) {
      throw StoreError(where("read period " + std::to_string(period)) + ": " + e.what());
    }
  }

  // 2 -> 3: each (period, measure)'s sample rows become one blob.
  void samples_rows_to_blobs() {
    Statement rows(db_,
                   "SELECT period_id, measure, stack_id, weight FROM samples WHERE weight > 0 "
                   "ORDER BY period_id, measure, stack_id",
                   where("migrate to version 3"));
    std::vector<StackWeight> samples;
    int64_t period = -1, measure = -1;
    auto flush = [&] {
      if (!samples.empty()) put_samples(period, measure, samples);
      samples.clear();
    };
    while (rows.step()) {
      if (rows.integer(0) != period || rows.integer(1) != measure) {
        flush();
        period = rows.integer(0);
        measure = rows.integer(1);
      }
      samples.push_back({rows.integer(2), static_cast<uint64_t>(rows.integer(3))});
    }
    flush();
  }

  void delete_unreferenced_stacks() {
    std::unordered_set<int64_t> used;
    Statement all(db_, "SELECT period_id, samples FROM period_samples", where("retention"));
    while (all.step())
      for (const StackWeight& s : decode(all.integer(0), all.blob_view(1))) used.insert(s.stack_id);
    Statement ids(db_, "SELECT id FROM stacks", where("retention"));
    std::vector<int64_t> unused;
    while (ids.step())
      if (!used.count(ids.integer(0))) unused.push_back(ids.integer(0));
    Statement del(db_, "DELETE FROM stacks WHERE id = ?1", where("retention"));
    for (int64_t id : unused) del.bind(1, id).run();
  }

  // The frames of a stored stack, root first (cached: stack and frame rows never change, and
  // their ids are never reused).
  std::vector<std::string> stack_frames(int64_t id) {
    if (auto it = stack_frames_.find(id); it != stack_frames_.end()) return it->second;
    Statement st(db_, "SELECT frame_ids FROM stacks WHERE id = ?1", where("read stack"));
    st.bind(1, id);
    std::vector<int64_t> ids;
    if (!st.step() || !decode_frame_ids(st.blob(0), ids))
      throw StoreError(where("read stack") + ": stack " + std::to_string(id) +
                       " is missing or malformed");
    std::vector<std::string> frames;
    for (int64_t f : ids) frames.push_back(frame_name(f));
    stack_frames_[id] = frames;
    return frames;
  }

  const std::string& frame_name(int64_t id) {
    if (auto it = frame_names_.find(id); it != frame_names_.end()) return it->second;
    Statement st(db_, "SELECT name FROM frames WHERE id = ?1", where("read frame"));
    st.bind(1, id);
    if (!st.step())
      throw StoreError(where("read frame") + ": frame " + std::to_string(id) + " is missing");
    return frame_names_[id] = st.text(0);
  }

  // " AND p.jvm_id IN (...)" for the JVMs every matcher holds for; "" without matchers.
  std::string jvm_filter(const std::vector<LabelMatcher>& match) {
    if (match.empty()) return "";
    std::string sql = "SELECT jvm_id FROM labels WHERE key = ?1 AND value = ?2";
    for (size_t i = 1; i < match.size(); ++i)
      sql += " INTERSECT SELECT jvm_id FROM labels WHERE key = ?" + std::to_string(2 * i + 1) +
             " AND value = ?" + std::to_string(2 * i + 2);
    Statement st(db_, sql, where("match labels"));
    for (size_t i = 0; i < match.size(); ++i)
      st.bind(static_cast<int>(2 * i + 1), match[i].key)
          .bind(static_cast<int>(2 * i + 2), match[i].value);
    std::string ids;
    while (st.step()) ids += (ids.empty() ? "" : ",") + std::to_string(st.integer(0));
    return " AND p.jvm_id IN (" + ids + ")";
  }

  // Folds the periods finer than `resolution` that ended before `cut` into buckets of
  // `resolution` per JVM, adding weights; returns how many periods were folded.
  uint64_t downsample(int64_t resolution, int64_t cut) {
    Statement buckets(db_,
                      "INSERT OR IGNORE INTO periods(jvm_id, start_ms, end_ms, resolution_ms) "
                      "SELECT jvm_id, (start_ms / ?1) * ?1, (start_ms / ?1) * ?1 + ?1, ?1 FROM "
                      "periods WHERE resolution_ms < ?1 AND end_ms < ?2 GROUP BY 1, 2",
                      where("downsample"));
    buckets.bind(1, resolution).bind(2, cut).run();
    // Each bucket's blobs merged in C++: its own (a bucket may exist from an earlier run) and
    // those of the periods folded into it.
    Statement targets(db_,
                      "SELECT DISTINCT b.id, b.jvm_id, b.start_ms FROM periods p JOIN periods b ON "
                      "b.jvm_id = p.jvm_id AND b.resolution_ms = ?1 AND b.start_ms = (p.start_ms "
                      "/ ?1) * ?1 WHERE p.resolution_ms < ?1 AND p.end_ms < ?2",
                      where("downsample"));
    targets.bind(1, resolution).bind(2, cut);
    struct Bucket {
      int64_t id, jvm, start;
    };
    std::vector<Bucket> todo;
    while (targets.step())
      todo.push_back({targets.integer(0), targets.integer(1), targets.integer(2)});
    // The start range (widened by one bucket each way for integer division's rounding towards
    // zero) lets SQLite use periods_by_time; the division picks the bucket exactly.
    Statement sources(db_,
                      "SELECT s.period_id, s.measure, s.samples FROM periods p JOIN period_samples "
                      "s ON s.period_id = p.id WHERE p.start_ms > ?3 - ?1 AND p.start_ms < ?3 + ?1 "
                      "AND p.jvm_id = ?4 AND (p.start_ms / ?1) * ?1 = ?3 AND ((p.resolution_ms < "
                      "?1 AND p.end_ms < ?2) OR p.id = ?5)",
                      where("downsample"));
    for (const Bucket& b : todo) {
      std::map<int64_t, std::vector<StackWeight>> merged;
      sources.bind(1, resolution).bind(2, cut).bind(3, b.start).bind(4, b.jvm).bind(5, b.id);
      while (sources.step()) {
        auto& into = merged[sources.integer(1)];
        into = merge_samples(into, decode(sources.integer(0), sources.blob_view(2)));
      }
      sources.reset();
      for (const auto& [measure, samples] : merged) put_samples(b.id, measure, samples);
    }
    Statement del_samples(db_,
                          "DELETE FROM period_samples WHERE period_id IN (SELECT id FROM periods "
                          "WHERE resolution_ms < ?1 AND end_ms < ?2)",
                          where("downsample"));
    del_samples.bind(1, resolution).bind(2, cut).run();
    Statement del(db_, "DELETE FROM periods WHERE resolution_ms < ?1 AND end_ms < ?2",
                  where("downsample"));
    del.bind(1, resolution).bind(2, cut).run();
    return static_cast<uint64_t>(sqlite3_changes(db_));
  }

  std::string path_;
  sqlite3* db_ = nullptr;
  std::unordered_map<std::string, int64_t> jvm_ids_, frame_ids_, stack_ids_;
  StackIdCache stack_by_frames_;
  std::unordered_map<int64_t, std::vector<std::string>> stack_frames_;
  std::unordered_map<int64_t, std::string> frame_names_;
  std::unique_ptr<Statement> insert_jvm_, select_jvm_, insert_label_, insert_frame_, select_frame_,
      insert_stack_, select_stack_, insert_period_, insert_samples_, insert_hour_;
  // What the batch being written adds to each (hour, JVM, measure), summed by stack when written.
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::vector<StackWeight>> hour_adds_;
};

}  // namespace

std::unique_ptr<Backend> open_sqlite_backend(const std::string& path) {
  return std::make_unique<SqliteBackend>(path);
}

}  // namespace store
