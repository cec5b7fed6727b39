// SPDX-License-Identifier: Apache-2.0
// The History view's routes over HTTP (jvmprof serve's web server on a loopback port, cpp-httplib's
// client) against a SQLite profile store holding known periods: every answer must be what the
// store's own query API gives, bad input one error line, and no route without a store.
#include "history_routes.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "session_registry.h"
#include "store.h"
#include "web_server.h"

namespace {

using nlohmann::json;
constexpr int64_t kMinute = 60'000;
constexpr int64_t kT0 = int64_t{1'795'000'000'000} / kMinute * kMinute;  // a whole minute

store::Period period(const std::string& host, const std::string& service, int64_t start,
                     const std::string& method, uint64_t samples) {
  store::Period p;
  p.jvm = {host, 7, "app.Main", "17", kT0 - kMinute, {{"service", service}}};
  p.start_ms = start;
  p.end_ms = start + 10'000;
  p.stacks[profiles::Measure::kCpuSamples] = {{{"app.Main.main", method}, samples, 0, 2}};
  return p;
}

class HistoryRoutes : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir() + "jvmprof-history-routes-" + std::to_string(::getpid());
    std::filesystem::create_directories(dir_ + "/spool");
    store_ = store::open_store(dir_ + "/p.db");
    // Minutes 0-2: checkout runs Checkout.hot (30 a period); search runs Search.scan (10),
    // and in minute 5 Search.scan (100).
    for (int k = 0; k < 3; ++k) {
      store_->append(period("h1", "checkout", kT0 + k * kMinute, "app.Checkout.hot", 30));
      store_->append(period("h2", "search", kT0 + k * kMinute + 5'000, "app.Search.scan", 10));
    }
    store_->append(period("h2", "search", kT0 + 5 * kMinute, "app.Search.scan", 100));
    store_->flush();
    ASSERT_EQ(store_->stats().committed, 7u) << store_->stats().last_error;
    start(store_.get());
  }
  void TearDown() override {
    stop();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  void start(store::ProfileStore* history) {
    jvmprof::SessionLimits limits;
    limits.spool_dir = dir_ + "/spool";
    registry_ = std::make_unique<jvmprof::SessionRegistry>(limits);
    jvmprof::WebOptions options;
    options.token = "secret-token";
    options.history = history;
    server_ = std::make_unique<jvmprof::WebServer>(*registry_, options);
    std::string error;
    port_ = server_->bind(error);
    ASSERT_GT(port_, 0) << error;
    ended_ = false;
    thread_ = std::thread([this] {
      server_->run();
      ended_ = true;
    });
  }
  void stop() {
    // A stop() before the server listens is not seen by it: repeated until it has ended.
    while (!ended_) {
      server_->stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (thread_.joinable()) thread_.join();
    registry_->stop_all();
  }

  // GET with the token: status and body.
  std::pair<int, std::string> get(const std::string& path, bool with_token = true) {
    httplib::Client client("127.0.0.1", port_);
    httplib::Headers headers;
    if (with_token) headers.emplace("X-Jvmprof-Token", "secret-token");
    auto res = client.Get(path, headers);
    if (!res) return {0, ""};
    return {res->status, res->body};
  }
  json get_json(const std::string& path) {
    auto [status, body] = get(path);
    EXPECT_EQ(status, 200) << path << ": " << body;
    return json::parse(body, nullptr, false);
  }

  static std::string range(int64_t from, int64_t to) {
    return "from=" + std::to_string(from) + "&to=" + std::to_string(to);
  }

  std::string dir_;
  std::unique_ptr<store::ProfileStore> store_;
  std::unique_ptr<jvmprof::SessionRegistry> registry_;
  std::unique_ptr<jvmprof::WebServer> server_;
  std::thread thread_;
  std::atomic<bool> ended_{false};
  int port_ = 0;
};

TEST_F(HistoryRoutes, TimelineGroupedByLabelGivesEachBucketsKnownTotal) {
  const json t = get_json("/api/history/timeline?" + range(kT0, kT0 + 10 * kMinute) +
                          "&group=service&bucket=60000");
  EXPECT_EQ(t["bucketMs"], kMinute);
  EXPECT_EQ(t["values"], json({"checkout", "search"}));
  std::map<std::pair<int64_t, std::string>, uint64_t> got;
  for (const auto& p : t["points"]) got[{p["t"], p["value"]}] = p["total"];
  std::map<std::pair<int64_t, std::string>, uint64_t> want;
  for (int k = 0; k < 3; ++k) {
    want[{kT0 + k * kMinute, "checkout"}] = 30;
    want[{kT0 + k * kMinute, "search"}] = 10;
  }
  want[{kT0 + 5 * kMinute, "search"}] = 100;
  EXPECT_EQ(got, want);
  // Without a bucket: at most 120 over the range (10 min: 5 s buckets).
  EXPECT_EQ(get_json("/api/history/timeline?" + range(kT0, kT0 + 10 * kMinute))["bucketMs"], 5'000);
}

TEST_F(HistoryRoutes, TimelineOfAllMeasuresHasOneTimelinePerMeasureWithData) {
  // A batch JVM in minute 7 allocates (4096 bytes in 2 objects) and waits on a monitor (25 ms).
  store::Period p = period("h3", "batch", kT0 + 7 * kMinute, "app.Batch.run", 5);
  p.stacks[profiles::Measure::kAllocBytes] = {
      {{"app.Main.main", "app.Batch.run", "byte[]"}, 4096, 0, 2}};
  p.stacks[profiles::Measure::kAllocObjects] = {
      {{"app.Main.main", "app.Batch.run", "byte[]"}, 2, 0, 2}};
  p.stacks[profiles::Measure::kMonitorTimeMs] = {{{"app.Main.main", "app.Batch.Lock"}, 25, 0, 1}};
  store_->append(p);
  store_->flush();
  ASSERT_EQ(store_->stats().committed, 8u) << store_->stats().last_error;

  const std::string window = range(kT0, kT0 + 10 * kMinute) + "&group=service&bucket=60000";
  const json all = get_json("/api/history/timeline?" + window + "&measure=all");
  EXPECT_EQ(all["measure"], "all");
  EXPECT_EQ(all["bucketMs"], kMinute);
  EXPECT_EQ(all["values"], json({"batch", "checkout", "search"}));
  // Only the measures stored in the window, in the measures' order, each with its total.
  std::vector<std::string> measures;
  std::map<std::string, uint64_t> totals;
  for (const auto& t : all["timelines"]) {
    measures.push_back(t["measure"]);
    totals[t["measure"]] = t["total"];
    // Each is the single-measure route's answer.
    const json one =
        get_json("/api/history/timeline?" + window + "&measure=" + t["measure"].get<std::string>());
    EXPECT_EQ(t["points"], one["points"]) << t["measure"];
    EXPECT_EQ(t["unit"], one["unit"]) << t["measure"];
  }
  EXPECT_EQ(measures, (std::vector<std::string>{"cpu-samples", "alloc-bytes", "alloc-objects",
                                                "monitor-time"}));
  EXPECT_EQ(totals["cpu-samples"], 3u * 30 + 3 * 10 + 100 + 5);
  EXPECT_EQ(totals["alloc-bytes"], 4096u);
  EXPECT_EQ(totals["alloc-objects"], 2u);
  EXPECT_EQ(totals["monitor-time"], 25u);
  // A window without data: no timelines (the page then draws its measure's empty one).
  const json none = get_json("/api/history/timeline?" +
                             range(kT0 - 20 * kMinute, kT0 - 10 * kMinute) + "&measure=all");
  EXPECT_TRUE(none["timelines"].empty()) << none;
}

TEST_F(HistoryRoutes, FlameAndDiffAreTheStoresMergedAnswer) {
  const json whole = get_json("/api/history/flame?" + range(kT0, kT0 + 10 * kMinute));
  EXPECT_EQ(whole["measure"], "cpu-samples");
  EXPECT_EQ(whole["total"], 3 * 30 + 3 * 10 + 100);
  // The label filter and the range select, as jvmprof query's --match and --from/--to.
  store::Query q{kT0, kT0 + 3 * kMinute, {{"service", "search"}}, profiles::Measure::kCpuSamples};
  auto [status, collapsed] = get("/api/history/flame?" + range(q.from_ms, q.to_ms) +
                                 "&match=service%3Dsearch&format=collapsed");
  EXPECT_EQ(status, 200);
  EXPECT_EQ(collapsed, profiles::to_collapsed(store_->query(q)));
  EXPECT_EQ(collapsed, "app.Main.main;app.Search.scan 30\n");
  const json diff =
      get_json("/api/history/diff?" + range(kT0 + 5 * kMinute, kT0 + 6 * kMinute) +
               "&baseFrom=" + std::to_string(kT0) + "&baseTo=" + std::to_string(kT0 + 3 * kMinute));
  EXPECT_EQ(diff["base"]["total"], 120);
  EXPECT_EQ(diff["target"]["total"], 100);
  const json labels = get_json("/api/history/labels");
  EXPECT_EQ(labels, json({{"service", {"checkout", "search"}}}));
  const json jvms = get_json("/api/history/jvms");
  ASSERT_EQ(jvms.size(), 2u);
  EXPECT_EQ(jvms[0]["periods"].get<int>() + jvms[1]["periods"].get<int>(), 7);
}

TEST_F(HistoryRoutes, BadInputIsOneErrorAndTheTokenIsChecked) {
  for (const std::string& path : std::vector<std::string>{
           "/api/history/flame?from=yesterday", "/api/history/flame?" + range(kT0 + 1, kT0),
           "/api/history/flame?measure=nope", "/api/history/flame?measure=all",
           "/api/history/flame?match=novalue", "/api/history/flame?format=svg",
           "/api/history/diff?" + range(kT0, kT0 + 1),
           "/api/history/timeline?" + range(kT0, kT0 + 10 * kMinute) + "&bucket=1",
           "/api/history/timeline?bucket=-5"}) {
    auto [status, body] = get(path);
    EXPECT_EQ(status, 400) << path;
    EXPECT_TRUE(json::parse(body, nullptr, false).contains("error")) << path << ": " << body;
  }
  EXPECT_EQ(get("/api/history/flame", false).first, 401);
}

TEST_F(HistoryRoutes, WithoutAStoreEveryRouteSaysSo) {
  stop();
  start(nullptr);
  for (const char* path : {"/api/history", "/api/history/jvms", "/api/history/labels",
                           "/api/history/timeline", "/api/history/flame", "/api/history/diff"}) {
    auto [status, body] = get(path);
    EXPECT_EQ(status, 404) << path;
    EXPECT_NE(body.find("--store"), std::string::npos) << path << ": " << body;
  }
}

TEST(HistoryBucket, AtMostTheAskedNumberOfWholeBuckets) {
  EXPECT_EQ(jvmprof::history_bucket_ms(60'000), 1'000);
  EXPECT_EQ(jvmprof::history_bucket_ms(21 * kMinute), 30'000);
  EXPECT_EQ(jvmprof::history_bucket_ms(3'600'000), 30'000);
  EXPECT_EQ(jvmprof::history_bucket_ms(24 * 3'600'000), 1'800'000);
  EXPECT_EQ(jvmprof::history_bucket_ms(int64_t{365} * 86'400'000), 4 * 86'400'000);
}

}  // namespace
