// SPDX-License-Identifier: Apache-2.0
// The SQLite profile store: periods in, merged stacks out, across restarts, retention and
// downsampling (sums kept), a full write queue (whole periods dropped), a writer killed with
// SIGKILL (every committed period whole), corrupt and foreign files (refused, left as they were),
// stores made by the first and second schema versions (migrated), and a damaged samples blob.
#include "store.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "connection_checks.h"
#include "sqlite_schema.h"

namespace {

using profiles::Measure;
namespace fs = std::filesystem;

constexpr int64_t kHour = 3'600'000;
constexpr int64_t kDay = 24 * kHour;
// A fixed "now" for the tests: 2026-11-27T12:00:00Z.
constexpr int64_t kNow = 1'795'780'800'000;

class TempDir {
 public:
  TempDir() {
    std::string t = (fs::temp_directory_path() / "store_test.XXXXXX").string();
    path_ = ::mkdtemp(t.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

profiles::Stack stack(std::vector<std::string> frames, uint64_t weight) {
  profiles::Stack s;
  s.frames = std::move(frames);
  s.weight = weight;
  s.trace_frames = s.frames.size();
  return s;
}

store::JvmIdentity jvm(const std::string& host, int64_t pid, const std::string& service) {
  return {
      host, pid, "demo.App", "17.0.15", kNow - 10 * kDay, {{"service", service}, {"env", "prod"}}};
}

// Period k of a JVM: known weights that tell periods apart.
store::Period period(const store::JvmIdentity& j, int64_t start, uint64_t k) {
  store::Period p;
  p.jvm = j;
  p.start_ms = start;
  p.end_ms = start + 10'000;
  p.stacks[Measure::kCpuSamples] = {stack({"main", "work", "hot"}, 10 + k),
                                    stack({"main", "work", "cold"}, 1 + k % 3),
                                    stack({"main", "idle"}, 2)};
  p.stacks[Measure::kAllocBytes] = {stack({"main", "work", "byte[]"}, 1024 * (k + 1))};
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

store::Query range(int64_t from, int64_t to, Measure m = Measure::kCpuSamples) {
  store::Query q;
  q.from_ms = from;
  q.to_ms = to;
  q.measure = m;
  return q;
}

int64_t count_rows(const std::string& path, const std::string& table) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  const std::string sql = "SELECT COUNT(*) FROM " + table;
  sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr);
  int64_t n = -1;
  if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return n;
}

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(StoreTime, ParsesRfc3339RelativeAndEpochTimes) {
  EXPECT_EQ(store::parse_time("2026-11-27T12:00:00Z", 0), kNow);
  EXPECT_EQ(store::parse_time("2026-11-27T13:30:00+01:30", 0), kNow);
  EXPECT_EQ(store::parse_time("2026-11-27T11:00:00.250-01:00", 0), kNow + 250);
  EXPECT_EQ(store::parse_time("1970-01-01T00:00:00Z", 5), 0);
  EXPECT_EQ(store::parse_time("-1h", kNow), kNow - kHour);
  EXPECT_EQ(store::parse_time("-90s", kNow), kNow - 90'000);
  EXPECT_EQ(store::parse_time("now", kNow), kNow);
  EXPECT_EQ(store::parse_time("1795780800000", 0), kNow);
  EXPECT_FALSE(store::parse_time("2026-13-27T12:00:00Z", 0));
  EXPECT_FALSE(store::parse_time("2026-11-27 12:00", 0));
  EXPECT_FALSE(store::parse_time("-1x", 0));
  EXPECT_EQ(store::parse_duration("14d"), 14 * kDay);
  EXPECT_EQ(store::parse_duration("500ms"), 500);
  EXPECT_FALSE(store::parse_duration("d"));
}

TEST(Store, MergesMatchingPeriodsOfMatchingJvms) {
  TempDir dir;
  auto s = store::open_store(dir.file("p.db"));
  const auto a = jvm("h1", 1, "checkout"), b = jvm("h2", 2, "checkout"), c = jvm("h3", 3, "search");
  for (uint64_t k = 0; k < 6; ++k) {
    const int64_t t = kNow - kHour + static_cast<int64_t>(k) * 10'000;
    ASSERT_TRUE(s->append(period(a, t, k)));
    ASSERT_TRUE(s->append(period(b, t, k + 100)));
    ASSERT_TRUE(s->append(period(c, t, k + 1000)));
  }
  s->flush();
  EXPECT_EQ(s->stats().committed, 18u);

  // Periods 1..3 (start in [t1, t4)) of the two checkout JVMs.
  auto q = range(kNow - kHour + 10'000, kNow - kHour + 40'000);
  q.match = {{"service", "checkout"}};
  auto got = folded(s->query(q));
  uint64_t hot = 0, cold = 0;
  for (uint64_t k = 1; k <= 3; ++k) {
    hot += (10 + k) + (10 + k + 100);
    cold += (1 + k % 3) + (1 + (k + 100) % 3);
  }
  EXPECT_EQ(got["main;work;hot"], hot);
  EXPECT_EQ(got["main;work;cold"], cold);
  EXPECT_EQ(got["main;idle"], 2u * 2 * 3);
  EXPECT_EQ(got.size(), 3u);

  q.match.push_back({"env", "test"});
  EXPECT_TRUE(s->query(q).empty());

  auto alloc = folded(s->query(range(0, kNow, Measure::kAllocBytes)));
  uint64_t bytes = 0;
  for (uint64_t k = 0; k < 6; ++k) bytes += 1024 * ((k + 1) + (k + 101) + (k + 1001));
  EXPECT_EQ(alloc["main;work;byte[]"], bytes);

  EXPECT_EQ(s->jvms().size(), 3u);
  EXPECT_EQ(s->labels()["service"], (std::vector<std::string>{"checkout", "search"}));

  // Timeline: 1-minute buckets grouped by service; all six periods are in one minute or two.
  uint64_t checkout = 0, search = 0;
  for (const auto& p : s->timeline(range(0, kNow), 60'000, "service")) {
    EXPECT_EQ(p.bucket_ms % 60'000, 0);
    (p.value == "checkout" ? checkout : search) += p.total;
  }
  uint64_t want_checkout = 0, want_search = 0;
  for (uint64_t k = 0; k < 6; ++k) {
    want_checkout += (10 + k) + (1 + k % 3) + 2 + (110 + k) + (1 + (k + 100) % 3) + 2;
    want_search += (1010 + k) + (1 + (k + 1000) % 3) + 2;
  }
  EXPECT_EQ(checkout, want_checkout);
  EXPECT_EQ(search, want_search);
}

TEST(Store, EveryMeasuresTimelineInOneQueryEqualsEachMeasuresOwn) {
  TempDir dir;
  auto s = store::open_store(dir.file("t.db"));
  const auto a = jvm("h1", 1, "checkout"), c = jvm("h3", 3, "search");
  for (uint64_t k = 0; k < 6; ++k) {
    const int64_t t = kNow - kHour + static_cast<int64_t>(k) * 20'000;
    ASSERT_TRUE(s->append(period(a, t, k)));
    ASSERT_TRUE(s->append(period(c, t, k + 1000)));
  }
  s->flush();
  auto q = range(kNow - kHour, kNow);
  q.measure = Measure::kMonitorTimeMs;  // not looked at: every measure comes back
  const auto all = s->timelines(q, 60'000, "service");
  // The two measures the periods hold, each with the bars timeline() gives for it alone.
  ASSERT_EQ(all.size(), 2u);
  for (Measure m : {Measure::kCpuSamples, Measure::kAllocBytes}) {
    ASSERT_TRUE(all.count(m)) << profiles::measure_name(m);
    const auto one = s->timeline(range(kNow - kHour, kNow, m), 60'000, "service");
    ASSERT_EQ(all.at(m).size(), one.size()) << profiles::measure_name(m);
    for (size_t i = 0; i < one.size(); ++i) {
      EXPECT_EQ(all.at(m)[i].bucket_ms, one[i].bucket_ms);
      EXPECT_EQ(all.at(m)[i].value, one[i].value);
      EXPECT_EQ(all.at(m)[i].total, one[i].total);
    }
  }
  // Known totals: allocated bytes per service over the six periods (three per minute).
  uint64_t checkout = 0, search = 0;
  for (const auto& p : all.at(Measure::kAllocBytes)) {
    EXPECT_EQ(p.bucket_ms % 60'000, 0);
    (p.value == "checkout" ? checkout : search) += p.total;
  }
  uint64_t want_checkout = 0, want_search = 0;
  for (uint64_t k = 0; k < 6; ++k) {
    want_checkout += 1024 * (k + 1);
    want_search += 1024 * (k + 1001);
  }
  EXPECT_EQ(checkout, want_checkout);
  EXPECT_EQ(search, want_search);
  // Matchers hold as in timeline(); a range without periods has no measures.
  q.match.push_back({"service", "search"});
  for (const auto& [m, points] : s->timelines(q, 60'000, "service"))
    for (const auto& p : points) EXPECT_EQ(p.value, "search");
  EXPECT_TRUE(s->timelines(range(0, 1000), 60'000, "").empty());
}

TEST(Store, SameAnswerAfterReopening) {
  TempDir dir;
  const std::string path = dir.file("p.db");
  std::map<std::string, uint64_t> before;
  {
    auto s = store::open_store(path);
    for (uint64_t k = 0; k < 50; ++k)
      s->append(
          period(jvm("h1", 1, "checkout"), kNow - kHour + static_cast<int64_t>(k) * 10'000, k));
    s->flush();
    before = folded(s->query(range(kNow - kHour, kNow)));
  }
  auto s = store::open_store(path);
  EXPECT_EQ(folded(s->query(range(kNow - kHour, kNow))), before);
  EXPECT_FALSE(before.empty());
}

// Each JVM's connections: recorded at their beginning and end, read back by a store opened
// again, bounded by retention (connection_checks.h).
TEST(Store, ConnectionsAreRecordedEndedReadBackAfterReopeningAndExpire) {
  TempDir dir;
  const std::string path = dir.file("p.db");
  connection_checks::check_connection_history(
      [&] { return store::open_store(path); },
      [&](const std::string& t) { return count_rows(path, t); }, kNow);
}

TEST(Store, StoresEachStackAndFrameOnce) {
  TempDir dir;
  const std::string path = dir.file("p.db");
  {
    auto s = store::open_store(path);
    for (uint64_t k = 0; k < 1000; ++k)
      s->append(
          period(jvm("h1", 1, "checkout"), kNow - kDay + static_cast<int64_t>(k) * 10'000, k));
    s->flush();
    EXPECT_EQ(s->stats().committed + s->stats().dropped, 1000u);
  }
  EXPECT_EQ(count_rows(path, "stacks"), 4);  // hot, cold, idle, byte[]
  EXPECT_EQ(count_rows(path, "frames"), 6);  // main, work, hot, cold, idle, byte[]
}

TEST(Store, DownsamplingKeepsSumsAndRetentionDeletes) {
  TempDir dir;
  auto s = store::open_store(dir.file("p.db"));
  // One hour of 10-second periods, three days ago, from two JVMs.
  const int64_t hour = (kNow - 3 * kDay) / kHour * kHour;
  for (uint64_t k = 0; k < 360; ++k) {
    s->append(period(jvm("h1", 1, "checkout"), hour + static_cast<int64_t>(k) * 10'000, k));
    s->append(period(jvm("h2", 2, "checkout"), hour + static_cast<int64_t>(k) * 10'000, 7 * k));
  }
  // And the last hour, which stays raw.
  for (uint64_t k = 0; k < 6; ++k)
    s->append(period(jvm("h1", 1, "checkout"), kNow - kHour + static_cast<int64_t>(k) * 10'000, k));
  s->flush();
  const auto cpu = folded(s->query(range(hour, hour + kHour)));
  const auto alloc = folded(s->query(range(hour, hour + kHour, Measure::kAllocBytes)));
  const auto recent = folded(s->query(range(kNow - kHour, kNow)));

  store::RetentionPolicy policy;  // minutes after a day, hours after a week, kept for ever
  auto r = s->maintain(policy, kNow);
  EXPECT_EQ(r.periods_merged, 720u);
  EXPECT_EQ(r.periods_deleted, 0u);
  EXPECT_EQ(folded(s->query(range(hour, hour + kHour))), cpu);
  EXPECT_EQ(folded(s->query(range(hour, hour + kHour, Measure::kAllocBytes))), alloc);
  EXPECT_EQ(folded(s->query(range(kNow - kHour, kNow))), recent);
  uint64_t periods = 0;
  for (const auto& j : s->jvms()) periods += j.periods;
  EXPECT_EQ(periods, 2u * 60 + 6);  // one per minute per JVM, and the raw recent ones
  // Each minute equals the sum of its six periods.
  auto minute = folded(s->query(range(hour + 5 * 60'000, hour + 6 * 60'000)));
  uint64_t hot = 0;
  for (uint64_t k = 30; k < 36; ++k) hot += (10 + k) + (10 + 7 * k);
  EXPECT_EQ(minute["main;work;hot"], hot);

  // Five days later the hour is one bucket per JVM, with the same sums.
  r = s->maintain(policy, kNow + 5 * kDay);
  EXPECT_EQ(folded(s->query(range(hour, hour + kHour))), cpu);
  EXPECT_EQ(folded(s->query(range(hour, hour + kHour, Measure::kAllocBytes))), alloc);
  periods = 0;
  for (const auto& j : s->jvms()) periods += j.periods;
  EXPECT_EQ(periods, 2u + 1);  // and the recent six (now older than a day) one minute

  // Retention of 14 days a fortnight on: the old hour is gone, the recent minute stays.
  policy.retention_ms = 14 * kDay;
  r = s->maintain(policy, kNow + 13 * kDay);
  EXPECT_EQ(r.periods_deleted, 2u);
  EXPECT_TRUE(s->query(range(hour, hour + kHour)).empty());
  EXPECT_EQ(folded(s->query(range(kNow - kHour, kNow))), recent);
}

TEST(Store, FullQueueDropsWholePeriods) {
  TempDir dir;
  const std::string path = dir.file("p.db");
  store::StoreOptions options;
  options.queue_periods = 4;
  options.batch_periods = 1;
  auto s = store::open_store(path, options);
  // Another connection holds the write lock, so that the writer waits inside its first
  // transaction (SQLite's busy timeout, 10 s) while the queue fills.
  sqlite3* blocker = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &blocker), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(blocker, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  uint64_t accepted = 0;
  for (uint64_t k = 0; k < 100; ++k)
    accepted +=
        s->append(period(jvm("h1", 1, "a"), kNow - kHour + static_cast<int64_t>(k) * 10'000, k));
  ASSERT_EQ(sqlite3_exec(blocker, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(blocker);
  s->flush();
  const auto st = s->stats();
  // The queue holds 4, the writer had taken at most one batch (1 period) before it waited.
  EXPECT_GE(accepted, 4u);
  EXPECT_LE(accepted, 5u);
  EXPECT_EQ(st.dropped, 100 - accepted);
  EXPECT_EQ(st.committed, accepted);
  EXPECT_EQ(st.failed, 0u) << st.last_error;
  // Every stored period is whole: its CPU samples and its allocation samples.
  EXPECT_EQ(count_rows(path, "period_samples"), static_cast<int64_t>(2 * accepted));
}

// The child: writes period after period, flushing every 8, until it is killed.
[[noreturn]] void write_until_killed(const std::string& path) {
  auto s = store::open_store(path);
  for (uint64_t k = 0; k < 1'000'000; ++k) {
    s->append(period(jvm("h1", 1, "a"), kNow + static_cast<int64_t>(k) * 10'000, k));
    if (k % 8 == 7) s->flush();
  }
  ::_exit(0);
}

TEST(Store, KillDuringWritesLeavesEveryCommittedPeriodWhole) {
  TempDir dir;
  const std::string path = dir.file("p.db");
  store::open_store(path);  // the schema exists before the child and the parent race
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) write_until_killed(path);
  {
    // Wait (on the store's own progress, not a clock) until the child has committed 200.
    auto reader = store::open_store(path);
    for (;;) {
      const auto jvms = reader->jvms();
      if (!jvms.empty() && jvms[0].periods >= 200) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));

  auto s = store::open_store(path);
  const auto jvms = s->jvms();
  ASSERT_EQ(jvms.size(), 1u);
  const uint64_t n = jvms[0].periods;
  ASSERT_GE(n, 200u);
  // Batches commit in order, so the stored periods are 0..n-1, each with exactly its content.
  EXPECT_EQ(jvms[0].first_ms, kNow);
  EXPECT_EQ(jvms[0].last_ms, kNow + static_cast<int64_t>(n) * 10'000);
  for (uint64_t k = 0; k < n; ++k) {
    const int64_t t = kNow + static_cast<int64_t>(k) * 10'000;
    const auto want = period(jvm("h1", 1, "a"), t, k);
    ASSERT_EQ(folded(s->query(range(t, t + 1))), folded(want.stacks.at(Measure::kCpuSamples)))
        << "period " << k;
    ASSERT_EQ(folded(s->query(range(t, t + 1, Measure::kAllocBytes))),
              folded(want.stacks.at(Measure::kAllocBytes)))
        << "period " << k;
  }
  EXPECT_EQ(count_rows(path, "period_samples"), static_cast<int64_t>(2 * n));
}

TEST(Store, CorruptFileIsRefusedAndLeftAsItWas) {
  TempDir dir;
  const std::string path = dir.file("p.db");
  {
    std::ofstream f(path, std::ios::binary);
    f << "this is not a database, but someone's notes\n";
  }
  const std::string before = read_bytes(path);
  try {
    store::open_store(path);
    FAIL() << "opened a text file as a store";
  } catch (const store::StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("not a SQLite database"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
  EXPECT_EQ(read_bytes(path), before);
}

TEST(Store, DamagedStoreGivesOneErrorAndIsNotOverwritten) {
  TempDir dir;
  const std::string path = dir.file("p.db");
  {
    auto s = store::open_store(path);
    for (uint64_t k = 0; k < 200; ++k)
      s->append(period(jvm("h1", 1, "a"), kNow + static_cast<int64_t>(k) * 10'000, k));
    s->flush();
  }
  // Fold the write-ahead log in, then overwrite every page after the header page with garbage.
  {
    sqlite3* db = nullptr;
    sqlite3_open(path.c_str(), &db);
    sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  std::string bytes = read_bytes(path);
  ASSERT_GT(bytes.size(), 8192u);
  for (size_t i = 4096; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 131 % 251);
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << bytes;
  }
  try {
    auto s = store::open_store(path);
    s->query(range(0, INT64_MAX));
    FAIL() << "a damaged store answered";
  } catch (const store::StoreError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_bytes(path), bytes);
}

TEST(Store, ForeignDatabaseAndNewerSchemaAreRefused) {
  TempDir dir;
  const std::string foreign = dir.file("other.db"), newer = dir.file("newer.db");
  sqlite3* db = nullptr;
  sqlite3_open(foreign.c_str(), &db);
  sqlite3_exec(db, "CREATE TABLE invoices(id INTEGER)", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  EXPECT_THROW(store::open_store(foreign), store::StoreError);
  EXPECT_EQ(count_rows(foreign, "invoices"), 0);

  store::open_store(newer);
  sqlite3_open(newer.c_str(), &db);
  sqlite3_exec(db, "UPDATE meta SET value = '99' WHERE key = 'schema_version'", nullptr, nullptr,
               nullptr);
  sqlite3_close(db);
  try {
    store::open_store(newer);
    FAIL() << "opened a newer schema";
  } catch (const store::StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("schema version 99"), std::string::npos) << e.what();
  }
}

TEST(Store, MigratesAFirstVersionStore) {
  TempDir dir;
  const std::string path = dir.file("v1.db");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const std::string v1 = std::string(store::kSqliteSchemaV1) +
                         "INSERT INTO jvms VALUES(1, 'h1', 7, 'demo.App', '17', 5, "
                         "'{\"service\":\"checkout\",\"env\":\"prod\"}');"
                         "INSERT INTO jvms VALUES(2, 'h2', 8, 'demo.App', '17', 5, "
                         "'{\"service\":\"search\"}');"
                         "INSERT INTO frames(id, name) VALUES(1, 'main'), (2, 'hot');"
                         "INSERT INTO stacks(id, frame_ids) VALUES(1, x'0102');"
                         "INSERT INTO periods VALUES(1, 1, 1000, 2000, 0), (2, 2, 1000, 2000, 0);"
                         "INSERT INTO samples VALUES(1, 1, 1, 40), (2, 1, 1, 2);";
  ASSERT_EQ(sqlite3_exec(db, v1.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);

  auto s = store::open_store(path);
  auto q = range(0, 5000);
  q.match = {{"service", "checkout"}};
  EXPECT_EQ(folded(s->query(q)), (std::map<std::string, uint64_t>{{"main;hot", 40}}));
  EXPECT_EQ(s->labels()["env"], std::vector<std::string>{"prod"});
  // New periods go on after the migrated ones.
  s->append(period(jvm("h1", 1, "checkout"), 3000, 0));
  s->flush();
  EXPECT_EQ(folded(s->query(q))["main;hot"], 40u);
  EXPECT_EQ(folded(s->query(q))["main;work;hot"], 10u);
  // The migrated store keeps connections (schema 5) of a JVM it had before.
  const store::JvmIdentity h1{"h1", 7, "demo.App", "17", 5, {}};
  s->record_connection(
      connection_checks::ended(connection_checks::begun(h1, 2, "c", 6000), 7000, "reset", 0, 1));
  s->flush();
  ASSERT_EQ(s->connections({h1}, 10).size(), 1u);
  EXPECT_EQ(s->connections({h1}, 10)[0].end_cause, "reset");
  EXPECT_EQ(count_rows(path, "jvms"), 3);
}

TEST(Store, MigratesASecondVersionStoreToSampleBlobs) {
  TempDir dir;
  const std::string path = dir.file("v2.db");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  // Version 2: a row per (period, measure, stack); measure 1 is cpu-samples, 4 alloc-bytes.
  const std::string v2 = std::string(store::kSqliteSchemaV1) +
                         std::string(store::kSqliteMigrations[0]) +
                         "INSERT INTO jvms VALUES(1, 'h1', 7, 'demo.App', '17', 5, "
                         "'{\"service\":\"checkout\"}');"
                         "INSERT INTO labels VALUES(1, 'service', 'checkout');"
                         "INSERT INTO frames(id, name) VALUES(1, 'main'), (2, 'hot'), (3, 'cold');"
                         "INSERT INTO stacks(id, frame_ids) VALUES(1, x'0102'), (2, x'0103'),"
                         "(300, x'01');"
                         "INSERT INTO periods VALUES(1, 1, 1000, 2000, 0), (2, 1, 2000, 3000, 0);"
                         "INSERT INTO samples VALUES(1, 1, 1, 40), (1, 1, 2, 3), (1, 1, 300, 200),"
                         "(1, 4, 2, 4096), (2, 1, 1, 2), (2, 1, 300, 1);";
  ASSERT_EQ(sqlite3_exec(db, v2.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);

  auto s = store::open_store(path);
  EXPECT_EQ(folded(s->query(range(0, 5000))),
            (std::map<std::string, uint64_t>{{"main;hot", 42}, {"main;cold", 3}, {"main", 201}}));
  EXPECT_EQ(folded(s->query(range(0, 5000, Measure::kAllocBytes))),
            (std::map<std::string, uint64_t>{{"main;cold", 4096}}));
  const auto points = s->timeline(range(0, 5000), 1000, "service");
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].total, 243u);
  EXPECT_EQ(points[1].total, 3u);
  s.reset();
  // One row per (period, measure) and the old table gone.
  EXPECT_EQ(count_rows(path, "period_samples"), 3);
  EXPECT_EQ(count_rows(path, "sqlite_master WHERE name = 'samples'"), 0);
  EXPECT_EQ(
      count_rows(path, "meta WHERE value = '" + std::to_string(store::kSqliteSchemaVersion) + "'"),
      1);
  // The 3 -> 4 step made the hour's blob: a query over the whole hour reads it.
  s = store::open_store(path);
  EXPECT_EQ(folded(s->query(range(0, kHour))),
            (std::map<std::string, uint64_t>{{"main;hot", 42}, {"main;cold", 3}, {"main", 201}}));
  s.reset();
  EXPECT_EQ(count_rows(path, "hour_samples"), 2);
}

// Periods of three JVMs over four hours, with what each adds, for the plain merge.
struct HourlyFleet {
  std::vector<store::Period> periods;
  std::map<std::string, uint64_t> merged(int64_t from, int64_t to, const std::string& service,
                                         int64_t ended_after = INT64_MIN) const {
    std::map<std::string, uint64_t> out;
    for (const auto& p : periods)
      if (p.start_ms >= from && p.start_ms < to && p.end_ms >= ended_after &&
          (service.empty() || p.jvm.labels.at("service") == service))
        for (const auto& [k, v] : folded(p.stacks.at(Measure::kCpuSamples))) out[k] += v;
    return out;
  }
};

HourlyFleet hourly_fleet(int64_t first_hour) {
  HourlyFleet f;
  const store::JvmIdentity jvms[] = {jvm("h1", 1, "checkout"), jvm("h2", 2, "checkout"),
                                     jvm("h3", 3, "search")};
  // From 20 minutes into the first hour to 10 minutes into the fifth: whole hours and ends.
  for (int64_t t = first_hour + 20 * 60'000; t < first_hour + 4 * kHour + 10 * 60'000; t += 10'000)
    for (int j = 0; j < 3; ++j) {
      auto p = period(jvms[j], t, static_cast<uint64_t>((t / 10'000) % 97 + j));
      // A stack of its own every few periods, so that hours differ in their stacks too.
      if ((t / 10'000) % 7 == 0)
        p.stacks[Measure::kCpuSamples].push_back(
            stack({"main", "rare" + std::to_string(t / 10'000 % 5)}, 3 + j));
      f.periods.push_back(std::move(p));
    }
  return f;
}

// Merges of 30-minute windows added up: never a whole hour, so never the hour blobs.
std::map<std::string, uint64_t> windows_merged(store::ProfileStore& s, int64_t from, int64_t to,
                                               const std::string& service) {
  std::map<std::string, uint64_t> out;
  for (int64_t t = from; t < to; t += kHour / 2) {
    auto q = range(t, std::min(to, t + kHour / 2));
    if (!service.empty()) q.match = {{"service", service}};
    for (const auto& [k, v] : folded(s.query(q))) out[k] += v;
  }
  return out;
}

TEST(Store, QueriesOverWholeHoursEqualThePlainMergeOfTheirPeriods) {
  TempDir dir;
  const std::string path = dir.file("hours.db");
  const int64_t h0 = (kNow - 3 * kDay) / kHour * kHour;
  const HourlyFleet fleet = hourly_fleet(h0);
  {
    auto s = store::open_store(path);
    // Every other period first, the rest later in small batches: an hour's blob is added to
    // after it was first written, as late periods do.
    for (size_t i = 0; i < fleet.periods.size(); i += 2) s->append(fleet.periods[i]);
    s->flush();
    for (size_t i = 1; i < fleet.periods.size(); i += 2) {
      s->append(fleet.periods[i]);
      if (i % 64 == 1) s->flush();
    }
    s->flush();
    ASSERT_EQ(s->stats().committed, fleet.periods.size()) << s->stats().last_error;
  }
  auto s = store::open_store(path);  // and across a restart
  const std::pair<int64_t, int64_t> ranges[] = {
      {h0, h0 + 5 * kHour},                             // whole hours only
      {h0 + 25 * 60'000, h0 + 3 * kHour + 7 * 60'000},  // ends on both sides
      {h0 + kHour, h0 + 2 * kHour},                     // one hour
      {h0 - kDay, h0 + kDay}};                          // beyond the data
  for (const auto& [from, to] : ranges)
    for (const std::string service : {"", "checkout", "search"}) {
      auto q = range(from, to);
      if (!service.empty()) q.match = {{"service", service}};
      const auto want = fleet.merged(from, to, service);
      ASSERT_FALSE(want.empty());
      EXPECT_EQ(folded(s->query(q)), want) << from - h0 << ".." << to - h0 << " " << service;
      if (to - from <= 5 * kHour) {
        EXPECT_EQ(windows_merged(*s, from, to, service), want) << from - h0 << " " << service;
      }
    }
  EXPECT_GT(count_rows(path, "hour_samples"), 0);

  // Retention with its cut inside an hour: that hour's blob is made again from what is left.
  const int64_t cut = h0 + 2 * kHour + 17 * 60'000;
  store::RetentionPolicy policy;
  policy.retention_ms = kDay;
  EXPECT_GT(s->maintain(policy, cut + kDay).periods_deleted, 0u);
  EXPECT_EQ(folded(s->query(range(h0, h0 + 5 * kHour))), fleet.merged(h0, h0 + 5 * kHour, "", cut));
  // Downsampling into minutes and hours keeps every whole hour's sum.
  policy.retention_ms = 0;
  EXPECT_GT(s->maintain(policy, h0 + 10 * kDay).periods_merged, 0u);
  EXPECT_EQ(folded(s->query(range(h0, h0 + 5 * kHour))), fleet.merged(h0, h0 + 5 * kHour, "", cut));
  EXPECT_EQ(folded(s->query(range(h0 + 3 * kHour, h0 + 4 * kHour))),
            fleet.merged(h0 + 3 * kHour, h0 + 4 * kHour, "", cut));
}

TEST(Store, DamagedSampleBlobGivesOneErrorNotACrash) {
  TempDir dir;
  const std::string path = dir.file("p.db");
  {
    auto s = store::open_store(path);
    s->append(period(jvm("h1", 1, "checkout"), kNow, 0));
    s->flush();
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  // A count of three entries with only one id and one weight.
  ASSERT_EQ(
      sqlite3_exec(db, "UPDATE period_samples SET samples = x'030101'", nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(db);
  auto s = store::open_store(path);
  try {
    s->query(range(kNow, kNow + 1));
    FAIL() << "decoded a damaged blob";
  } catch (const store::StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("malformed samples blob"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("p.db"), std::string::npos) << e.what();
  }
}

TEST(Store, PeriodFromProfileAndBackGiveTheSameStacks) {
  profiles::JavaProfile p;
  p.traces[1] = {1, 0, {{"app.Leaf.run", "Leaf.java", 3}, {"app.Main.main", "Main.java", 9}}};
  p.traces[2] = {2, 0, {{"app.Main.main", "Main.java", 9}}};
  p.cpu_samples =
      profiles::CostSection{30, {{1, 20, 66.67, "app.Leaf.run"}, {2, 10, 33.33, "app.Main.main"}}};
  p.sites = std::vector<profiles::Site>{{"byte[]", 1, 0, 0, 4096, 4}};
  const auto period = store::period_from_profile(jvm("h", 1, "s"), 0, 10, p);
  ASSERT_EQ(period.stacks.size(), 3u);  // cpu-samples and the two non-zero site measures
  for (const auto& [m, stacks] : period.stacks) {
    const auto back = store::profile_from_stacks(m, stacks, "q");
    EXPECT_EQ(folded(profiles::stacks(back, m)), folded(stacks)) << profiles::measure_name(m);
  }
}

}  // namespace
