// SPDX-License-Identifier: Apache-2.0
// Many JVMs into one collector: 200 simulated agents, each replaying a period= stream (HPROF's
// text format: header, IDENTITY, TRACEs, then PERIOD blocks) over its own socket into one
// SessionRegistry — jvmprof serve's receiver — at once, beside one agent that sends garbage and
// one that stops sending half-way. Every period of every well-behaved agent reaches the period
// hook, in order and under its own identity; each session keeps only its latest kKeptPeriods; the
// hostile and the stalled agent hold up no one.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "session_registry.h"

namespace {

constexpr int kAgents = 200;
// More than a session keeps, so the bound is exercised.
constexpr uint64_t kPeriods = jvmprof::Session::kKeptPeriods + 10;

// One agent's stream: what HPROF with net=,period= sends, with pid `pid`.
std::string Stream(int pid) {
  std::string s =
      "JAVA PROFILE 1.0.1, created Fri Nov 27 15:00:00 2026\n\nHeader text.\n--------\n\n";
  s += "IDENTITY: pid=" + std::to_string(pid) +
       " host=sim-host main=sim.Main vm=17.0.9 start=1000 labels=service=sim;shard=" +
       std::to_string(pid % 4) + "\n";
  s += "TRACE 300001:\n\tsim.Hot.spin(Hot.java:10)\n\tsim.Main.main(Main.java:3)\n";
  s += "TRACE 300002:\n\tsim.Cold.idle(Cold.java:4)\n\tsim.Main.main(Main.java:4)\n";
  for (uint64_t seq = 1; seq <= kPeriods; ++seq) {
    const std::string start = std::to_string(1000 + (seq - 1) * 10000);
    const std::string end = std::to_string(1000 + seq * 10000);
    s += "PERIOD BEGIN: seq=" + std::to_string(seq) + " start=" + start + " end=" + end + "\n";
    s += "CPU SAMPLES: total=" + std::to_string(seq + 3) + " rows=2\n";
    s += "300001 " + std::to_string(seq) + "\n300002 3\n";
    s += "SITES: rows=1\n300001 " + std::to_string(64 * seq) + " " + std::to_string(seq) +
         " 64 1 sim.Item\n";
    s += "PERIOD END: seq=" + std::to_string(seq) + "\n";
  }
  return s;
}

bool WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), std::min<size_t>(bytes.size(), 4096), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

TEST(ManyAgents, TwoHundredAgentsDeliverEveryPeriodDespiteAHostileAndAStalledOne) {
  jvmprof::SessionRegistry registry(jvmprof::SessionLimits{});
  std::mutex mu;
  std::map<int64_t, std::vector<uint64_t>> samples_by_pid;  // per period, in arrival order
  std::map<int64_t, int64_t> last_end;
  std::atomic<bool> out_of_order{false};
  registry.set_period_hook([&](const jvmprof::JvmIdentity& id, int64_t start_ms, int64_t end_ms,
                               const profiles::JavaProfile& delta) {
    std::lock_guard lock(mu);
    auto& end = last_end[id.pid];
    if (end != 0 && start_ms != end) out_of_order = true;
    end = end_ms;
    samples_by_pid[id.pid].push_back(delta.cpu_samples ? delta.cpu_samples->total : 0);
  });

  auto connect = [&](const std::string& name) {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return -1;
    if (!registry.add(name, fds[0], true, 0)) {
      ::close(fds[1]);
      return -1;
    }
    return fds[1];
  };
  // The stalled agent: its header and identity, half a period, then nothing until the end.
  const int stalled = connect("stalled");
  ASSERT_GE(stalled, 0);
  const std::string stalled_stream = Stream(9999);
  ASSERT_TRUE(WriteAll(stalled, stalled_stream.substr(0, stalled_stream.find("300002 3"))));
  // The hostile agent: a period whose row count lies, then more bytes.
  const int hostile = connect("hostile");
  ASSERT_GE(hostile, 0);
  std::string bad = Stream(8888);
  bad.replace(bad.find("rows=2"), 6, "rows=7");
  ASSERT_TRUE(WriteAll(hostile, bad));
  ::close(hostile);

  std::vector<std::thread> agents;
  for (int i = 1; i <= kAgents; ++i) {
    const int fd = connect("agent-" + std::to_string(i));
    ASSERT_GE(fd, 0) << "agent " << i;
    agents.emplace_back([fd, i] {
      WriteAll(fd, Stream(i));
      ::close(fd);
    });
  }
  for (auto& t : agents) t.join();

  // Every well-behaved session ends (its agent closed); the stalled one stays connected.
  auto ended = [&] {
    size_t n = 0;
    for (const auto& s : registry.all())
      if (s->info()["state"] != "connected") ++n;
    return n;
  };
  // A bound against hanging, not a timing assertion: the sessions end as soon as they have read.
  for (int i = 0; i < 1200 && ended() < kAgents + 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(ended(), size_t{kAgents} + 1);

  std::lock_guard lock(mu);
  EXPECT_FALSE(out_of_order);
  for (int i = 1; i <= kAgents; ++i) {
    ASSERT_EQ(samples_by_pid[i].size(), kPeriods) << "agent " << i;
    for (uint64_t seq = 1; seq <= kPeriods; ++seq) EXPECT_EQ(samples_by_pid[i][seq - 1], seq + 3);
  }
  EXPECT_EQ(samples_by_pid.count(8888), 0u) << "the hostile agent's lying period was refused";
  for (const auto& s : registry.all()) {
    const auto info = s->info();
    if (info["name"] == "hostile") {
      EXPECT_EQ(info["state"], "error");
      continue;
    }
    if (info["name"] == "stalled") {
      EXPECT_EQ(info["state"], "connected");
      EXPECT_EQ(s->identity().pid, 9999);
      EXPECT_TRUE(s->periods().empty());
      continue;
    }
    // Bounded per JVM: the latest kKeptPeriods, the newest last; the identity and labels.
    const auto kept = s->periods();
    ASSERT_EQ(kept.size(), jvmprof::Session::kKeptPeriods);
    EXPECT_EQ(kept.back().seq, kPeriods);
    EXPECT_EQ(kept.front().seq, kPeriods - jvmprof::Session::kKeptPeriods + 1);
    const auto id = s->identity();
    EXPECT_EQ(id.labels.at("service"), "sim");
    EXPECT_EQ(info["identity"]["name"].get<std::string>().find("service=sim"), 0u);
    EXPECT_EQ(info["periods"]["received"], kPeriods);
  }
  ::close(stalled);
  registry.stop_all();
}

}  // namespace
