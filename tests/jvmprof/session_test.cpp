// SPDX-License-Identifier: Apache-2.0
// jvmprof serve's receiver (Session) over a socketpair standing in for an agent: text and binary
// streams in pieces, a stream that breaks off, corrupt input (the reader keeps draining the
// socket), the exact bytes of HPROF's command protocol, answers and timeouts.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <thread>

#include "agent_session.h"
#include "hprof_format.h"
#include "spool_dir.h"

namespace {

using namespace std::chrono_literals;

const char kHeader[] =
    "JAVA PROFILE 1.0.1, created Wed Nov 25 09:00:00 2026\n\nprelude\n--------\n\n";
const char kTraces[] =
    "THREAD START (obj=1, id = 200001, name=\"main\", group=\"main\")\n"
    "TRACE 300001: (thread=200001)\n\tapp.Hot.spin(Hot.java:10)\n\tapp.Main.main(Main.java:3)\n";
const char kSites[] =
    "SITES BEGIN (ordered by live bytes) x\n"
    "          percent          live          alloc'ed  stack class\n"
    " rank   self  accum     bytes objs     bytes  objs trace name\n"
    "    1 100.00% 100.00%      4000   10      8000    20 300001 byte[]\n"
    "SITES END\n";
const char kCpu[] =
    "CPU SAMPLES BEGIN (total = 5) x\nrank   self  accum   count trace method\n"
    "   1 100.00% 100.00%       5 300001 app.Hot.spin\nCPU SAMPLES END\n";

// Polls `pred` until it holds or 10 s pass (the reader thread works asynchronously).
bool Eventually(const std::function<bool()>& pred) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return pred();
}

class SessionTest : public ::testing::Test {
 protected:
  void Start(jvmprof::SessionLimits limits = {}) {
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    agent_ = fds[1];
    session_ = std::make_unique<jvmprof::Session>(1, "test", fds[0], true, 0, limits);
    session_->start();
  }
  void TearDown() override {
    session_.reset();
    if (agent_ >= 0) ::close(agent_);
  }
  void Send(std::string_view bytes, size_t piece = 0) {
    if (piece == 0) piece = bytes.size();
    for (size_t i = 0; i < bytes.size(); i += piece) {
      const auto part = bytes.substr(i, piece);
      ASSERT_EQ(::write(agent_, part.data(), part.size()), static_cast<ssize_t>(part.size()));
    }
  }
  void CloseAgent() {
    ::close(agent_);
    agent_ = -1;
  }
  // Bytes the session sent to the agent, waiting up to 5 s for `n` of them.
  std::string Received(size_t n) {
    std::string out;
    while (out.size() < n) {
      pollfd p{agent_, POLLIN, 0};
      if (::poll(&p, 1, 5000) <= 0) break;
      char buf[256];
      const ssize_t r = ::read(agent_, buf, std::min(sizeof buf, n - out.size()));
      if (r <= 0) break;
      out.append(buf, static_cast<size_t>(r));
    }
    return out;
  }
  std::string State() { return session_->info()["state"]; }

  int agent_ = -1;
  std::unique_ptr<jvmprof::Session> session_;
};

std::string Frame(uint8_t tag, uint32_t serial, std::string body) {
  std::string f(1, static_cast<char>(tag));
  for (uint32_t v : {serial, static_cast<uint32_t>(body.size())})
    for (int shift = 24; shift >= 0; shift -= 8) f.push_back(static_cast<char>(v >> shift));
  return f + body;
}

TEST_F(SessionTest, TextStreamInPiecesIsPublishedLive) {
  Start();
  Send(std::string(kHeader) + kTraces + kSites, 3);
  ASSERT_TRUE(Eventually([&] { return session_->profile()->sites.has_value(); }));
  EXPECT_EQ(State(), "connected");
  Send(kCpu, 5);
  ASSERT_TRUE(Eventually([&] { return session_->profile()->cpu_samples.has_value(); }));
  auto p = session_->profile();
  EXPECT_EQ(profiles::to_collapsed(profiles::stacks(*p, profiles::Measure::kCpuSamples)),
            "app.Main.main;app.Hot.spin 5\n");
  EXPECT_EQ(session_->info()["format"], "a");
}

TEST_F(SessionTest, JvmGoingAwayMidSectionKeepsWhatWasComplete) {
  Start();
  const std::string cpu = kCpu;
  Send(std::string(kHeader) + kTraces + kSites + cpu.substr(0, cpu.size() / 2));
  CloseAgent();
  ASSERT_TRUE(Eventually([&] { return State() == "ended"; }));
  const auto info = session_->info();
  EXPECT_NE(std::string(info["error"]).find("ends inside a section"), std::string::npos)
      << info.dump();
  auto p = session_->profile();
  EXPECT_TRUE(p->sites.has_value());
  EXPECT_FALSE(p->cpu_samples.has_value());
  EXPECT_EQ(p->traces.size(), 1u);
}

TEST_F(SessionTest, BinaryStreamFromTheFormatsWriter) {
  Start();
  hprof::MemorySink sink;
  {
    hprof::WriterOptions o;
    o.id_size = 4;
    hprof::BinaryWriter w(sink, o);
    w.utf8(1, "app.Hot");
    w.utf8(2, "spin");
    w.utf8(3, "()V");
    // The agent's SETTINGS note (name id one below the DROPPED note's: 0xFFFFFFFE with 4-byte ids).
    w.utf8(0xFFFFFFFEu, "SETTINGS: serial=0 depth=7 cpu=samples format=b commands=none");
    w.load_class({1, 100, 0, 1, 0});
    w.stack_frame({7, 2, 3, 0, 1, 12, 0});
    w.stack_trace({300001, 0, {7}, 0});
    hprof::CpuSamples cpu;
    cpu.total = 9;
    cpu.traces = {{9, 300001}};
    w.cpu_samples(cpu);
    w.flush();
  }
  const std::string bytes(sink.data().begin(), sink.data().end());
  Send(bytes, 7);
  ASSERT_TRUE(Eventually([&] { return session_->profile()->cpu_samples.has_value(); }));
  EXPECT_EQ(session_->info()["format"], "b");
  EXPECT_EQ(profiles::to_collapsed(
                profiles::stacks(*session_->profile(), profiles::Measure::kCpuSamples)),
            "app.Hot.spin 9\n");
  EXPECT_EQ(session_->info()["settingsReports"], 1);
  EXPECT_EQ(session_->info()["settings"]["depth"], "7");
  EXPECT_EQ(session_->info()["settings"]["format"], "b");
}

// After corrupt input the session stops parsing but keeps reading, so the agent never blocks:
// 8 MiB more (far beyond any socket buffer) are written without the reader's help otherwise.
TEST_F(SessionTest, CorruptStreamIsReportedAndStillDrained) {
  Start();
  Send(std::string(kHeader) + kTraces + kSites + "CPU SAMPLES BEGIN (total = 5)\n   1 x y z\n");
  ASSERT_TRUE(Eventually([&] { return State() == "error"; }));
  EXPECT_NE(std::string(session_->info()["error"]).find("bad row"), std::string::npos);
  EXPECT_TRUE(session_->profile()->sites.has_value()) << "complete sections are kept";
  std::string chunk(1 << 20, 'x');
  std::atomic<int> written{0};
  std::thread writer([&] {
    for (int i = 0; i < 8; ++i) {
      Send(chunk);
      ++written;
    }
  });
  const bool done = Eventually([&] { return written == 8; });
  if (!done) CloseAgent();  // unblock the writer before failing
  writer.join();
  ASSERT_TRUE(done) << "the agent blocked: the session stopped reading after the error";
  EXPECT_TRUE(Eventually(
      [&] { return session_->info()["discarded"].get<uint64_t>() >= 8u * chunk.size(); }));
}

TEST_F(SessionTest, OversizedLineEndsParsingNotMemory) {
  jvmprof::SessionLimits limits;
  limits.max_line = 4096;
  Start(limits);
  Send(std::string(kHeader) + std::string(100000, 'A'));
  ASSERT_TRUE(Eventually([&] { return State() == "error"; }));
  EXPECT_NE(std::string(session_->info()["error"]).find("longer than 4096"), std::string::npos);
}

// The wire format of every command: u1 tag, u4 serial, u4 body length, body (big-endian).
TEST_F(SessionTest, CommandsAreHprofProtocolFrames) {
  Start();
  Send(kHeader);
  struct Case {
    std::string name;
    nlohmann::json args;
    std::string frame;
  };
  const std::string zero_flags_cutoff("\0\0\0\0\0\0", 6);
  const std::vector<Case> cases = {
      {"gc", {}, Frame(0x01, 1, "")},
      {"dump-heap", {}, Frame(0x02, 2, "")},
      {"sites", {}, Frame(0x03, 3, zero_flags_cutoff)},
      {"heap-summary", {}, Frame(0x04, 4, "")},
      {"traces", {}, Frame(0x06, 5, "")},
      {"cpu-samples", {}, Frame(0x07, 6, zero_flags_cutoff)},
      {"alloc-on", {}, Frame(0x08, 7, std::string("\0\1", 2))},
      {"alloc-off", {}, Frame(0x08, 8, std::string("\0\2", 2))},
      {"cpu-on", {}, Frame(0x08, 9, std::string("\0\3\0\0\0\0", 6))},
      {"cpu-off", {}, Frame(0x08, 10, std::string("\0\4\0\0\0\0", 6))},
      {"reset-cpu", {}, Frame(0x08, 11, std::string("\0\5", 2))},
      {"reset-sites", {}, Frame(0x08, 12, std::string("\0\6", 2))},
      {"depth", {{"depth", 258}}, Frame(0x08, 13, std::string("\0\7\1\2", 4))},
      {"exit", {{"confirm", true}}, Frame(0x05, 14, "")},
  };
  for (const auto& c : cases) {
    session_->command(c.name, c.args);
    EXPECT_EQ(Received(c.frame.size()), c.frame) << c.name;
  }
}

// The agent's SETTINGS report (format=a line) after each CONTROL command is the command's answer,
// and the settings the UI shows are the agent's, from that report. monitor-dump (not in JDK 8's
// protocol) goes only to an agent that offers it.
TEST_F(SessionTest, AgentSettingsAnswerControlCommands) {
  Start();
  Send(kHeader);
  // An agent that reports nothing (JDK 8's): control commands are just "sent", no monitor-dump.
  EXPECT_EQ(session_->command("depth", {{"depth", 6}})["state"], "sent");
  EXPECT_EQ(Received(Frame(0x08, 1, std::string("\0\7\0\6", 4)).size()),
            Frame(0x08, 1, std::string("\0\7\0\6", 4)));
  EXPECT_THROW(session_->command("monitor-dump", {}), std::runtime_error);
  EXPECT_EQ(session_->info()["settingsReports"], 0);

  Send(
      "SETTINGS: serial=0 depth=4 cpu=samples sampling=on heap=sites monitor=y thread=n "
      "format=a commands=monitor-dump\n");
  ASSERT_TRUE(Eventually([&] { return session_->info()["settingsReports"] == 1; }));
  auto info = session_->info();
  EXPECT_EQ(info["settings"]["depth"], "4");
  EXPECT_EQ(info["settings"]["thread"], "n");
  EXPECT_TRUE(info["sectionArrivedMs"].contains("SETTINGS"));

  auto sent = session_->command("depth", {{"depth", 16}});
  EXPECT_EQ(sent["state"], "waiting");
  EXPECT_EQ(sent["answer"], "SETTINGS");
  EXPECT_EQ(Received(Frame(0x08, 2, std::string("\0\7\0\20", 4)).size()),
            Frame(0x08, 2, std::string("\0\7\0\20", 4)));
  Send(
      "SETTINGS: serial=2 depth=16 cpu=samples sampling=on heap=sites monitor=y thread=n "
      "format=a commands=monitor-dump\n");
  ASSERT_TRUE(Eventually([&] { return session_->info()["commands"][1]["state"] == "answered"; }))
      << session_->info().dump();
  EXPECT_EQ(session_->info()["settings"]["depth"], "16");
  EXPECT_EQ(session_->info()["settings"]["serial"], "2");

  // Offered now: tag 0x09, no body, answered by a MONITOR DUMP.
  auto dump = session_->command("monitor-dump", {{"auto", true}});
  EXPECT_EQ(dump["state"], "waiting");
  EXPECT_EQ(dump["detail"], "the view's automatic refresh");
  EXPECT_EQ(Received(9), Frame(0x09, 3, ""));
  Send("MONITOR DUMP BEGIN\nMONITOR DUMP END\n");
  ASSERT_TRUE(Eventually([&] { return session_->info()["commands"][2]["state"] == "answered"; }));
  EXPECT_TRUE(session_->info()["sectionArrivedMs"].contains("MONITOR DUMP"));
}

TEST_F(SessionTest, DangerousOrMalformedCommandsAreRefused) {
  Start();
  Send(kHeader);
  EXPECT_THROW(session_->command("exit", {}), std::invalid_argument);
  EXPECT_THROW(session_->command("exit", {{"confirm", "yes"}}), std::invalid_argument);
  EXPECT_THROW(session_->command("format-disk", {}), std::invalid_argument);
  EXPECT_THROW(session_->command("depth", {{"depth", -1}}), std::invalid_argument);
  EXPECT_THROW(session_->command("depth", {}), std::invalid_argument);
  // Nothing reached the agent.
  pollfd p{agent_, POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 200), 0);
}

TEST_F(SessionTest, AnswerIsMatchedAndSilenceTimesOut) {
  jvmprof::SessionLimits limits;
  limits.command_timeout = 300ms;
  Start(limits);
  Send(std::string(kHeader) + kTraces);
  auto sent = session_->command("sites", {});
  EXPECT_EQ(sent["state"], "waiting");
  Send(kSites);
  ASSERT_TRUE(Eventually([&] { return session_->info()["commands"][0]["state"] == "answered"; }))
      << session_->info().dump();
  session_->command("cpu-samples", {});
  ASSERT_TRUE(Eventually([&] { return session_->info()["commands"][1]["state"] == "no answer"; }));
  EXPECT_NE(std::string(session_->info()["commands"][1]["detail"]).find("no CPU within"),
            std::string::npos);
  // Commands with no reply in HPROF's protocol are just "sent".
  EXPECT_EQ(session_->command("gc", {})["state"], "sent");
}

TEST_F(SessionTest, SavedFileIsReadWithProgress) {
  char path[] = "/tmp/jvmprof-session-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string text = std::string(kHeader) + kTraces + kSites + kCpu;
  ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::lseek(fd, 0, SEEK_SET);
  ::unlink(path);
  jvmprof::Session file(2, "file", fd, false, text.size(), {});
  file.start();
  ASSERT_TRUE(Eventually([&] { return file.info()["state"] == "ended"; }));
  EXPECT_EQ(file.info()["bytes"], text.size());
  EXPECT_EQ(file.info()["error"], "");
  EXPECT_TRUE(file.profile()->cpu_samples.has_value());
  EXPECT_THROW(file.command("gc", {}), std::runtime_error);
}

// A serve killed before it removed its spool (SIGKILL: no destructor runs) leaves the directory
// behind; the next serve's start removes it, but never a running serve's directory.
TEST(SpoolDir, StaleSpoolOfAKilledServeIsRemovedAtNextStart) {
  char parent_template[] = "/tmp/jvmprof-spooltest-XXXXXX";
  ASSERT_NE(::mkdtemp(parent_template), nullptr);
  const std::string parent = parent_template;
  const std::string mine = jvmprof::make_spool_dir(parent);
  ASSERT_FALSE(mine.empty());
  // A child that makes its spool, writes a stream into it and dies without cleaning up.
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const std::string dir = jvmprof::make_spool_dir(parent);
    const int fd = ::open((dir + "/profile-1.hprof").c_str(), O_WRONLY | O_CREAT, 0600);
    const bool ok = !dir.empty() && fd >= 0 && ::write(fd, kHeader, sizeof kHeader - 1) > 0 &&
                    ::write(pipe_fds[1], dir.data(), dir.size()) > 0;
    ::_exit(ok ? 0 : 1);  // killed, as far as its spool knows
  }
  ::close(pipe_fds[1]);
  char buf[256] = {};
  const ssize_t n = ::read(pipe_fds[0], buf, sizeof buf - 1);
  ::close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_GT(n, 0);
  const std::string stale(buf, static_cast<size_t>(n));
  struct stat st {};
  ASSERT_EQ(::stat((stale + "/profile-1.hprof").c_str(), &st), 0) << "the stream was left";
  // An older serve's directory (no owner.pid) is not ours to judge.
  const std::string unowned = parent + "/jvmprof-serve-older";
  ASSERT_EQ(::mkdir(unowned.c_str(), 0700), 0);

  EXPECT_EQ(jvmprof::remove_stale_spool_dirs(parent), 1);
  EXPECT_NE(::stat(stale.c_str(), &st), 0) << stale << " is still there";
  EXPECT_EQ(::stat(mine.c_str(), &st), 0) << "a running serve's spool was removed";
  EXPECT_EQ(::stat(unowned.c_str(), &st), 0);
  EXPECT_EQ(jvmprof::remove_stale_spool_dirs(parent), 0);

  jvmprof::remove_spool_dir(mine);
  EXPECT_NE(::stat(mine.c_str(), &st), 0);
  ::rmdir(unowned.c_str());
  EXPECT_EQ(::rmdir(parent.c_str()), 0);
}

}  // namespace
