// SPDX-License-Identifier: Apache-2.0
// serve's history recorder: the periods it is handed reach the store whole, are committed when
// it stops, and are there for the next serve; its first maintenance runs the retention policy.
#include "history_recorder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

namespace {

namespace fs = std::filesystem;
using profiles::Measure;

profiles::JavaProfile delta(uint64_t hot, uint64_t cold) {
  profiles::JavaProfile p;
  p.traces[1] = {1, 0, {{"app.Hot.run", "Hot.java", 3}, {"app.Main.main", "Main.java", 9}}};
  p.traces[2] = {2, 0, {{"app.Cold.run", "Cold.java", 5}, {"app.Main.main", "Main.java", 9}}};
  p.cpu_samples =
      profiles::CostSection{hot + cold, {{1, hot, 0, "app.Hot.run"}, {2, cold, 0, "app.Cold.run"}}};
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

TEST(HistoryRecorder, PeriodsSurviveTheRecorderAndRetentionApplies) {
  const std::string dir =
      (fs::temp_directory_path() / ("history_test." + std::to_string(::getpid()))).string();
  fs::create_directories(dir);
  const std::string path = dir + "/p.db";
  const store::JvmIdentity jvm{"h1", 42, "app.Main", "17", 1000, {{"service", "checkout"}}};
  const int64_t now = profiles::wall_clock_ms();
  {
    jvmprof::HistoryRecorder r(store::open_store(path), store::RetentionPolicy{});
    EXPECT_TRUE(r.record(jvm, now - 20'000, now - 10'000, delta(30, 5)));
    EXPECT_TRUE(r.record(jvm, now - 10'000, now, delta(12, 0)));
    // Thirty days old: the next serve's retention of 14 days deletes it.
    EXPECT_TRUE(
        r.record(jvm, now - 30 * 86'400'000LL, now - 30 * 86'400'000LL + 10'000, delta(1, 1)));
  }
  store::RetentionPolicy fortnight;
  fortnight.retention_ms = 14 * 86'400'000LL;
  jvmprof::HistoryRecorder r(store::open_store(path), fortnight);
  store::Query q;
  q.from_ms = now - 60'000;
  q.to_ms = now + 1;
  q.match = {{"service", "checkout"}};
  EXPECT_EQ(folded(r.store().query(q)),
            (std::map<std::string, uint64_t>{{"app.Main.main;app.Hot.run", 42},
                                             {"app.Main.main;app.Cold.run", 5}}));
  // The first maintenance runs at start, queued behind nothing: once a flush has returned and a
  // maintenance result is there, the old period is gone. Wait on the store's state itself.
  for (;;) {
    r.store().flush();
    if (r.store().jvms().at(0).periods == 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::string error;
  r.last_maintenance(&error);
  EXPECT_EQ(error, "");
  q.from_ms = 0;
  EXPECT_EQ(folded(r.store().query(q))["app.Main.main;app.Cold.run"], 5u);
  fs::remove_all(dir);
}

}  // namespace
