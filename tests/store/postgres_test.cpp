// SPDX-License-Identifier: Apache-2.0
// The PostgreSQL profile store against a real PostgreSQL 15 the test starts itself (initdb and
// pg_ctl in a temporary directory, as the postgres user when run as root, a Unix socket only,
// stopped at the end): two collectors write into one database and a query through either sees
// both; downsampling keeps sums; a store of the first schema version is migrated. Skipped, with
// the reason printed, when postgresql-15 is not installed.
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include "connection_checks.h"
#include "postgres_schema.h"
#include "store.h"

namespace {

using profiles::Measure;
namespace fs = std::filesystem;

constexpr int64_t kHour = 3'600'000;
constexpr int64_t kDay = 24 * kHour;
constexpr int64_t kNow = 1'795'780'800'000;  // 2026-11-27T12:00:00Z
const char kBin[] = "/usr/lib/postgresql/15/bin";

// One PostgreSQL server for the whole test program.
class PostgresServer : public ::testing::Environment {
 public:
  static inline std::string skip_reason, socket_dir;

  void SetUp() override {
    if (!fs::exists(std::string(kBin) + "/initdb")) {
      skip_reason = std::string(kBin) + "/initdb not found: install postgresql-15";
      return;
    }
    std::string t = (fs::temp_directory_path() / "pgstore.XXXXXX").string();
    dir_ = ::mkdtemp(t.data());
    if (::geteuid() == 0) {
      // initdb refuses to run as root: the server runs as postgres, which owns the directory.
      const passwd* pw = ::getpwnam("postgres");
      if (pw == nullptr) {
        skip_reason = "running as root and there is no postgres user";
        return;
      }
      if (::chown(dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
        skip_reason = "cannot give " + dir_ + " to postgres";
        return;
      }
      as_ = "runuser -u postgres -- ";
    }
    const std::string data = dir_ + "/data";
    if (run(as_ + kBin + "/initdb -A trust -U postgres -D " + data + " >" + dir_ +
            "/initdb.log 2>&1") != 0) {
      failure_ = "initdb failed, see " + dir_ + "/initdb.log";
      return;
    }
    // No TCP port: a socket in our own directory cannot collide with another server.
    if (run(as_ + kBin + "/pg_ctl -D " + data + " -w -t 60 -l " + dir_ +
            "/server.log -o \"-c listen_addresses='' -k " + dir_ + " -p 5432\" start >/dev/null") !=
        0) {
      failure_ = "pg_ctl start failed, see " + dir_ + "/server.log";
      return;
    }
    started_ = true;
    socket_dir = dir_;
  }

  void TearDown() override {
    if (started_) run(as_ + kBin + "/pg_ctl -D " + dir_ + "/data -w -m fast stop >/dev/null");
    if (!dir_.empty() && failure_.empty()) fs::remove_all(dir_);
  }

  static std::string uri(const std::string& db) {
    return "postgresql://postgres@/" + db + "?host=" + socket_dir + "&port=5432";
  }

  std::string failure_;

 private:
  static int run(const std::string& cmd) { return std::system(cmd.c_str()); }
  std::string dir_, as_;
  bool started_ = false;
};

PostgresServer* server = nullptr;

void sql(const std::string& db, const std::string& text) {
  PGconn* c = PQconnectdb(PostgresServer::uri(db).c_str());
  ASSERT_EQ(PQstatus(c), CONNECTION_OK) << PQerrorMessage(c);
  PGresult* r = PQexec(c, text.c_str());
  const auto status = PQresultStatus(r);
  EXPECT_TRUE(status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) << PQresultErrorMessage(r);
  PQclear(r);
  PQfinish(c);
}

// A fresh database per test.
std::string database(const std::string& name) {
  sql("postgres", "DROP DATABASE IF EXISTS " + name);
  sql("postgres", "CREATE DATABASE " + name);
  return PostgresServer::uri(name);
}

#define REQUIRE_SERVER()                                                 \
  do {                                                                   \
    ASSERT_TRUE(server->failure_.empty()) << server->failure_;           \
    if (!PostgresServer::skip_reason.empty()) {                          \
      std::printf("skipped: %s\n", PostgresServer::skip_reason.c_str()); \
      GTEST_SKIP() << PostgresServer::skip_reason;                       \
    }                                                                    \
  } while (0)

profiles::Stack stack(std::vector<std::string> frames, uint64_t weight) {
  profiles::Stack s;
  s.frames = std::move(frames);
  s.weight = weight;
  s.trace_frames = s.frames.size();
  return s;
}

store::Period period(const std::string& host, const std::string& service, int64_t start,
                     uint64_t k) {
  store::Period p;
  p.jvm = {host, 100, "demo.App", "17", kNow - 10 * kDay, {{"service", service}}};
  p.start_ms = start;
  p.end_ms = start + 10'000;
  p.stacks[Measure::kCpuSamples] = {stack({"main", host + ".hot"}, 10 + k),
                                    stack({"main", "shared"}, 1 + k % 5)};
  return p;
}

std::map<std::string, uint64_t> folded(const std::vector<profiles::Stack>& stacks) {
  std::map<std::string, uint64_t> out;
  for (const auto& s : stacks) {
    std::string key;
    for (const auto& f : s.frames) key += (key.empty() ? "" : ";") + f;
    out[key] += s.weight;
  }
  return out;
}

store::Query range(int64_t from, int64_t to) {
  store::Query q;
  q.from_ms = from;
  q.to_ms = to;
  return q;
}

TEST(PostgresStore, TwoCollectorsWriteOneDatabaseAndEitherAnswersForBoth) {
  REQUIRE_SERVER();
  const std::string uri = database("two_collectors");
  auto a = store::open_store(uri);
  auto b = store::open_store(uri);
  // Both at once, across a day boundary (two partitions), sharing the "shared" stack.
  const int64_t t0 = kNow - kHour / 2 - 12 * kHour;
  std::thread ta([&] {
    for (uint64_t k = 0; k < 300; ++k)
      a->append(period("alpha", "checkout", t0 + static_cast<int64_t>(k) * 10'000, k));
    a->flush();
  });
  std::thread tb([&] {
    for (uint64_t k = 0; k < 300; ++k)
      b->append(period("beta", "search", t0 + static_cast<int64_t>(k) * 10'000, 3 * k));
    b->flush();
  });
  ta.join();
  tb.join();
  ASSERT_EQ(a->stats().committed, 300u) << a->stats().last_error;
  ASSERT_EQ(b->stats().committed, 300u) << b->stats().last_error;

  std::map<std::string, uint64_t> want;
  for (uint64_t k = 0; k < 300; ++k) {
    want["main;alpha.hot"] += 10 + k;
    want["main;beta.hot"] += 10 + 3 * k;
    want["main;shared"] += (1 + k % 5) + (1 + 3 * k % 5);
  }
  EXPECT_EQ(folded(a->query(range(t0, t0 + kDay))), want);
  EXPECT_EQ(folded(b->query(range(t0, t0 + kDay))), want);
  auto q = range(t0, t0 + kDay);
  q.match = {{"service", "search"}};
  EXPECT_EQ(folded(a->query(q))["main;beta.hot"], want["main;beta.hot"]);
  EXPECT_EQ(folded(a->query(q)).count("main;alpha.hot"), 0u);
  EXPECT_EQ(a->jvms().size(), 2u);
  // A third collector started later sees the same.
  auto c = store::open_store(uri);
  EXPECT_EQ(folded(c->query(range(t0, t0 + kDay))), want);
}

TEST(PostgresStore, DownsamplingKeepsSums) {
  REQUIRE_SERVER();
  auto s = store::open_store(database("downsample"));
  const int64_t hour = (kNow - 3 * kDay) / kHour * kHour;
  for (uint64_t k = 0; k < 360; ++k)
    s->append(period("alpha", "checkout", hour + static_cast<int64_t>(k) * 10'000, k));
  s->flush();
  const auto before = folded(s->query(range(hour, hour + kHour)));
  store::RetentionPolicy policy;
  EXPECT_EQ(s->maintain(policy, kNow).periods_merged, 360u);
  EXPECT_EQ(folded(s->query(range(hour, hour + kHour))), before);
  EXPECT_EQ(s->jvms().at(0).periods, 60u);
  s->maintain(policy, kNow + 5 * kDay);
  EXPECT_EQ(folded(s->query(range(hour, hour + kHour))), before);
  EXPECT_EQ(s->jvms().at(0).periods, 1u);
  policy.retention_ms = kDay;
  EXPECT_EQ(s->maintain(policy, kNow).periods_deleted, 1u);
  EXPECT_TRUE(s->query(range(hour, hour + kHour)).empty());
}

// One number from the database (a count of partitions, rows).
int64_t scalar(const std::string& db, const std::string& text) {
  PGconn* c = PQconnectdb(PostgresServer::uri(db).c_str());
  EXPECT_EQ(PQstatus(c), CONNECTION_OK) << PQerrorMessage(c);
  PGresult* r = PQexec(c, text.c_str());
  EXPECT_EQ(PQresultStatus(r), PGRES_TUPLES_OK) << PQresultErrorMessage(r);
  const int64_t v = PQntuples(r) == 1 ? std::atoll(PQgetvalue(r, 0, 0)) : -1;
  PQclear(r);
  PQfinish(c);
  return v;
}

// Each JVM's connections: recorded at their beginning and end, read back by a store opened
// again (another collector's connection, or a restarted one), bounded by retention
// (connection_checks.h).
TEST(PostgresStore, ConnectionsAreRecordedEndedReadBackAfterReopeningAndExpire) {
  REQUIRE_SERVER();
  const std::string uri = database("connections");
  connection_checks::check_connection_history(
      [&] { return store::open_store(uri); },
      [&](const std::string& t) { return scalar("connections", "SELECT COUNT(*) FROM " + t); },
      kNow);
}

int64_t partitions(const std::string& db, const std::string& table) {
  return scalar(db, "SELECT COUNT(*) FROM pg_inherits WHERE inhparent = '" + table + "'::regclass");
}

uint64_t total(const std::map<std::string, uint64_t>& stacks) {
  uint64_t sum = 0;
  for (const auto& [k, v] : stacks) sum += v;
  return sum;
}

TEST(PostgresStore, RetentionDropsWholeDayPartitionsAndKeepsSums) {
  REQUIRE_SERVER();
  const std::string uri = database("retention_partitions");
  auto a = store::open_store(uri);
  auto b = store::open_store(uri);
  const int64_t d0 = (kNow / kDay - 5) * kDay;  // four UTC days from d0, one partition each
  auto day_periods = [&](int day, int64_t offset, uint64_t seed) {
    for (uint64_t k = 0; k < 30; ++k)
      a->append(
          period("alpha", "checkout", d0 + day * kDay + offset + int64_t(k) * 10'000, seed + k));
  };
  for (int day = 0; day < 4; ++day) day_periods(day, 6 * kHour, 100 * day);
  day_periods(2, 1 * kHour, 7);  // day 2: ends before the cut, deleted row by row
  // Starts on day 1 and ends on day 2, still before the cut: day 1 is wholly older.
  a->append(period("alpha", "checkout", d0 + 2 * kDay - 5'000, 3));
  a->flush();
  b->append(period("beta", "search", d0 + 6 * kHour, 5));  // b now knows day 0's partition
  b->flush();
  ASSERT_EQ(a->stats().committed, 151u) << a->stats().last_error;
  ASSERT_EQ(b->stats().committed, 1u) << b->stats().last_error;
  ASSERT_EQ(partitions("retention_partitions", "periods"), 4);
  ASSERT_EQ(partitions("retention_partitions", "period_samples"), 4);
  const auto kept_before = folded(a->query(range(d0 + 2 * kDay + 3 * kHour, d0 + 4 * kDay)));
  ASSERT_GT(total(kept_before), 0u);

  // The cut at day 2, 03:00: days 0 and 1 go whole, day 2 keeps what ended after the cut.
  const int64_t cut = d0 + 2 * kDay + 3 * kHour;
  store::RetentionPolicy policy;
  policy.retention_ms = kDay;
  EXPECT_EQ(a->maintain(policy, cut + kDay).periods_deleted, 31u + 31u + 30u);
  EXPECT_EQ(partitions("retention_partitions", "periods"), 2);
  EXPECT_EQ(partitions("retention_partitions", "period_samples"), 2);
  EXPECT_EQ(scalar("retention_partitions",
                   "SELECT COUNT(*) FROM periods WHERE end_ms < " + std::to_string(cut)),
            0);
  EXPECT_TRUE(a->query(range(d0, cut)).empty());
  EXPECT_EQ(folded(a->query(range(d0 + 2 * kDay + 3 * kHour, d0 + 4 * kDay))), kept_before);
  EXPECT_EQ(folded(b->query(range(d0, d0 + 4 * kDay))), kept_before);

  // A late period for a dropped day from the collector that had made its partition: written
  // (the partition is made again), not failed.
  b->append(period("beta", "search", d0 + 7 * kHour, 9));
  b->flush();
  EXPECT_EQ(b->stats().committed, 2u) << b->stats().last_error;
  EXPECT_EQ(b->stats().failed, 0u) << b->stats().last_error;
  EXPECT_EQ(total(folded(a->query(range(d0, d0 + kDay)))), 10u + 9 + 1 + 9 % 5);
  EXPECT_EQ(a->maintain(policy, cut + kDay).periods_deleted, 1u);
  EXPECT_EQ(partitions("retention_partitions", "periods"), 2);

  // Downsampling what is left into minutes and hours keeps every sum.
  policy.retention_ms = 30 * kDay;
  EXPECT_GT(a->maintain(policy, d0 + 12 * kDay).periods_merged, 0u);
  EXPECT_EQ(folded(a->query(range(d0 + 2 * kDay, d0 + 4 * kDay))), kept_before);
  EXPECT_EQ(scalar("retention_partitions", "SELECT COUNT(*) FROM periods WHERE resolution_ms = 0"),
            0);
}

TEST(PostgresStore, QueriesOverWholeHoursEqualThePlainMergeOfTheirPeriods) {
  REQUIRE_SERVER();
  const std::string uri = database("hours");
  auto a = store::open_store(uri);
  auto b = store::open_store(uri);
  // Two JVMs over four hours and a bit, across a day boundary; each period also written in
  // part through the other collector later (late periods into hours already written).
  const int64_t h0 = (kNow / kDay - 3) * kDay - 2 * kHour;
  std::vector<store::Period> periods;
  for (int64_t t = h0 + 20 * 60'000; t < h0 + 4 * kHour + 10 * 60'000; t += 10'000) {
    periods.push_back(period("alpha", "checkout", t, static_cast<uint64_t>(t / 10'000 % 89)));
    periods.push_back(period("beta", "search", t, static_cast<uint64_t>(t / 10'000 % 13)));
  }
  for (size_t i = 0; i < periods.size(); ++i) (i % 3 ? a : b)->append(periods[i]);
  a->flush();
  b->flush();
  ASSERT_EQ(a->stats().committed + b->stats().committed, periods.size())
      << a->stats().last_error << b->stats().last_error;
  auto merged = [&](int64_t from, int64_t to, const std::string& service, int64_t ended_after) {
    std::map<std::string, uint64_t> out;
    for (const auto& p : periods)
      if (p.start_ms >= from && p.start_ms < to && p.end_ms >= ended_after &&
          (service.empty() || p.jvm.labels.at("service") == service))
        for (const auto& [k, v] : folded(p.stacks.at(Measure::kCpuSamples))) out[k] += v;
    return out;
  };
  // Windows of 30 minutes never hold a whole hour: the plain merge of the periods.
  auto windows = [&](int64_t from, int64_t to) {
    std::map<std::string, uint64_t> out;
    for (int64_t t = from; t < to; t += kHour / 2)
      for (const auto& [k, v] : folded(a->query(range(t, std::min(to, t + kHour / 2)))))
        out[k] += v;
    return out;
  };
  const std::pair<int64_t, int64_t> ranges[] = {{h0, h0 + 5 * kHour},
                                                {h0 + 25 * 60'000, h0 + 3 * kHour + 7 * 60'000},
                                                {h0 + kHour, h0 + 2 * kHour}};
  for (const auto& [from, to] : ranges) {
    const auto want = merged(from, to, "", INT64_MIN);
    EXPECT_EQ(folded(a->query(range(from, to))), want) << from - h0 << ".." << to - h0;
    EXPECT_EQ(folded(b->query(range(from, to))), want) << from - h0 << ".." << to - h0;
    EXPECT_EQ(windows(from, to), want) << from - h0 << ".." << to - h0;
    auto q = range(from, to);
    q.match = {{"service", "search"}};
    EXPECT_EQ(folded(a->query(q)), merged(from, to, "search", INT64_MIN));
  }
  EXPECT_GT(scalar("hours", "SELECT COUNT(*) FROM hour_samples"), 0);

  // Retention with its cut inside an hour (the day before is dropped whole), then downsampling:
  // whole hours still equal the merge of the periods that were kept.
  const int64_t cut = h0 + 2 * kHour + 17 * 60'000;
  store::RetentionPolicy policy;
  policy.retention_ms = kDay;
  EXPECT_GT(a->maintain(policy, cut + kDay).periods_deleted, 0u);
  EXPECT_EQ(folded(a->query(range(h0, h0 + 5 * kHour))), merged(h0, h0 + 5 * kHour, "", cut));
  policy.retention_ms = 0;
  EXPECT_GT(a->maintain(policy, h0 + 10 * kDay).periods_merged, 0u);
  EXPECT_EQ(folded(b->query(range(h0, h0 + 5 * kHour))), merged(h0, h0 + 5 * kHour, "", cut));
  EXPECT_EQ(folded(b->query(range(h0 + 3 * kHour, h0 + 4 * kHour))),
            merged(h0 + 3 * kHour, h0 + 4 * kHour, "", cut));
}

TEST(PostgresStore, MigratesAFirstVersionStore) {
  REQUIRE_SERVER();
  const std::string uri = database("migrate");
  sql("migrate", std::string(store::kPostgresSchemaV1) +
                     "CREATE TABLE periods_d0 PARTITION OF periods FOR VALUES FROM (0) TO "
                     "(86400000);"
                     "CREATE TABLE samples_d0 PARTITION OF samples FOR VALUES FROM (0) TO "
                     "(86400000);"
                     "INSERT INTO jvms(id, host, pid, main, jvm_version, start_ms, labels) VALUES "
                     "(1, 'h1', 7, 'demo.App', '17', 5, '{\"service\":\"checkout\"}'),"
                     "(2, 'h2', 8, 'demo.App', '17', 5, '{\"service\":\"search\"}');"
                     "SELECT setval('jvms_id_seq', 2);"
                     "INSERT INTO frames(id, name) VALUES(1, 'main'), (2, 'hot');"
                     "SELECT setval('frames_id_seq', 2);"
                     "INSERT INTO stacks(id, frame_ids) VALUES(1, '\\x0102'::bytea);"
                     "SELECT setval('stacks_id_seq', 1);"
                     "INSERT INTO periods(id, jvm_id, start_ms, end_ms, resolution_ms) VALUES "
                     "(1, 1, 1000, 2000, 0), (2, 2, 1000, 2000, 0);"
                     "SELECT setval('periods_id_seq', 2);"
                     "INSERT INTO samples VALUES(1000, 1, 1, 1, 40), (1000, 2, 1, 1, 2);");
  auto s = store::open_store(uri);
  auto q = range(0, 5000);
  q.match = {{"service", "checkout"}};
  EXPECT_EQ(folded(s->query(q)), (std::map<std::string, uint64_t>{{"main;hot", 40}}));
  EXPECT_EQ(s->labels()["service"], (std::vector<std::string>{"checkout", "search"}));
  s->append(period("h3", "checkout", 3000, 0));
  s->flush();
  EXPECT_EQ(s->stats().committed, 1u) << s->stats().last_error;
  EXPECT_EQ(folded(s->query(q))["main;hot"], 40u);
  EXPECT_EQ(folded(s->query(q))["main;h3.hot"], 10u);
  // The migrated store keeps connections (schema 5) of a JVM it had before.
  const store::JvmIdentity h1{"h1", 7, "demo.App", "17", 5, {}};
  s->record_connection(
      connection_checks::ended(connection_checks::begun(h1, 2, "c", 6000), 7000, "reset", 0, 1));
  s->flush();
  EXPECT_EQ(s->stats().connections_failed, 0u) << s->stats().last_error;
  ASSERT_EQ(s->connections({h1}, 10).size(), 1u);
  EXPECT_EQ(s->connections({h1}, 10)[0].end_cause, "reset");
}

TEST(PostgresStore, MigratesASecondVersionStoreToSampleBlobs) {
  REQUIRE_SERVER();
  const std::string uri = database("migrate2");
  // Version 2: a row per (period, measure, stack) in day partitions; measure 1 is cpu-samples.
  // Two days, so that the migration makes a samples partition for each.
  sql("migrate2", std::string(store::kPostgresSchemaV1) +
                      std::string(store::kPostgresMigrations[0]) +
                      "CREATE TABLE periods_d0 PARTITION OF periods FOR VALUES FROM (0) TO "
                      "(86400000);"
                      "CREATE TABLE samples_d0 PARTITION OF samples FOR VALUES FROM (0) TO "
                      "(86400000);"
                      "CREATE TABLE periods_d1 PARTITION OF periods FOR VALUES FROM (86400000) "
                      "TO (172800000);"
                      "CREATE TABLE samples_d1 PARTITION OF samples FOR VALUES FROM (86400000) "
                      "TO (172800000);"
                      "INSERT INTO jvms(id, host, pid, main, jvm_version, start_ms, labels) VALUES "
                      "(1, 'h1', 7, 'demo.App', '17', 5, '{\"service\":\"checkout\"}');"
                      "SELECT setval('jvms_id_seq', 1);"
                      "INSERT INTO labels VALUES(1, 'service', 'checkout');"
                      "INSERT INTO frames(id, name) VALUES(1, 'main'), (2, 'hot'), (3, 'cold');"
                      "SELECT setval('frames_id_seq', 3);"
                      "INSERT INTO stacks(id, frame_ids) VALUES(1, '\\x0102'::bytea), "
                      "(2, '\\x0103'::bytea), (300, '\\x01'::bytea);"
                      "SELECT setval('stacks_id_seq', 300);"
                      "INSERT INTO periods(id, jvm_id, start_ms, end_ms, resolution_ms) VALUES "
                      "(1, 1, 1000, 2000, 0), (2, 1, 86401000, 86402000, 0);"
                      "SELECT setval('periods_id_seq', 2);"
                      "INSERT INTO samples VALUES(1000, 1, 1, 1, 40), (1000, 1, 1, 2, 3), "
                      "(1000, 1, 1, 300, 200), (86401000, 2, 1, 1, 2), (86401000, 2, 1, 300, 1);");
  auto s = store::open_store(uri);
  EXPECT_EQ(folded(s->query(range(0, 5000))),
            (std::map<std::string, uint64_t>{{"main;hot", 40}, {"main;cold", 3}, {"main", 200}}));
  EXPECT_EQ(folded(s->query(range(0, 2 * kDay))),
            (std::map<std::string, uint64_t>{{"main;hot", 42}, {"main;cold", 3}, {"main", 201}}));
  const auto points = s->timeline(range(0, 2 * kDay), kDay, "service");
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].total, 243u);
  EXPECT_EQ(points[1].total, 3u);
  // Every measure's timeline in one query: the migrated store holds cpu-samples only.
  const auto all = s->timelines(range(0, 2 * kDay), kDay, "service");
  ASSERT_EQ(all.size(), 1u);
  ASSERT_EQ(all.begin()->first, profiles::Measure::kCpuSamples);
  ASSERT_EQ(all.begin()->second.size(), 2u);
  EXPECT_EQ(all.begin()->second[0].total, 243u);
  EXPECT_EQ(all.begin()->second[1].total, 3u);
  // New periods go on after the migrated ones.
  s->append(period("h3", "checkout", 3000, 0));
  s->flush();
  EXPECT_EQ(s->stats().committed, 1u) << s->stats().last_error;
  EXPECT_EQ(folded(s->query(range(0, 5000)))["main;h3.hot"], 10u);
}

TEST(PostgresStore, ForeignDatabaseIsRefused) {
  REQUIRE_SERVER();
  const std::string uri = database("foreign_db");
  sql("foreign_db", "CREATE TABLE invoices(id INTEGER)");
  try {
    store::open_store(uri);
    FAIL() << "opened someone else's database";
  } catch (const store::StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("not a profile store"), std::string::npos) << e.what();
  }
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  server = new PostgresServer;
  ::testing::AddGlobalTestEnvironment(server);
  return RUN_ALL_TESTS();
}
