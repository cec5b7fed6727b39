// SPDX-License-Identifier: Apache-2.0
// HPROF's period= against a live JVM (JDK 17, and JDK 25 when installed), in both formats: the
// periods of a run add up to the cumulative report HPROF writes at exit — the same traces with the
// same CPU samples (or cpu=times calls), the same allocation sites with the same allocated bytes
// and objects, the same contended monitors with the same counts — and they follow each other
// without gaps. Read with the profiles library, as jvmprof serve reads them.
//
// And a collector that goes away: the JVM streams with period= to jvmprof serve's receiver
// (jvmprof::Session), which is stopped and its port closed and re-opened three times while the
// program runs; every new connection carries the JVM's identity (the same pid, its connection
// number) and periods, and the program's output and exit code are those of an undisturbed run.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "agent_session.h"
#include "hprof_test.h"
#include "profiles.h"

namespace hproftest {
namespace {

// The sums of a run's periods, keyed as the cumulative sections key their rows.
struct Sums {
  std::vector<profiles::PeriodDelta> periods;
  std::map<uint32_t, uint64_t> cpu;     // trace -> samples/calls
  std::map<uint32_t, uint64_t> cpu_ns;  // cpu=times: trace -> self time, ns
  std::map<std::pair<std::string, uint32_t>, std::pair<uint64_t, uint64_t>> sites;  // bytes, objs
  std::map<std::pair<uint32_t, std::string>, uint64_t> monitors;  // (trace, class) -> count
};

// The keys where two maps differ, with both values ("-" where one has none), for messages.
template <typename Map, typename Show>
std::string Differences(const Map& a, const Map& b, Show show) {
  std::string out;
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end() || it->second != v)
      out += show(k) + ": " + show(v) + " vs " + (it == b.end() ? "-" : show(it->second)) + "\n";
  }
  for (const auto& [k, v] : b)
    if (!a.count(k)) out += show(k) + ": - vs " + show(v) + "\n";
  return out;
}

std::string Show(const std::string& s) {
  return s;
}
std::string Show(uint32_t v) {
  return std::to_string(v);
}
std::string Show(uint64_t v) {
  return std::to_string(v);
}
template <typename A, typename B>
std::string Show(const std::pair<A, B>& p) {
  return "(" + Show(p.first) + ", " + Show(p.second) + ")";
}

class PeriodJvmTest : public HprofTest {
 protected:
  // Runs PeriodicWork for `millis` with `options` + period=1 into `file`, and reads the file.
  profiles::JavaProfile RunAndRead(const std::string& options, const std::string& file,
                                   Sums& sums) {
    const RunResult r =
        Run(options + ",period=1,cutoff=0,file=" + file, "hproftest.PeriodicWork", {"3200"});
    EXPECT_TRUE(r.exited(0)) << r.describe();
    EXPECT_NE(r.out.find("PERIODIC rounds="), std::string::npos) << r.describe();
    profiles::StreamReader reader(file);
    reader.on_period([&sums](const profiles::PeriodDelta& d) {
      sums.periods.push_back(d);
      const auto& cpu = d.cpu_samples ? d.cpu_samples : d.cpu_time;
      if (cpu)
        for (const auto& row : cpu->rows) sums.cpu[row.trace] += row.count;
      if (d.cpu_time)
        for (const auto& row : d.cpu_time->rows) sums.cpu_ns[row.trace] += row.time_ns;
      if (d.sites) {
        for (const auto& s : *d.sites) {
          auto& v = sums.sites[{s.class_name, s.trace}];
          v.first += s.alloc_bytes;
          v.second += s.alloc_objects;
        }
      }
      if (d.monitor_time)
        for (const auto& row : d.monitor_time->rows)
          sums.monitors[{row.trace, row.name}] += row.count;
    });
    std::ifstream in(path(file), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // In small pieces, as a socket delivers them: a block split anywhere still parses.
    for (size_t at = 0; at < bytes.size(); at += 4093)
      reader.feed(std::string_view(bytes).substr(at, 4093));
    reader.finish();
    return reader.profile();
  }

  // The periods follow each other: numbered from 1, each starting where the last one ended.
  static void ExpectContiguous(const Sums& sums) {
    // The program runs 3.2 s with period=1: at least one period ends on the timer before the
    // last one, written at exit (it would take a stall of over 2 s of the period thread to miss).
    ASSERT_GE(sums.periods.size(), 2u);
    for (size_t i = 0; i < sums.periods.size(); ++i) {
      EXPECT_EQ(sums.periods[i].seq, i + 1);
      EXPECT_LE(sums.periods[i].start_ms, sums.periods[i].end_ms);
      if (i > 0) {
        EXPECT_EQ(sums.periods[i].start_ms, sums.periods[i - 1].end_ms);
      }
    }
  }

  static void ExpectCpuAddsUp(const profiles::CostSection& cumulative, const Sums& sums) {
    std::map<uint32_t, uint64_t> rows;
    for (const auto& row : cumulative.rows) rows[row.trace] += row.count;
    ASSERT_FALSE(rows.empty());
    EXPECT_EQ(sums.cpu, rows) << "periods vs report:\n"
                              << Differences(sums.cpu, rows, [](const auto& x) { return Show(x); });
  }

  // `binary`: format=b's ALLOC SITES names an object array by its element class, and the reader
  // adds "[]" only when that name has none, so an array of int[] reads as int[]: the periods'
  // names (the agent's, int[][]) are compared with one "[]" of an array of arrays dropped.
  static void ExpectSitesAddUp(const std::vector<profiles::Site>& cumulative, const Sums& sums,
                               bool binary = false) {
    auto name = [binary](std::string n) {
      if (binary && n.ends_with("[][]")) n.resize(n.size() - 2);
      return n;
    };
    std::map<std::pair<std::string, uint32_t>, std::pair<uint64_t, uint64_t>> rows, periods;
    for (const auto& s : cumulative) {
      if (s.alloc_objects == 0) continue;
      auto& v = rows[{name(s.class_name), s.trace}];
      v.first += s.alloc_bytes;
      v.second += s.alloc_objects;
    }
    for (const auto& [key, v] : sums.sites) {
      auto& p = periods[{name(key.first), key.second}];
      p.first += v.first;
      p.second += v.second;
    }
    ASSERT_FALSE(rows.empty());
    EXPECT_EQ(periods, rows) << "periods vs report:\n"
                             << Differences(periods, rows, [](const auto& x) { return Show(x); });
    // The program's own objects are among them: 100 Items a round.
    uint64_t items = 0;
    for (const auto& [key, v] : sums.sites)
      if (key.first == "hproftest.PeriodicWork$Item") items += v.second;
    EXPECT_GT(items, 0u);
    EXPECT_EQ(items % 100, 0u);
  }
};

TEST_P(PeriodJvmTest, TextPeriodsAddUpToTheReportAtExit) {
  Sums sums;
  const profiles::JavaProfile p = RunAndRead("cpu=samples,heap=sites,monitor=y", "p.txt", sums);
  ExpectContiguous(sums);
  ASSERT_TRUE(p.cpu_samples.has_value());
  ExpectCpuAddsUp(*p.cpu_samples, sums);
  ASSERT_TRUE(p.sites.has_value());
  ExpectSitesAddUp(*p.sites, sums);
  ASSERT_TRUE(p.monitor_time.has_value());
  std::map<std::pair<uint32_t, std::string>, uint64_t> monitors;
  for (const auto& row : p.monitor_time->rows) monitors[{row.trace, row.name}] += row.count;
  EXPECT_EQ(sums.monitors, monitors);
  uint64_t contended = 0;
  for (const auto& [key, count] : sums.monitors)
    if (key.second == "hproftest.PeriodicWork$Lock") contended += count;
  EXPECT_GT(contended, 0u);
  EXPECT_EQ(p.periods, sums.periods.size());
}

TEST_P(PeriodJvmTest, BinaryPeriodsAddUpToTheReportAtExit) {
  Sums sums;
  const profiles::JavaProfile p = RunAndRead("cpu=samples,heap=sites,format=b", "p.hprof", sums);
  ExpectContiguous(sums);
  ASSERT_TRUE(p.cpu_samples.has_value());
  ExpectCpuAddsUp(*p.cpu_samples, sums);
  ASSERT_TRUE(p.sites.has_value());
  ExpectSitesAddUp(*p.sites, sums, /*binary=*/true);
}

TEST_P(PeriodJvmTest, CpuTimesPeriodsAddUpToTheReportAtExit) {
  Sums sums;
  const profiles::JavaProfile p = RunAndRead("cpu=times", "t.txt", sums);
  ExpectContiguous(sums);
  ASSERT_TRUE(p.cpu_time.has_value());
  // CPU TIME lists no row of zero self time (a call too short for the clock, e.g. one during the
  // exit's println): such a trace is in a period, with its 0 ns, but not in the report.
  for (const auto& [trace, ns] : sums.cpu_ns)
    if (ns == 0) sums.cpu.erase(trace);
  ExpectCpuAddsUp(*p.cpu_time, sums);
}

INSTANTIATE_FOR_JDKS(PeriodJvmTest);

// A collector's listening socket on 127.0.0.1:port (0: any free port), closed by the destructor.
class CollectorPort {
 public:
  explicit CollectorPort(int port = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port));
    socklen_t len = sizeof a;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 4) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      throw std::runtime_error("cannot listen on 127.0.0.1:" + std::to_string(port));
    port_ = ntohs(a.sin_port);
  }
  ~CollectorPort() { ::close(fd_); }
  int port() const { return port_; }
  // The next agent's connection, or -1 if the JVM ended first.
  int accept_from(JavaProcess& jvm) {
    while (jvm.running()) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) > 0) return ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    }
    return -1;
  }

 private:
  int fd_ = -1;
  int port_ = 0;
};

class ReconnectJvmTest : public HprofTest {};

TEST_P(ReconnectJvmTest, CollectorRestartedThreeTimesGetsIdentityAndPeriodsEachTime) {
  auto port = std::make_unique<CollectorPort>();
  const int number = port->port();
  JavaCommand command =
      Command("cpu=samples,heap=sites,period=1,label=service=checkout;env=test,net=127.0.0.1:" +
                  std::to_string(number),
              "hproftest.PeriodicWork", {"-"});
  command.env.push_back({"HPROF_LABELS", "team=profiling"});
  JavaProcess jvm(jdk(), command, dir().path());
  int last_number = 1;
  for (int connection = 1; connection <= 4; ++connection) {
    const int fd = port->accept_from(jvm);
    ASSERT_GE(fd, 0) << "connection " << connection << ": the JVM ended before it connected\n"
                     << jvm.stderr_so_far();
    std::atomic<uint64_t> periods{0};
    std::atomic<int64_t> first_start{0};
    auto session = std::make_unique<jvmprof::Session>(connection, "agent", fd, true, 0,
                                                      jvmprof::SessionLimits{});
    session->set_period_hook([&](const jvmprof::JvmIdentity& id, int64_t start_ms, int64_t,
                                 const profiles::JavaProfile&) {
      if (id.pid != 0 && periods++ == 0) first_start = start_ms;
    });
    session->start();
    // Two periods on this connection (period=1: two seconds, unless the JVM stalls).
    ASSERT_TRUE(jvm.wait_until([&] { return periods.load() >= 2; }))
        << "connection " << connection << ": " << session->info().dump() << "\n"
        << jvm.stderr_so_far();
    const jvmprof::JvmIdentity id = session->identity();
    EXPECT_EQ(id.pid, jvm.pid());
    EXPECT_EQ(id.labels.at("service"), "checkout");
    EXPECT_EQ(id.labels.at("env"), "test");
    EXPECT_EQ(id.labels.at("team"), "profiling");
    EXPECT_EQ(id.main, "hproftest.PeriodicWork");
    EXPECT_FALSE(id.vm.empty());
    const auto p = session->profile();
    // Every connection after the first says which one it is: a later one each time (the agent
    // may have connected to the closing port once more than we accepted).
    if (connection == 1) {
      EXPECT_EQ(id.connection, 1);
    }
    if (connection > 1) {
      const int number_sent = std::stoi(p->agent_identity.at("connection"));
      EXPECT_GT(number_sent, last_number);
      EXPECT_GE(number_sent, connection);
      EXPECT_EQ(id.connection, number_sent);
      last_number = number_sent;
    }
    // The traces the periods name came with the hello.
    for (const auto& e : session->periods()) {
      if (!e.rows->cpu_samples) continue;
      const profiles::JavaProfile period = session->period_profile(e);
      for (const auto& row : e.rows->cpu_samples->rows) {
        EXPECT_NE(period.trace(row.trace), nullptr) << "trace " << row.trace;
      }
    }
    if (connection == 4) {
      jvm.write_stdin("stop\n");
      const RunResult r = jvm.wait();
      EXPECT_TRUE(r.exited(0)) << r.describe();
      EXPECT_NE(r.out.find("PERIODIC rounds="), std::string::npos) << r.describe();
      EXPECT_EQ(r.out.find("hprof"), std::string::npos) << r.describe();
      session->stop();
      // The last collector got the report at exit.
      EXPECT_TRUE(session->profile()->cpu_samples.has_value());
      break;
    }
    // The collector goes away: its connection and its port closed; a new one listens after.
    // (The port first: else the agent may reconnect to it before it closes.)
    port.reset();
    session->stop();
    session.reset();
    port = std::make_unique<CollectorPort>(number);
  }
}

INSTANTIATE_FOR_JDKS(ReconnectJvmTest);

}  // namespace
}  // namespace hproftest
