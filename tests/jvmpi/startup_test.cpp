// SPDX-License-Identifier: Apache-2.0
// Start-up: JVM_OnLoad's arguments, GetEnv for every JVMPI version (at start-up and later from
// JNI code), the order of delivery, the life-cycle events, and the failure paths.
#include <signal.h>

#include <sstream>

#include "jvmpi_test.h"
#include "test_config.h"

namespace jvmpitest {
namespace {

class JvmpiStartup : public JvmpiTest {
 protected:
  // The life-cycle facts every normal run of the start-up agent must show.
  void ExpectLifeCycle(const std::vector<Line>& log, const JvmResult& r) {
    ASSERT_EQ(Select(log, "ONLOAD_RETURN").size(), 1u) << r.Describe();
    for (const auto& e : Select(log, "ENABLE")) {
      EXPECT_EQ(e.num("rc"), 0) << "EnableEvent before NotifyEvent was stored: " << e.raw;
    }
    EXPECT_TRUE(Select(log, "EVENT_IN_ONLOAD").empty()) << "an event arrived inside JVM_OnLoad";
    auto first = Select(log, "FIRST_EVENT");
    ASSERT_EQ(first.size(), 1u) << "no event at all arrived\n" << r.Describe();
    EXPECT_GT(first[0].index, Select(log, "ONLOAD_RETURN")[0].index);
    EXPECT_EQ(Select(log, "INIT_DONE").size(), 1u) << "JVM_INIT_DONE must arrive exactly once";
    auto shut = Select(log, "SHUT_DOWN");
    ASSERT_EQ(shut.size(), 1u) << "JVM_SHUT_DOWN must arrive exactly once\n" << r.Describe();
    EXPECT_LT(Select(log, "INIT_DONE")[0].index, shut[0].index);
    for (const auto& l : Select(log, "AFTER_SHUTDOWN")) {
      ADD_FAILURE() << "event after JVM_SHUT_DOWN: " << l.raw;
    }
    auto counts = Select(log, "COUNTS");
    ASSERT_EQ(counts.size(), 1u);
    EXPECT_GT(counts[0].num("thread_start"), 0);
    EXPECT_GT(counts[0].num("class_load"), 100) << "the JDK's own classes were not announced";
    // The worker's THREAD_START shows events flow while the program runs.
    EXPECT_EQ(Select(log, "TS", {{"name", "jvmpitest-startup-worker"}}).size(), 1u);
  }
};

TEST_P(JvmpiStartup, OptionsAreTheTextAfterTheFirstColon) {
  JvmOptions o = WithAgent("startup", "jvmpitest.StartupProgram");
  const std::string options = "log=" + LogPath() + ",alpha=1:beta=2,gamma";
  o.agent_spec = AgentLibrary("startup") + ":" + options;
  JvmResult r = Run(o);
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  auto onload = Select(Log(), "ONLOAD");
  ASSERT_EQ(onload.size(), 1u) << r.Describe();
  EXPECT_EQ(onload[0].get("options"), options);
  EXPECT_EQ(onload[0].num("options_null"), 0);
  EXPECT_EQ(onload[0].num("reserved_null"), 1) << "JVM_OnLoad's third argument must be NULL";
}

TEST_P(JvmpiStartup, OptionsAreEmptyWhenNoneGiven) {
  JvmOptions o = WithAgent("startup", "jvmpitest.StartupProgram");
  o.agent_spec = AgentLibrary("startup");
  o.env.emplace_back("JVMPI_TEST_LOG", LogPath());
  JvmResult r = Run(o);
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  auto onload = Select(Log(), "ONLOAD");
  ASSERT_EQ(onload.size(), 1u) << r.Describe();
  EXPECT_EQ(onload[0].num("options_null"), 0) << "options must be \"\", not NULL";
  EXPECT_EQ(onload[0].get("options"), "");
}

TEST_P(JvmpiStartup, GetEnvAnswersEveryJvmpiVersionWithOneTable) {
  JvmResult r = Run(WithAgent("startup", "jvmpitest.StartupProgram"));
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  auto log = Log();
  auto table = Select(log, "TABLE");
  ASSERT_EQ(table.size(), 1u) << r.Describe();
  EXPECT_NE(table[0].ptr("ptr"), 0u);
  EXPECT_EQ(table[0].get("version"), "0x10000003") << "the table's version is JVMPI_VERSION_1_2";
  for (const char* v : {"0x10000001", "0x10000002", "0x10000003"}) {
    auto g = Select(log, "GETENV", {{"version", v}});
    ASSERT_EQ(g.size(), 1u) << v;
    EXPECT_EQ(g[0].num("rc"), 0) << "GetEnv(" << v << ") must answer JNI_OK";
    EXPECT_EQ(g[0].ptr("ptr"), table[0].ptr("ptr")) << "GetEnv(" << v << ") gave another table";
    EXPECT_EQ(g[0].get("table_version"), "0x10000003");
  }
  auto bogus = Select(log, "GETENV", {{"version", "0x10000077"}});
  ASSERT_EQ(bogus.size(), 1u);
  EXPECT_EQ(bogus[0].num("rc"), -3) << "an unknown version must answer JNI_EVERSION";
  // JNI's GetEnv sets *penv to NULL on failure; leaving it alone is harmless too.
  EXPECT_TRUE(bogus[0].num("untouched") == 1 || bogus[0].ptr("ptr") == 0) << bogus[0].raw;
  // The VM's own JVMPI refusal must not leak through.
  EXPECT_EQ(r.out.find("JVMPI, an experimental interface"), std::string::npos) << r.out;
}

TEST_P(JvmpiStartup, LifeCycleOnNormalExit) {
  JvmResult r = Run(WithAgent("startup", "jvmpitest.StartupProgram"));
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  EXPECT_NE(r.out.find("FACT\tmode=normal"), std::string::npos) << r.Describe();
  ExpectLifeCycle(Log(), r);
}

TEST_P(JvmpiStartup, LifeCycleOnSystemExitKeepsExitCode) {
  JvmOptions o = WithAgent("startup", "jvmpitest.StartupProgram");
  o.args = {"exit3"};
  JvmResult r = Run(o);
  ASSERT_TRUE(r.exited(3)) << r.Describe();
  ExpectLifeCycle(Log(), r);
}

TEST_P(JvmpiStartup, LifeCycleOnUncaughtException) {
  JvmOptions o = WithAgent("startup", "jvmpitest.StartupProgram");
  o.args = {"throw"};
  JvmResult r = Run(o);
  ASSERT_TRUE(r.exited(1)) << r.Describe();
  EXPECT_NE(r.err.find("jvmpitest-uncaught"), std::string::npos) << r.Describe();
  ExpectLifeCycle(Log(), r);
}

TEST_P(JvmpiStartup, LifeCycleOnSigterm) {
  JvmOptions o = WithAgent("startup", "jvmpitest.StartupProgram");
  o.args = {"wait"};
  JvmProcess jvm(jdk(), o, Stem());
  ASSERT_TRUE(jvm.WaitForStdout("READY", std::chrono::seconds(30))) << jvm.Wait().Describe();
  jvm.Signal(SIGTERM);
  JvmResult r = jvm.Wait();
  // The VM runs its shutdown for SIGTERM and exits with 128 + 15.
  ASSERT_TRUE(r.exited(143)) << r.Describe();
  EXPECT_EQ(r.out.find("stdin_closed"), std::string::npos) << "main went on after the signal";
  ExpectLifeCycle(Log(), r);
}

TEST_P(JvmpiStartup, CreateSystemThreadIsRefusedDuringJvmOnLoad) {
  JvmResult r = Run(WithAgent("startup", "jvmpitest.StartupProgram"));
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  auto log = Log();
  auto create = Select(log, "EARLY_CREATE");
  ASSERT_EQ(create.size(), 1u) << r.Describe();
  EXPECT_EQ(create[0].num("rc"), -1) << "JNI_ERR before JVM_INIT_DONE (docs/jvmpi-conformance.md)";
  EXPECT_TRUE(Select(log, "EARLY_THREAD_RAN").empty());
  EXPECT_TRUE(Select(log, "TS", {{"name", "jvmpitest-too-early"}}).empty());
}

TEST_P(JvmpiStartup, NullNotifyEventIsNeverCalled) {
  // The agent enables events but never stores NotifyEvent: the VM must run normally.
  JvmResult r = Run(WithAgent("startup", "jvmpitest.StartupProgram", "mode=nonotify"));
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  EXPECT_NE(r.out.find("FACT\tmode=normal"), std::string::npos) << r.Describe();
  EXPECT_EQ(Select(Log(), "ONLOAD_RETURN").size(), 1u);
}

TEST_P(JvmpiStartup, LateGetEnvFromJniGivesTheAgentsTable) {
  JvmResult r = Run(WithAgent("startup", "jvmpitest.LateGetEnvProgram"));
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  auto table = Select(Log(), "TABLE");
  ASSERT_EQ(table.size(), 1u) << r.Describe();
  auto out = ParseLines(r.out);
  for (const char* v : {"0x10000001", "0x10000002", "0x10000003"}) {
    auto jni = Select(out, "JNI", {{"version", v}});
    ASSERT_EQ(jni.size(), 1u) << r.Describe();
    EXPECT_EQ(jni[0].num("rc"), 0) << "GetEnv(" << v << ") from JNI code failed";
    EXPECT_EQ(jni[0].ptr("ptr"), table[0].ptr("ptr"))
        << "JNI code got another table than JVM_OnLoad for " << v;
    EXPECT_EQ(jni[0].get("table_version"), "0x10000003");
  }
  auto bogus = Select(out, "JNI", {{"version", "0x10000077"}});
  ASSERT_EQ(bogus.size(), 1u);
  EXPECT_EQ(bogus[0].num("rc"), -3);
  EXPECT_EQ(r.out.find("JVMPI, an experimental interface"), std::string::npos) << r.out;
}

TEST_P(JvmpiStartup, AgentResolvedByBareNameThroughLdLibraryPath) {
  JvmOptions o = WithAgent("startup", "jvmpitest.StartupProgram");
  o.agent_spec = "jvmpitest_startup:log=" + LogPath();
  o.env.emplace_back("LD_LIBRARY_PATH", TEST_AGENTS_DIR);
  JvmResult r = Run(o);
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  EXPECT_EQ(Select(Log(), "ONLOAD_RETURN").size(), 1u) << r.Describe();
}

JVMPI_TEST_SUITE(JvmpiStartup);

// Failure paths: the VM must not start, and the runtime must say why in one line.
class JvmpiStartupFailure : public JvmpiTest {
 protected:
  // The runtime's own error lines ("jvmpi: error: ...").
  static std::vector<std::string> ErrorLines(const std::string& err) {
    std::vector<std::string> lines;
    std::istringstream in(err);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("jvmpi: error:", 0) == 0) lines.push_back(line);
    }
    return lines;
  }

  void ExpectRefusedToStart(const JvmResult& r, const std::string& must_mention) {
    EXPECT_FALSE(r.timed_out) << r.Describe();
    EXPECT_FALSE(r.exited(0)) << "the VM must not start\n" << r.Describe();
    EXPECT_EQ(r.out.find("FACT"), std::string::npos) << "main ran\n" << r.Describe();
    auto lines = ErrorLines(r.err);
    ASSERT_EQ(lines.size(), 1u) << "want exactly one 'jvmpi: error:' line\n" << r.Describe();
    EXPECT_NE(lines[0].find(must_mention), std::string::npos)
        << "the error line should name " << must_mention << ": " << lines[0];
  }
};

TEST_P(JvmpiStartupFailure, AgentLibraryNotFound) {
  JvmOptions o = WithAgent("startup", "jvmpitest.StartupProgram");
  o.agent_spec = "/nonexistent/libjvmpitest_missing.so:log=" + LogPath();
  ExpectRefusedToStart(Run(o), "/nonexistent/libjvmpitest_missing.so");
}

TEST_P(JvmpiStartupFailure, BareAgentNameNotFound) {
  JvmOptions o = WithAgent("startup", "jvmpitest.StartupProgram");
  o.agent_spec = "jvmpitest_missing:log=" + LogPath();
  ExpectRefusedToStart(Run(o), "jvmpitest_missing");
}

TEST_P(JvmpiStartupFailure, LibraryWithoutJvmOnLoad) {
  JvmOptions o = WithAgent("noonload", "jvmpitest.StartupProgram");
  JvmResult r = Run(o);
  ExpectRefusedToStart(r, AgentLibrary("noonload"));
  EXPECT_NE(r.err.find("JVM_OnLoad"), std::string::npos) << r.Describe();
}

TEST_P(JvmpiStartupFailure, JvmOnLoadReturningErr) {
  JvmResult r = Run(WithAgent("startup", "jvmpitest.StartupProgram", "mode=fail"));
  ExpectRefusedToStart(r, AgentLibrary("startup"));
  EXPECT_EQ(Select(Log(), "ONLOAD_FAIL").size(), 1u) << "JVM_OnLoad was not called";
}

TEST_P(JvmpiStartupFailure, NoAgentNamed) {
  JvmOptions o = WithAgent("startup", "jvmpitest.StartupProgram");
  o.agent_spec.reset();  // -agentpath:libjvmpi.so
  ExpectRefusedToStart(Run(o), "-agentpath:");
}

TEST_P(JvmpiStartupFailure, EmptyAgentName) {
  JvmOptions o = WithAgent("startup", "jvmpitest.StartupProgram");
  o.agent_spec = "";  // -agentpath:libjvmpi.so=
  ExpectRefusedToStart(Run(o), "-agentpath:");
}

JVMPI_TEST_SUITE(JvmpiStartupFailure);

}  // namespace
}  // namespace jvmpitest
