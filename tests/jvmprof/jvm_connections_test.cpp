// SPDX-License-Identifier: Apache-2.0
// Each JVM's connection history (jvm_connections.h): why a connection ended, told from how the
// reader's stream ended, and one JVM's connections grouped under it — over real TCP connections
// into a SessionRegistry (an agent's reset, a reconnect that says connection=2 and reports what
// it dropped, an exit after the cumulative reports) and on records alone; with a profile store,
// the connections an earlier serve recorded come before the live ones.
#include "jvm_connections.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>

#include "session_registry.h"
#include "store.h"

namespace {

using namespace std::chrono_literals;
using jvmprof::ConnectionRecord;
using jvmprof::ReadEnd;

const char kHeader[] =
    "JAVA PROFILE 1.0.1, created Fri Nov 27 15:00:00 2026\n\nHeader text.\n--------\n\n";

std::string Identity(int pid, int connection) {
  std::string s = "IDENTITY: pid=" + std::to_string(pid) +
                  " host=web-3 main=app.Main vm=17.0.9 start=1000 labels=service=checkout";
  if (connection > 1) s += " connection=" + std::to_string(connection);
  return s + "\nTRACE 300001:\n\tapp.Hot.spin(Hot.java:10)\n\tapp.Main.main(Main.java:3)\n";
}

std::string Period(int seq, int samples) {
  const std::string start = std::to_string(1000 + (seq - 1) * 1000);
  const std::string end = std::to_string(1000 + seq * 1000);
  return "PERIOD BEGIN: seq=" + std::to_string(seq) + " start=" + start + " end=" + end +
         "\nCPU SAMPLES: total=" + std::to_string(samples) + " rows=1\n300001 " +
         std::to_string(samples) + "\nPERIOD END: seq=" + std::to_string(seq) + "\n";
}

// What HPROF writes at exit after the last period: the cumulative report.
const char kExitReport[] =
    "CPU SAMPLES BEGIN (total = 9) x\nrank   self  accum   count trace method\n"
    "   1 100.00% 100.00%       9 300001 app.Hot.spin\nCPU SAMPLES END\n";

bool Eventually(const std::function<bool()>& pred) {
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return pred();
}

// An agent's TCP connection into the registry (a loopback listener of the test's own), so
// that a reset is a real RST.
class Link {
 public:
  explicit Link(jvmprof::SessionRegistry& registry) {
    const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    EXPECT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(listener, 1), 0);
    ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
    agent_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    EXPECT_EQ(::connect(agent_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    const int served = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    ::close(listener);
    session_ = registry.add("JVM at test", served, true, 0);
  }
  ~Link() {
    if (agent_ >= 0) ::close(agent_);
  }
  void Send(const std::string& bytes) {
    ASSERT_EQ(::send(agent_, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  void Close() {
    ::close(agent_);
    agent_ = -1;
  }
  void Reset() {  // close with SO_LINGER 0: the peer reads ECONNRESET
    linger l{1, 0};
    ::setsockopt(agent_, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    Close();
  }
  const std::shared_ptr<jvmprof::Session>& session() const { return session_; }
  // Waits until the session has parsed `periods` periods (so what was sent has been read).
  bool Periods(uint64_t periods) const {
    return Eventually([&] { return session_->info()["periods"]["received"] >= periods; });
  }
  bool Ended() const {
    return Eventually([&] { return session_->info()["endedMs"] != 0; });
  }

 private:
  int agent_ = -1;
  std::shared_ptr<jvmprof::Session> session_;
};

std::vector<jvmprof::JvmHistory> History(const jvmprof::SessionRegistry& registry) {
  std::vector<ConnectionRecord> records;
  for (const auto& s : registry.all()) records.push_back(ConnectionRecord::from_info(s->info()));
  return jvmprof::group_connections(std::move(records));
}

TEST(EndCause, ToldFromHowTheStreamEnded) {
  EXPECT_EQ(jvmprof::end_cause({.stopped = true, .error = ECONNRESET}), "serve stopped");
  EXPECT_EQ(jvmprof::end_cause({.error = ECONNRESET}), "reset");
  EXPECT_EQ(jvmprof::end_cause({.error = ETIMEDOUT}),
            "read error: " + std::string(std::strerror(ETIMEDOUT)));
  EXPECT_EQ(jvmprof::end_cause({.exit_reports = true}), "agent exited");
  EXPECT_EQ(jvmprof::end_cause({}), "closed by agent");
  EXPECT_EQ(jvmprof::end_cause({.socket = false}), "end of file");
}

TEST(JvmConnections, AResetThenAReconnectAndAnExitAreOneJvmsHistory) {
  jvmprof::SessionRegistry registry(jvmprof::SessionLimits{});
  // Another JVM first, whose link is closed without the exit reports (a cut link, a reconnect).
  Link other(registry);
  other.Send(kHeader + Identity(99, 1) + Period(1, 2));
  ASSERT_TRUE(other.Periods(1));
  other.Close();
  ASSERT_TRUE(other.Ended());

  Link first(registry);
  first.Send(kHeader + Identity(4711, 1) + Period(1, 3) + Period(2, 4));
  ASSERT_TRUE(first.Periods(2));
  first.Reset();
  ASSERT_TRUE(first.Ended());

  // The reconnect's hello: connection=2 and what the agent dropped during the outage.
  Link second(registry);
  second.Send(kHeader + Identity(4711, 2) +
              "DROPPED: 7 events (700 bytes) while the front end was not reading\n" + Period(3, 5));
  ASSERT_TRUE(second.Periods(1));

  auto jvms = History(registry);
  ASSERT_EQ(jvms.size(), 2u);
  EXPECT_EQ(jvms[0].key, "web-3/99/1000");
  EXPECT_EQ(jvms[0].connections.at(0).end_cause, "closed by agent");
  EXPECT_EQ(jvms[0].drops(), 1u);
  const auto& jvm = jvms[1];
  EXPECT_EQ(jvm.key, "web-3/4711/1000");
  ASSERT_EQ(jvm.connections.size(), 2u);
  EXPECT_EQ(jvm.connections[0].session, first.session()->id());
  EXPECT_EQ(jvm.connections[0].end_cause, "reset");
  EXPECT_EQ(jvm.connections[0].periods_received, 2u);
  EXPECT_EQ(jvm.connections[1].session, second.session()->id());
  EXPECT_EQ(jvm.connections[1].connection, 2);
  EXPECT_EQ(jvm.connections[1].ended_ms, 0);
  // Commands go to the connection that is up.
  EXPECT_EQ(jvm.current, second.session()->id());
  EXPECT_EQ(jvm.reconnects(), 1u);
  EXPECT_EQ(jvm.drops(), 1u);
  auto json = jvm.to_json();
  EXPECT_EQ(json["connects"], 2);
  EXPECT_EQ(json["connected"], true);
  EXPECT_EQ(json["connections"][1]["droppedEventsAdded"], 7);
  EXPECT_EQ(json["connections"][1]["droppedBytesAdded"], 700);
  EXPECT_EQ(json["connections"][0]["droppedEventsAdded"], 0);
  EXPECT_EQ(json["latestPeriods"].size(), 1u);
  EXPECT_EQ(json["latestPeriods"][0]["seq"], 3);
  EXPECT_EQ(json["latestPeriods"][0]["cpuSamples"], 5);
  EXPECT_GE(json["connections"][1]["connectedMs"].get<int64_t>(),
            json["connections"][0]["endedMs"].get<int64_t>() -
                1000);  // the session's start is taken before its end is noted: 1 s of slack

  // The JVM exits: its last period, the cumulative report, the end of the stream.
  second.Send(Period(4, 1) + kExitReport);
  ASSERT_TRUE(second.Periods(2));
  second.Close();
  ASSERT_TRUE(second.Ended());
  jvms = History(registry);
  ASSERT_EQ(jvms.size(), 2u);
  EXPECT_EQ(jvms[1].connections[1].end_cause, "agent exited");
  EXPECT_EQ(jvms[1].drops(), 1u);  // an exit is not a drop
  EXPECT_EQ(jvms[1].to_json()["connected"], false);
  EXPECT_EQ(jvms[1].current, second.session()->id());  // the newest, when none is up
}

// Records alone: the agent's numbering orders a JVM's connections whatever order serve's
// sessions have; a JVM without an identity yet stands alone under its address.
TEST(JvmConnections, AgentOrderAndUnidentifiedConnections) {
  auto info = [](uint32_t id, const std::string& key, int64_t connection, int64_t ended) {
    return nlohmann::json{{"id", id},
                          {"identity", {{"key", key}, {"connection", connection}}},
                          {"live", true},
                          {"state", ended ? "ended" : "connected"},
                          {"startedAt", 100 * id},
                          {"endedMs", ended},
                          {"endCause", ended ? "closed by agent" : ""},
                          {"droppedEvents", 10 * connection},
                          {"periods", {{"received", id}, {"latest", nlohmann::json::array()}}}};
  };
  std::vector<ConnectionRecord> records = {
      ConnectionRecord::from_info(info(5, "h/1/1", 3, 0)),
      ConnectionRecord::from_info(info(2, "h/1/1", 1, 250)),
      ConnectionRecord::from_info(info(4, "JVM at 127.0.0.1:5", 0, 0)),
      ConnectionRecord::from_info(info(3, "h/1/1", 2, 350)),
  };
  const auto jvms = jvmprof::group_connections(records);
  ASSERT_EQ(jvms.size(), 2u);
  ASSERT_EQ(jvms[0].connections.size(), 3u);
  EXPECT_EQ(jvms[0].connections[0].session, 2u);
  EXPECT_EQ(jvms[0].connections[1].session, 3u);
  EXPECT_EQ(jvms[0].connections[2].session, 5u);
  EXPECT_EQ(jvms[0].reconnects(), 2u);
  EXPECT_EQ(jvms[0].drops(), 2u);
  const auto json = jvms[0].to_json();
  EXPECT_EQ(json["connections"][1]["gapMs"], 300 - 250);
  EXPECT_EQ(json["connections"][2]["droppedEventsAdded"], 10);
  EXPECT_EQ(jvms[1].key, "JVM at 127.0.0.1:5");
  EXPECT_EQ(jvms[1].connections[0].connection, 1);
}

// A connection tells the registry's hook when it begins (once its IDENTITY is read) and when it
// ends; a JVM's connections recorded by an earlier serve (in a profile store) come before its
// live one, the one whose collector died before its end was written shown as ended by that.
TEST(JvmConnections, HookToldOfBeginningAndEndAndStoredConnectionsComeFirst) {
  namespace fs = std::filesystem;
  std::string dir = (fs::temp_directory_path() / "jvm_connections_test.XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  auto history = store::open_store(dir + "/p.db");
  const store::JvmIdentity jvm{"web-3", 4711, "app.Main", "17.0.9", 1000, {}};
  store::Connection earlier;
  earlier.jvm = jvm;
  earlier.connection = 1;
  earlier.collector = "old-host pid 1";
  earlier.connected_ms = 500;
  ASSERT_TRUE(history->record_connection(earlier));  // no end: its serve was killed
  history->flush();

  jvmprof::SessionRegistry registry(jvmprof::SessionLimits{});
  std::mutex mu;
  std::vector<std::pair<jvmprof::JvmIdentity, ConnectionRecord>> events;
  registry.set_connection_hook([&](const jvmprof::JvmIdentity& id, const ConnectionRecord& c) {
    std::lock_guard lock(mu);
    events.emplace_back(id, c);
  });
  auto told = [&](size_t n) {
    return Eventually([&] {
      std::lock_guard lock(mu);
      return events.size() == n;
    });
  };
  // One that never says who it is: never told.
  Link anonymous(registry);
  anonymous.Send(kHeader);
  Link second(registry);
  second.Send(kHeader + Identity(4711, 2) + Period(3, 5));
  ASSERT_TRUE(second.Periods(1));
  ASSERT_TRUE(told(1));
  {
    std::lock_guard lock(mu);
    EXPECT_EQ(events[0].first.pid, 4711);
    EXPECT_EQ(events[0].first.start_ms, 1000);
    EXPECT_EQ(events[0].second.connection, 2);
    EXPECT_EQ(events[0].second.ended_ms, 0);
    EXPECT_EQ(events[0].second.session, second.session()->id());
    EXPECT_GT(events[0].second.connected_ms, 0);
  }

  auto jvms = History(registry);
  jvmprof::add_stored_connections(jvms, *history);
  const jvmprof::JvmHistory* mine = nullptr;
  for (const auto& j : jvms)
    if (j.key == "web-3/4711/1000") mine = &j;
  ASSERT_NE(mine, nullptr);
  ASSERT_EQ(mine->connections.size(), 2u);
  EXPECT_TRUE(mine->connections[0].stored);
  EXPECT_EQ(mine->connections[0].connection, 1);
  EXPECT_EQ(mine->connections[0].session, 0u);
  EXPECT_EQ(mine->connections[0].end_cause, jvmprof::kCollectorStopped);
  EXPECT_FALSE(mine->connections[0].end_known);
  EXPECT_EQ(mine->connections[0].collector, "old-host pid 1");
  EXPECT_FALSE(mine->connections[1].stored);
  EXPECT_EQ(mine->connections[1].session, second.session()->id());
  EXPECT_EQ(mine->current, second.session()->id());
  auto json = mine->to_json();
  EXPECT_EQ(json["connects"], 2);
  EXPECT_EQ(json["drops"], 0);  // a collector that stopped is not a cut link
  EXPECT_EQ(json["connected"], true);
  EXPECT_EQ(json["identity"]["pid"], 4711);
  EXPECT_EQ(json["connections"][0]["stored"], true);
  EXPECT_EQ(json["connections"][0]["endKnown"], false);

  // Its end: told once more, with how it ended and what it received.
  second.Close();
  ASSERT_TRUE(second.Ended());
  ASSERT_TRUE(told(2));
  {
    std::lock_guard lock(mu);
    EXPECT_EQ(events[1].second.end_cause, "closed by agent");
    EXPECT_GT(events[1].second.ended_ms, 0);
    EXPECT_EQ(events[1].second.periods_received, 1u);
    EXPECT_EQ(events[1].second.connected_ms, events[0].second.connected_ms);
  }
  anonymous.Close();
  ASSERT_TRUE(anonymous.Ended());
  registry.stop_all();
  {
    std::lock_guard lock(mu);
    EXPECT_EQ(events.size(), 2u);  // nothing for the anonymous one
  }
  history.reset();
  fs::remove_all(dir);
}

}  // namespace
