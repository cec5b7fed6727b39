// SPDX-License-Identifier: Apache-2.0
// jvmprof serve's receiver and command protocol against a live JVM running HPROF with net= (JDK 17,
// and JDK 25 when installed), in both stream formats: every command that HPROF answers is
// answered, the others are accepted without disturbing the JVM, reset-cpu clears the CPU costs,
// exit needs its confirmation and ends the JVM, and a JVM killed mid-run leaves its profile;
// cpu=times arrives with exact call counts; a front end that stops reading does not block the JVM
// and is told what was dropped.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <map>
#include <thread>
#include <vector>

#include "agent_session.h"
#include "hprof_test.h"

namespace hproftest {
namespace {

using namespace std::chrono_literals;

class Listener {
 public:
  Listener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 1) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      throw std::runtime_error("cannot listen on loopback");
    port_ = ntohs(a.sin_port);
  }
  ~Listener() { ::close(fd_); }
  // A small receive buffer (inherited by the accepted socket), so that a peer that does not read
  // fills the agent's queue sooner.
  void small_receive_buffer() {
    const int size = 4096;
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  }
  int port() const { return port_; }
  int accept_one(JavaProcess& jvm) {
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

// A program whose front end reads nothing until the program prints `done`, in either format.
struct StalledRun {
  std::string options;  // HPROF's, before netqueue= and net=
  std::string program;
  std::vector<std::string> args;
  std::string done;
};

class SessionJvmTest : public HprofTest {
 protected:
  using StalledChecks = std::function<void(jvmprof::Session&, const nlohmann::json& info)>;
  void ControlProtocol(bool binary);
  void StalledFrontEnd(const StalledRun& stalled, const StalledChecks& format_checks);
};

bool Eventually(JavaProcess& jvm, const std::function<bool()>& pred) {
  return jvm.wait_until(pred);
}

// Whether the session ends (it has read the stream to its end) within a minute. Not Eventually:
// the JVM may be gone while the last of its stream is still in the socket for the session to read.
bool SessionEnds(jvmprof::Session& s) {
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  for (;;) {
    const std::string state = s.info()["state"];
    if (state == "ended") return true;
    if (state == "error" || std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
}

std::string CommandState(jvmprof::Session& s, uint64_t serial) {
  const nlohmann::json info = s.info();  // kept: the loop must not run over a temporary
  for (const auto& c : info["commands"])
    if (c["serial"] == serial) return c["state"];
  return "?";
}

void SessionJvmTest::ControlProtocol(bool binary) {
  Listener listener;
  const std::string net = "net=127.0.0.1:" + std::to_string(listener.port());
  JavaProcess jvm(
      jdk(),
      // sample=0: exact counts (over net= heap=sites samples by default), checked below.
      Command(
          "cpu=samples,heap=sites,sample=0,depth=8," + std::string(binary ? "format=b," : "") + net,
          "hproftest.Blocker"),
      dir().path());
  const int fd = listener.accept_one(jvm);
  ASSERT_GE(fd, 0) << "HPROF did not connect\n" << jvm.wait().describe();
  jvmprof::SessionLimits limits;
  limits.command_timeout = 60s;
  jvmprof::Session session(1, "jvm", fd, true, 0, limits);
  session.start();
  ASSERT_TRUE(jvm.wait_for_stdout("READY")) << jvm.wait().describe();

  auto answered = [&](const std::string& name) {
    const uint64_t serial = session.command(name, {})["serial"];
    const bool ok = Eventually(jvm, [&] { return CommandState(session, serial) == "answered"; });
    return ok ? std::string("answered")
              : CommandState(session, serial) + "\n" + session.info().dump() +
                    "\nJVM stderr: " + jvm.stderr_so_far();
  };
  EXPECT_EQ(answered("cpu-samples"), "answered");
  EXPECT_EQ(answered("sites"), "answered");
  EXPECT_EQ(answered("dump-heap"), "answered");
  if (binary) {
    EXPECT_EQ(answered("heap-summary"), "answered");
  }
  auto p = session.profile();
  ASSERT_TRUE(p->cpu_samples.has_value());
  ASSERT_TRUE(p->sites.has_value());
  EXPECT_EQ(p->heap_dumps, 1u);
  // Blocker keeps 3000 char arrays: the sites name them.
  bool chars = false;
  for (const auto& s : *p->sites) chars |= s.class_name == "char[]" && s.live_objects >= 3000;
  EXPECT_TRUE(chars) << "no site with the 3000 live char[] Blocker keeps";
  const uint64_t total_before = p->cpu_samples->total;

  for (const char* name : {"gc", "traces"})
    EXPECT_EQ(session.command(name, {})["state"], "sent") << name;
  // Each CONTROL command is answered by the agent's SETTINGS report: what the agent now uses.
  auto setting = [&](const std::string& key) {
    const auto& s = session.profile()->agent_settings;
    return s.count(key) ? s.at(key) : "(" + key + " not reported)";
  };
  EXPECT_EQ(setting("depth"), "8") << "the report at start";
  EXPECT_EQ(setting("format"), binary ? "b" : "a");
  EXPECT_EQ(setting("commands"), "none") << "monitor-dump needs monitor=y";
  EXPECT_THROW(session.command("monitor-dump", {}), std::runtime_error);
  const std::map<std::string, std::pair<std::string, std::string>> controls = {
      {"cpu-off", {"sampling", "off"}},
      {"cpu-on", {"sampling", "on"}},
      {"alloc-off", {"tracking", "off"}},
      {"alloc-on", {"tracking", "on"}}};
  for (const char* name : {"cpu-off", "cpu-on", "alloc-off", "alloc-on"}) {
    EXPECT_EQ(answered(name), "answered") << name;
    EXPECT_EQ(setting(controls.at(name).first), controls.at(name).second) << name;
  }
  const uint64_t depth_serial = session.command("depth", {{"depth", 4}})["serial"];
  EXPECT_TRUE(Eventually(jvm, [&] { return CommandState(session, depth_serial) == "answered"; }));
  EXPECT_EQ(setting("depth"), "4");
  EXPECT_EQ(setting("serial"), std::to_string(depth_serial)) << "the report names its command";
  // reset-cpu clears the CPU costs: the next report counts fewer samples than the one before.
  EXPECT_EQ(answered("reset-cpu"), "answered");
  EXPECT_EQ(answered("cpu-samples"), "answered");
  if (total_before > 0) {
    EXPECT_LT(session.profile()->cpu_samples->total, total_before) << "reset-cpu had no effect";
  }
  EXPECT_TRUE(jvm.running()) << "a command ended the JVM\n" << jvm.wait().describe();

  // Exit: refused without confirmation (the JVM goes on), then confirmed.
  EXPECT_THROW(session.command("exit", {}), std::invalid_argument);
  EXPECT_TRUE(jvm.running());
  session.command("exit", {{"confirm", true}});
  const RunResult run = jvm.wait(/*close_input=*/false);
  EXPECT_TRUE(run.exited(0)) << run.describe();
  EXPECT_EQ(run.out.find("GOT"), std::string::npos) << "the program went on instead of exiting";
  ASSERT_TRUE(SessionEnds(session)) << session.info().dump();
  EXPECT_TRUE(session.profile()->sites.has_value()) << "the profile was lost when the JVM ended";
}

TEST_P(SessionJvmTest, ControlProtocolText) {
  ControlProtocol(false);
}
TEST_P(SessionJvmTest, ControlProtocolBinary) {
  ControlProtocol(true);
}

// monitor=y (format=a): the agent offers monitor-dump, which brings MONITOR TIME and MONITOR
// DUMP without SIGQUIT, as often as asked.
TEST_P(SessionJvmTest, MonitorDumpOnDemand) {
  Listener listener;
  JavaProcess jvm(
      jdk(),
      Command("monitor=y,net=127.0.0.1:" + std::to_string(listener.port()), "hproftest.Blocker"),
      dir().path());
  const int fd = listener.accept_one(jvm);
  ASSERT_GE(fd, 0) << jvm.wait().describe();
  jvmprof::Session session(1, "jvm", fd, true, 0, {});
  session.start();
  ASSERT_TRUE(jvm.wait_for_stdout("READY")) << jvm.wait().describe();
  ASSERT_TRUE(Eventually(jvm, [&] { return session.profile()->settings_reports > 0; }));
  EXPECT_EQ(session.profile()->agent_settings.at("commands"), "monitor-dump");
  for (uint64_t round = 1; round <= 2; ++round) {
    const uint64_t serial = session.command("monitor-dump", {})["serial"];
    ASSERT_TRUE(Eventually(jvm, [&] { return CommandState(session, serial) == "answered"; }))
        << session.info().dump();
    const auto p = session.profile();
    EXPECT_EQ(p->section_counts.at("MONITOR DUMP"), round);
    EXPECT_EQ(p->section_counts.at("MONITOR TIME"), round);
    EXPECT_NE(p->monitor_dump.find("MONITOR DUMP BEGIN"), std::string::npos);
  }
  EXPECT_TRUE(jvm.running()) << jvm.wait().describe();
}

// A JVM killed outright mid-run: the session ends and keeps everything it had received.
TEST_P(SessionJvmTest, KilledJvmKeepsItsProfile) {
  Listener listener;
  JavaProcess jvm(jdk(),
                  Command("cpu=samples,heap=sites,net=127.0.0.1:" + std::to_string(listener.port()),
                          "hproftest.Blocker"),
                  dir().path());
  const int fd = listener.accept_one(jvm);
  ASSERT_GE(fd, 0) << jvm.wait().describe();
  jvmprof::Session session(1, "jvm", fd, true, 0, {});
  session.start();
  ASSERT_TRUE(jvm.wait_for_stdout("READY")) << jvm.wait().describe();
  const uint64_t serial = session.command("sites", {})["serial"];
  ASSERT_TRUE(Eventually(jvm, [&] { return CommandState(session, serial) == "answered"; }));
  jvm.signal(SIGKILL);
  jvm.wait();
  EXPECT_TRUE(SessionEnds(session)) << session.info().dump();
  EXPECT_TRUE(session.profile()->sites.has_value());
  EXPECT_THROW(session.command("gc", {}), std::runtime_error) << "a command to a gone JVM";
}

// cpu=times over net=: the session's CPU TIME section has the exact call counts of a program whose
// call tree is known (java/hprof-tests/hproftest/CallTree.java), per method and per caller.
// format=b cannot carry cpu=times (HPROF refuses the combination, as JDK 8 did), so only text.
TEST_P(SessionJvmTest, CpuTimesExactCallCountsOverNet) {
  Listener listener;
  JavaProcess jvm(
      jdk(),
      Command("cpu=times,depth=3,cutoff=0,net=127.0.0.1:" + std::to_string(listener.port()),
              "hproftest.CallTree"),
      dir().path());
  const int fd = listener.accept_one(jvm);
  ASSERT_GE(fd, 0) << jvm.wait().describe();
  jvmprof::Session session(1, "jvm", fd, true, 0, {});
  session.start();
  const RunResult run = jvm.wait();
  ASSERT_TRUE(run.exited(0)) << run.describe();
  ASSERT_NE(run.out.find("CALLTREE DONE 5"), std::string::npos) << run.describe();
  ASSERT_TRUE(SessionEnds(session)) << session.info().dump();
  const auto p = session.profile();
  ASSERT_TRUE(p->cpu_time.has_value()) << session.info().dump();
  std::map<std::string, uint64_t> by_method;
  std::map<std::pair<std::string, std::string>, uint64_t> by_caller;  // (method, caller)
  for (const profiles::Stack& st : profiles::stacks(*p, profiles::Measure::kCpuCalls)) {
    ASSERT_FALSE(st.frames.empty());
    const std::string& leaf = st.frames.back();
    if (leaf.rfind("hproftest.CallTree.", 0) != 0) continue;
    by_method[leaf] += st.weight;
    if (st.frames.size() >= 2) by_caller[{leaf, st.frames[st.frames.size() - 2]}] += st.weight;
  }
  const std::map<std::string, uint64_t> expected = {
      {"hproftest.CallTree.main", 1},    {"hproftest.CallTree.tree", 1},
      {"hproftest.CallTree.a", 3},       {"hproftest.CallTree.b", 6},
      {"hproftest.CallTree.c", 9},       {"hproftest.CallTree.e", 4},
      {"hproftest.CallTree.thrower", 4}, {"hproftest.CallTree.deeper", 4}};
  EXPECT_EQ(by_method, expected);
  using Edge = std::pair<std::string, std::string>;
  EXPECT_EQ((by_caller[Edge{"hproftest.CallTree.c", "hproftest.CallTree.b"}]), 6u);
  EXPECT_EQ((by_caller[Edge{"hproftest.CallTree.c", "hproftest.CallTree.a"}]), 3u);
  EXPECT_EQ((by_caller[Edge{"hproftest.CallTree.b", "hproftest.CallTree.a"}]), 6u);
  EXPECT_EQ((by_caller[Edge{"hproftest.CallTree.deeper", "hproftest.CallTree.thrower"}]), 4u);
}

// Runs `stalled` over net= with a small queue and a front end that starts reading only once the
// program has done all its work. What holds in both formats: the program finishes and exits 0,
// HPROF counts what it dropped on its stderr, and the session ends without error, told the same
// count and that bytes were dropped. `format_checks` then checks what the format adds.
void SessionJvmTest::StalledFrontEnd(const StalledRun& stalled,
                                     const StalledChecks& format_checks) {
  Listener listener;
  listener.small_receive_buffer();
  JavaProcess jvm(
      jdk(),
      Command(stalled.options + ",netqueue=64k,net=127.0.0.1:" + std::to_string(listener.port()),
              stalled.program, stalled.args),
      dir().path());
  const int fd = listener.accept_one(jvm);
  ASSERT_GE(fd, 0) << jvm.wait().describe();
  // Nobody reads fd until the program has done all its work.
  ASSERT_TRUE(jvm.wait_for_stdout(stalled.done))
      << "the JVM did not finish while the front end was not reading\n"
      << jvm.wait().describe();
  jvmprof::Session session(1, "jvm", fd, true, 0, {});
  session.start();
  const RunResult run = jvm.wait();
  ASSERT_TRUE(run.exited(0)) << run.describe();
  const std::string key = "hprof: net=: ";
  const size_t at = run.err.find(key);
  ASSERT_NE(at, std::string::npos) << "no drop count on stderr\n" << run.describe();
  const uint64_t dropped = std::stoull(run.err.substr(at + key.size()));
  EXPECT_GT(dropped, 0u);
  ASSERT_TRUE(SessionEnds(session)) << session.info().dump();
  const nlohmann::json info = session.info();
  EXPECT_EQ(info["droppedEvents"], dropped) << info.dump();
  EXPECT_GT(info["droppedBytes"].get<uint64_t>(), 0u);
  EXPECT_EQ(info["state"], "ended");
  EXPECT_TRUE(info["error"].get<std::string>().empty()) << info.dump();
  format_checks(session, info);
}

// Text: the program still makes all its 100000 monitor hand-offs (each a WAIT and a WAITED event)
// and ends normally; what the agent dropped is counted on its stderr and, once the front end reads
// again, in the stream, with the same total.
TEST_P(SessionJvmTest, StalledFrontEndDoesNotBlockTheJvm) {
  StalledFrontEnd({.options = "monitor=y",
                   .program = "hproftest.WaitStorm",
                   .args = {"100000"},
                   .done = "WAITSTORM DONE 100000"},
                  [](jvmprof::Session&, const nlohmann::json& info) {
                    // The exit report arrived whole after the stall: nothing of it was dropped.
                    EXPECT_EQ(info["sectionCounts"].value("MONITOR DUMP", 0), 1) << info.dump();
                  });
}

// format=b: the events a binary stream drops are thread starts and ends. While 20000 threads start
// and end one after another, the program finishes, and the drop count on HPROF's stderr reaches
// the session through the stream (the DROPPED note record).
TEST_P(SessionJvmTest, StalledFrontEndBinaryDropsAreCounted) {
  StalledFrontEnd({.options = "format=b",
                   .program = "hproftest.ThreadStorm",
                   .args = {"20000"},
                   .done = "THREADSTORM DONE 20000 true"},
                  [](jvmprof::Session& session, const nlohmann::json&) {
                    // The threads that were not dropped arrived: started threads = 20000 + the
                    // JVM's own - dropped starts; at least some of the storm's got through before
                    // the queue filled.
                    const auto p = session.profile();
                    size_t storm = 0;
                    for (const auto& [serial, t] : p->threads)
                      storm += t.name.rfind("storm-", 0) == 0;
                    EXPECT_GT(storm, 0u);
                    EXPECT_LT(storm, 20000u);
                  });
}

// A connection that has been idle for longer than HPROF's stall limit has not stalled: a report
// asked for afterwards is sent whole and the connection stays up (the idle time once counted as a
// stall and HPROF gave the front end up). The wait is the scenario, not a guess at timing.
TEST_P(SessionJvmTest, IdleConnectionIsNotAStalledFrontEnd) {
  Listener listener;
  JavaProcess jvm(
      jdk(),
      Command("cpu=samples,net=127.0.0.1:" + std::to_string(listener.port()), "hproftest.Blocker"),
      dir().path());
  const int fd = listener.accept_one(jvm);
  ASSERT_GE(fd, 0) << jvm.wait().describe();
  jvmprof::SessionLimits limits;
  limits.command_timeout = 60s;
  jvmprof::Session session(1, "jvm", fd, true, 0, limits);
  session.start();
  ASSERT_TRUE(jvm.wait_for_stdout("READY")) << jvm.wait().describe();
  std::this_thread::sleep_for(12s);  // longer than Output::kStallLimit (10 s) with nothing to send
  const uint64_t serial = session.command("cpu-samples", {})["serial"];
  EXPECT_TRUE(Eventually(jvm, [&] { return CommandState(session, serial) == "answered"; }))
      << session.info().dump() << "\nJVM stderr: " << jvm.stderr_so_far();
  EXPECT_EQ(session.info()["state"], "connected");
  EXPECT_EQ(jvm.stderr_so_far().find("has read nothing"), std::string::npos) << jvm.stderr_so_far();
  jvm.signal(SIGKILL);
  jvm.wait();
}

// CPU SAMPLES rows name only traces the stream has already carried, even while the sampler keeps
// interning new ones as the report is written (it used to take the rows after the traces).
TEST_P(SessionJvmTest, CpuSamplesRowsNameWrittenTraces) {
  Listener listener;
  JavaProcess jvm(
      jdk(),
      Command("cpu=samples,interval=1,depth=12,net=127.0.0.1:" + std::to_string(listener.port()),
              "hproftest.ManyStacks"),
      dir().path());
  const int fd = listener.accept_one(jvm);
  ASSERT_GE(fd, 0) << jvm.wait().describe();
  jvmprof::SessionLimits limits;
  limits.command_timeout = 60s;
  jvmprof::Session session(1, "jvm", fd, true, 0, limits);
  session.start();
  for (int round = 0; round < 20 && jvm.running(); ++round) {
    const uint64_t serial = session.command("cpu-samples", {})["serial"];
    if (!Eventually(jvm, [&] { return CommandState(session, serial) == "answered"; })) break;
    const auto p = session.profile();
    ASSERT_TRUE(p->cpu_samples.has_value());
    for (const auto& row : p->cpu_samples->rows)
      ASSERT_NE(p->trace(row.trace), nullptr) << "round " << round << ": CPU SAMPLES names TRACE "
                                              << row.trace << " before the stream carried it";
  }
  jvm.signal(SIGKILL);
  jvm.wait();
}

INSTANTIATE_FOR_JDKS(SessionJvmTest);

}  // namespace
}  // namespace hproftest
