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
// With thread=y (traces per thread), every thread a period's trace or a THREAD END names on a
// connection had its THREAD START on that connection, also a thread started before it.
// With format=b the test is the collector itself: each connection's bytes must stand alone (every
// name, class, frame and trace a record names was sent on that connection, before it is named),
// and the periods of all connections follow each other without a gap. Events made while no
// collector listens arrive after the reconnect when they fit in netqueue=, else are counted.
#include <arpa/inet.h>
#include <hprof_format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "agent_session.h"
#include "hprof_test.h"
#include "profiles.h"

namespace hproftest {
namespace {

// HPROF's serial for a thread it never saw start (JDK 8's "unknown thread").
constexpr uint32_t kUnknownThread = 200000;

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
  ~CollectorPort() { close(); }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
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
  JavaCommand command = Command(
      "cpu=samples,heap=sites,thread=y,period=1,label=service=checkout;env=test,"
      "net=127.0.0.1:" +
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
    // The traces the periods name came with the hello, and so did the threads those traces name
    // (main started long before this connection): a THREAD START read on it.
    const auto announced = [&p](uint32_t thread) {
      const auto it = p->threads.find(thread);
      return thread == 0 || thread == kUnknownThread ||
             (it != p->threads.end() && it->second.start_read_ms != 0);
    };
    size_t thread_rows = 0;
    for (const auto& e : session->periods()) {
      if (!e.rows->cpu_samples) continue;
      const profiles::JavaProfile period = session->period_profile(e);
      for (const auto& row : e.rows->cpu_samples->rows) {
        const profiles::Trace* t = period.trace(row.trace);
        EXPECT_NE(t, nullptr) << "trace " << row.trace;
        if (t == nullptr) continue;
        thread_rows += t->thread != 0;
        EXPECT_TRUE(announced(t->thread))
            << "connection " << connection << ": a period's trace " << row.trace << " names thread "
            << t->thread << ", not started on this connection";
      }
    }
    EXPECT_GT(thread_rows, 0u) << "thread=y: the periods' traces name their threads";
    // A THREAD END names a thread started on this connection too.
    for (const auto& [serial, t] : p->threads) {
      EXPECT_TRUE(!t.ended || announced(serial))
          << "connection " << connection << ": THREAD END of thread " << serial
          << ", not started on this connection";
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

// One agent connection as a collector gets it, read on a thread of its own: its bytes kept, and
// fed as they come to the profiles library's StreamReader (as jvmprof serve reads them). After
// `stop_after` periods (0: never) it goes away at once, as a restarted collector does: first
// `go_away` (which closes the listening port, so the agent cannot reconnect to it), then the
// connection.
class CollectorConnection {
 public:
  CollectorConnection(int fd, size_t stop_after, std::function<void()> go_away)
      : fd_(fd), stop_after_(stop_after), go_away_(std::move(go_away)), reader_("connection") {
    reader_.on_period([this](const profiles::PeriodDelta& d) { periods_.push_back(d); });
    thread_ = std::thread([this] { run(); });
  }
  ~CollectorConnection() { join(); }
  // Whether it has gone away or the agent closed it.
  bool ended() const { return ended_; }
  size_t periods_so_far() const { return period_count_; }
  // Waits for the end (the agent's close, or stop_after periods).
  void join() {
    if (thread_.joinable()) thread_.join();
  }
  // After join():
  const std::string& bytes() const { return bytes_; }
  const std::vector<profiles::PeriodDelta>& periods() const { return periods_; }
  const profiles::JavaProfile& profile() const { return reader_.profile(); }
  const std::string& error() const { return error_; }

 private:
  void run() {
    char buffer[65536];
    for (;;) {
      const ssize_t n = ::read(fd_, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      bytes_.append(buffer, static_cast<size_t>(n));
      try {
        reader_.feed(std::string_view(buffer, static_cast<size_t>(n)));
      } catch (const profiles::ProfileError& e) {
        error_ = e.what();
        break;
      }
      period_count_ = periods_.size();
      if (stop_after_ != 0 && periods_.size() >= stop_after_) {
        go_away_();
        ::close(fd_);
        fd_ = -1;
        ended_ = true;
        return;
      }
    }
    try {
      reader_.finish();
    } catch (const profiles::ProfileError& e) {
      if (error_.empty()) error_ = e.what();
    }
    ::close(fd_);
    fd_ = -1;
    ended_ = true;
  }

  int fd_;
  const size_t stop_after_;
  std::function<void()> go_away_;
  profiles::StreamReader reader_;
  std::string bytes_;
  std::vector<profiles::PeriodDelta> periods_;
  std::string error_;
  std::atomic<size_t> period_count_{0};
  std::atomic<bool> ended_{false};
  std::thread thread_;
};

// Checks that a format=b connection stands alone (with the formats library's parser, which reads
// every record, where the profiles library keeps only what it shows): every name id, class serial,
// frame id and trace serial a record (or a PERIOD note's row) names was defined by a record earlier
// on it, and every thread serial a PERIOD row's trace (thread=y) or an END THREAD names was started
// on it (the hello replays START THREAD for the threads alive, or ended since the last period).
// Lists the first problems; "" when there are none. A STACK TRACE alone may name a thread that
// ended long before the connection (the hello replays every trace, not every thread), so a trace's
// thread is checked where a period names the trace.
class StandAloneCheck : public hprof::Visitor {
 public:
  // `whole`: the agent closed the connection (else the collector cut it, maybe inside a record,
  // and only the complete records are checked).
  static std::string Of(const std::string& bytes, bool whole) {
    StandAloneCheck check;
    try {
      hprof::StreamParser parser(check, "connection");
      parser.feed(bytes.data(), bytes.size());
      if (whole) parser.finish();
    } catch (const std::exception& e) {
      check.Problem(e.what());
    }
    // thread=y: else the thread check above checked nothing.
    if (check.periods_ != 0 && check.thread_rows_ == 0)
      check.Problem("no PERIOD row's trace names a thread (thread=y)");
    return check.problems_;
  }

 private:
  void Problem(const std::string& what) {
    if (++count_ <= 10) problems_ += what + "\n";
  }
  void Name(hprof::Id id, const char* where) {
    if (id != 0 && names_.count(id) == 0)
      Problem(std::string(where) + " names unknown name id " + std::to_string(id));
  }
  void Trace(uint32_t serial, const char* where) {
    if (traces_.count(serial) == 0)
      Problem(std::string(where) + " names unknown trace " + std::to_string(serial));
  }
  void Thread(uint32_t serial, const std::string& where) {
    if (serial != 0 && serial != kUnknownThread && threads_.count(serial) == 0)
      Problem(where + " names thread " + std::to_string(serial) + ", not started on it");
  }
  // A PERIOD row's trace: known, and its thread started on this connection.
  void PeriodTrace(uint32_t serial, const char* where) {
    Trace(serial, where);
    const auto it = traces_.find(serial);
    if (it == traces_.end()) return;
    thread_rows_ += it->second != 0;
    Thread(it->second, std::string(where) + "'s trace " + std::to_string(serial));
  }
  void on_utf8(const hprof::Utf8& r) override {
    names_.insert(r.id);
    if (r.id != ~uint64_t{3}) return;  // the PERIOD note
    profiles::PeriodDelta d;
    std::string why;
    if (!profiles::parse_period(r.text, d, why)) return Problem("PERIOD note: " + why);
    ++periods_;
    const auto& cpu = d.cpu_samples ? d.cpu_samples : d.cpu_time;
    if (cpu)
      for (const auto& row : cpu->rows) PeriodTrace(row.trace, "a PERIOD row");
    if (d.sites)
      for (const auto& site : *d.sites) PeriodTrace(site.trace, "a PERIOD site");
  }
  void on_load_class(const hprof::LoadClass& r) override {
    Name(r.name_id, "LOAD CLASS");
    classes_.insert(r.class_serial);
  }
  void on_stack_frame(const hprof::StackFrame& r) override {
    Name(r.method_name_id, "STACK FRAME");
    Name(r.signature_id, "STACK FRAME");
    Name(r.source_file_id, "STACK FRAME");
    // Class serial 0 names no class (HPROF's frames of no loaded class).
    if (r.class_serial != 0 && classes_.count(r.class_serial) == 0)
      Problem("STACK FRAME names unknown class " + std::to_string(r.class_serial));
    frames_.insert(r.frame_id);
  }
  void on_stack_trace(const hprof::StackTrace& r) override {
    for (hprof::Id f : r.frame_ids)
      if (frames_.count(f) == 0) Problem("STACK TRACE names unknown frame " + std::to_string(f));
    traces_[r.trace_serial] = r.thread_serial;
  }
  void on_start_thread(const hprof::StartThread& r) override {
    Name(r.name_id, "START THREAD");
    Name(r.group_name_id, "START THREAD");
    Name(r.parent_group_name_id, "START THREAD");
    threads_.insert(r.thread_serial);
  }
  void on_end_thread(const hprof::EndThread& r) override { Thread(r.thread_serial, "END THREAD"); }
  void on_cpu_samples(const hprof::CpuSamples& r) override {
    for (const auto& s : r.traces) Trace(s.trace_serial, "CPU SAMPLES");
  }
  void on_alloc_sites(const hprof::AllocSites& r) override {
    for (const auto& s : r.sites) {
      Trace(s.trace_serial, "ALLOC SITES");
      if (s.class_serial != 0 && classes_.count(s.class_serial) == 0)
        Problem("ALLOC SITES names unknown class " + std::to_string(s.class_serial));
    }
  }

  std::set<hprof::Id> names_, frames_;
  std::set<uint32_t> classes_, threads_;
  std::map<uint32_t, uint32_t> traces_;  // trace serial -> its thread serial (0 without thread=y)
  size_t periods_ = 0;
  size_t thread_rows_ = 0;  // PERIOD rows whose trace names a thread
  size_t count_ = 0;
  std::string problems_;
};

class BinaryReconnectJvmTest : public HprofTest {};

// format=b: the collector is not there when the JVM starts (the agent retries, the program runs),
// then it is restarted three times; each connection must stand alone and carry the identity and
// its number, and the periods of all connections follow each other: no period lost, none repeated.
TEST_P(BinaryReconnectJvmTest, CollectorRestartedThreeTimesEachConnectionStandsAlone) {
  const int number = CollectorPort().port();  // free now; nobody listens when the JVM starts
  JavaCommand command = Command(
      "cpu=samples,heap=sites,thread=y,format=b,period=1,label=service=checkout,"
      "net=127.0.0.1:" +
          std::to_string(number),
      "hproftest.PeriodicWork", {"-"});
  JavaProcess jvm(jdk(), command, dir().path());
  ASSERT_TRUE(jvm.wait_until([&] {
    return jvm.stderr_so_far().find("retrying") != std::string::npos;
  })) << jvm.stderr_so_far();
  std::vector<profiles::PeriodDelta> all;
  for (int connection = 1; connection <= 4; ++connection) {
    auto port = std::make_unique<CollectorPort>(number);
    const int fd = port->accept_from(jvm);
    ASSERT_GE(fd, 0) << "connection " << connection << ": the JVM ended before it connected\n"
                     << jvm.stderr_so_far();
    // Two periods, then away (right after the second one has arrived: the next is due a period
    // later, and the agent sees the close within that second, so no period is sent into a closed
    // connection unless the agent's listener thread is held up for a whole second).
    const bool last = connection == 4;
    CollectorConnection collector(fd, last ? 0 : 2, [&port] { port->close(); });
    if (last) {
      ASSERT_TRUE(jvm.wait_until([&] { return collector.periods_so_far() >= 2; }))
          << jvm.stderr_so_far();
      jvm.write_stdin("stop\n");
      const RunResult r = jvm.wait();
      EXPECT_TRUE(r.exited(0)) << r.describe();
      EXPECT_NE(r.out.find("PERIODIC rounds="), std::string::npos) << r.describe();
      EXPECT_EQ(r.out.find("hprof"), std::string::npos) << r.describe();
    } else {
      ASSERT_TRUE(jvm.wait_until([&] { return collector.ended(); }))
          << "connection " << connection << ": " << jvm.stderr_so_far();
    }
    collector.join();
    EXPECT_EQ(collector.error(), "") << "connection " << connection;
    const profiles::JavaProfile& p = collector.profile();
    ASSERT_FALSE(p.agent_identity.empty()) << "connection " << connection;
    EXPECT_EQ(p.agent_identity.at("pid"), std::to_string(jvm.pid()));
    EXPECT_EQ(p.agent_labels.at("service"), "checkout");
    // The first connection the agent made is the first we accepted: nobody listened before.
    if (connection == 1) {
      EXPECT_EQ(p.agent_identity.at("connection"), "1");
    } else {
      EXPECT_GE(std::stoi(p.agent_identity.at("connection")), connection);
    }
    EXPECT_EQ(StandAloneCheck::Of(collector.bytes(), last), "") << "connection " << connection;
    // The traces the periods name resolve in the profile read from this connection alone.
    for (const auto& d : collector.periods()) {
      if (!d.cpu_samples) continue;
      for (const auto& row : d.cpu_samples->rows) {
        const profiles::Trace* t = p.trace(row.trace);
        ASSERT_NE(t, nullptr) << "trace " << row.trace;
        // (A frame of no loaded class reads "<unknown class>.<in VM code>...": class serial 0.)
        for (const auto& f : t->frames) {
          EXPECT_NE(f.method, "<unknown frame>");
          EXPECT_FALSE(f.method.ends_with(".")) << f.method;
        }
      }
    }
    EXPECT_GE(collector.periods().size(), 2u) << "connection " << connection;
    all.insert(all.end(), collector.periods().begin(), collector.periods().end());
    if (last) {
      EXPECT_TRUE(p.cpu_samples.has_value());  // the report at exit
    }
  }
  // No gap: numbered from 1 without a hole, each starting where the one before ended.
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].seq, i + 1);
    if (i > 0) {
      EXPECT_EQ(all[i].start_ms, all[i - 1].end_ms) << "period " << all[i].seq;
    }
  }
}

INSTANTIATE_FOR_JDKS(BinaryReconnectJvmTest);

// Events made while no collector listens (200 threads started and ended): kept and sent after the
// reconnect's hello when they fit in netqueue=, else dropped and counted. In both formats.
class OutageEventsJvmTest : public HprofTest {
 protected:
  struct Seen {
    size_t starts = 0, ends = 0;  // of the Outage-* threads, on the connection after the outage
    uint64_t dropped = 0;         // the running total of dropped events it reports
    size_t on_first = 0;          // Outage-* threads on the connection before it
  };

  Seen RunOutage(const std::string& options) {
    Seen seen;
    auto port = std::make_unique<CollectorPort>();
    const int number = port->port();
    JavaProcess jvm(
        jdk(),
        Command(options + ",cpu=samples,period=1,net=127.0.0.1:" + std::to_string(number),
                "hproftest.PeriodicWork", {"-"}),
        dir().path());
    int fd = port->accept_from(jvm);
    EXPECT_GE(fd, 0) << jvm.stderr_so_far();
    if (fd < 0) return seen;
    CollectorConnection first(fd, 1, [&port] { port->close(); });
    EXPECT_TRUE(jvm.wait_until([&] { return first.ended(); })) << jvm.stderr_so_far();
    first.join();
    // The agent has seen the collector go; the threads come while nobody listens.
    EXPECT_TRUE(jvm.wait_until([&] {
      return jvm.stderr_so_far().find("reconnecting") != std::string::npos;
    })) << jvm.stderr_so_far();
    jvm.write_stdin("threads 200\n");
    EXPECT_TRUE(jvm.wait_for_stdout("THREADS 200")) << jvm.stderr_so_far();
    port = std::make_unique<CollectorPort>(number);
    fd = port->accept_from(jvm);
    EXPECT_GE(fd, 0) << jvm.stderr_so_far();
    if (fd < 0) return seen;
    {
      // The kept events come right after the hello, before the first period.
      CollectorConnection second(fd, 1, [&port] { port->close(); });
      EXPECT_TRUE(jvm.wait_until([&] { return second.ended(); })) << jvm.stderr_so_far();
      second.join();
      EXPECT_EQ(second.error(), "");
      for (const auto& [serial, t] : second.profile().threads) {
        if (!t.name.starts_with("Outage-")) continue;
        ++seen.starts;
        if (t.ended) ++seen.ends;
      }
      seen.dropped = second.profile().dropped_events;
      std::printf(
          "%s: %zu of 200 Outage threads' starts and %zu ends after the reconnect, %llu "
          "events dropped in all\n",
          options.c_str(), seen.starts, seen.ends, static_cast<unsigned long long>(seen.dropped));
    }
    for (const auto& [serial, t] : first.profile().threads)
      if (t.name.starts_with("Outage-")) ++seen.on_first;
    // The program is undisturbed.
    port = std::make_unique<CollectorPort>(number);
    jvm.write_stdin("stop\n");
    const RunResult r = jvm.wait();
    EXPECT_TRUE(r.exited(0)) << r.describe();
    EXPECT_NE(r.out.find("PERIODIC rounds="), std::string::npos) << r.describe();
    return seen;
  }
};

TEST_P(OutageEventsJvmTest, BinaryEventsThatFitArriveAfterTheReconnect) {
  const Seen s = RunOutage("format=b");
  EXPECT_EQ(s.on_first, 0u);
  EXPECT_EQ(s.starts, 200u);
  EXPECT_EQ(s.ends, 200u);
}

TEST_P(OutageEventsJvmTest, TextEventsThatFitArriveAfterTheReconnect) {
  const Seen s = RunOutage("format=a");
  EXPECT_EQ(s.on_first, 0u);
  EXPECT_EQ(s.starts, 200u);
  EXPECT_EQ(s.ends, 200u);
}

// netqueue=4k holds about 60 of the 400 events (a text THREAD START is about 90 bytes, an END
// about 25; a binary START about 90 with its name, an END 16): some arrive, the rest are counted.
// The starts all arrive anyway: the hello replays every thread that ended since the last period
// (the next period may name it), so it is the ends that tell kept from dropped. Every one of the
// 200 ends either arrived or was dropped, so the drops are at least the ends that did not arrive
// (they may be more: starts, and events dropped while connected).
TEST_P(OutageEventsJvmTest, BinaryEventsBeyondNetqueueAreCounted) {
  const Seen s = RunOutage("format=b,netqueue=4k");
  EXPECT_EQ(s.starts, 200u);
  EXPECT_GT(s.ends, 0u);
  EXPECT_LT(s.ends, 200u);
  EXPECT_GE(s.dropped, 200u - s.ends);
}

TEST_P(OutageEventsJvmTest, TextEventsBeyondNetqueueAreCounted) {
  const Seen s = RunOutage("format=a,netqueue=4k");
  EXPECT_EQ(s.starts, 200u);
  EXPECT_GT(s.ends, 0u);
  EXPECT_LT(s.ends, 200u);
  EXPECT_GE(s.dropped, 200u - s.ends);
}

INSTANTIATE_FOR_JDKS(OutageEventsJvmTest);

}  // namespace
}  // namespace hproftest
