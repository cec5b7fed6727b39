// SPDX-License-Identifier: Apache-2.0
// Launches a real JVM with libjvmpi.so and a conformance agent, with a time limit, and captures
// its exit status, stdout and stderr; and reads the agents' line logs.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "child_process.h"

namespace jvmpitest {

struct Jdk {
  std::string name;  // "jdk17", "jdk25": used in test names
  std::string home;
  int feature;  // 17, 25

  std::string java() const { return home + "/bin/java"; }
  bool present() const;
};

// For gtest's parameter names in failure messages.
void PrintTo(const Jdk& jdk, std::ostream* os);

// JDK 17 (required) and JDK 25 (optional), from test_config.h.
std::vector<Jdk> AllJdks();

// libjvmpi.so under test: $JVMPI_TEST_LIB if set, else the build's.
std::string JvmpiLibrary();
// Path of a conformance agent or helper library built here, e.g. AgentLibrary("startup")
// -> <build>/tests/jvmpi/libjvmpitest_startup.so.
std::string AgentLibrary(const std::string& short_name);

struct JvmOptions {
  // Text after "-agentpath:<libjvmpi.so>=", e.g. "<agent.so>:log=/x". std::nullopt: no "=".
  std::optional<std::string> agent_spec;
  bool with_agentpath = true;
  std::vector<std::string> vm_args;  // before the main class, e.g. "-Xbatch", "-Dx=y"
  std::string main_class;            // e.g. "jvmpitest.StartupProgram"
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // added to the child's environment
  std::chrono::seconds timeout{60};
};

struct JvmResult {
  int exit_code = -1;   // valid when !signaled && !timed_out
  int term_signal = 0;  // when signaled
  bool signaled = false;
  bool timed_out = false;
  std::string out, err;
  std::string command;

  bool exited(int code) const { return !signaled && !timed_out && exit_code == code; }
  // For assertion messages: the command, status and both streams.
  std::string Describe() const;
};

// A running JVM. Its stdout and stderr go to files (so they can be watched while it runs);
// stdin is a pipe.
class JvmProcess {
 public:
  JvmProcess(const Jdk& jdk, const JvmOptions& options, const std::string& output_stem);
  ~JvmProcess();
  JvmProcess(const JvmProcess&) = delete;
  JvmProcess& operator=(const JvmProcess&) = delete;

  bool started() const { return process_.pid() > 0; }
  pid_t pid() const { return process_.pid(); }
  // Polls stdout until it contains text; false after the bound or if the JVM ended.
  bool WaitForStdout(const std::string& text, std::chrono::milliseconds bound);
  void Signal(int sig);
  void WriteStdin(const std::string& text);
  void CloseStdin();
  // Waits for the end (killing the JVM when the time limit passes) and collects the output.
  // Stdin stays open until then unless CloseStdin was called.
  JvmResult Wait();

 private:
  testsupport::ChildProcess process_;
  JvmResult result_;
};

// Runs a JVM to completion, with stdin closed.
JvmResult RunJvm(const Jdk& jdk, const JvmOptions& options, const std::string& output_stem);

// One line of an agent log or of a program's stdout: "TAG\tkey=value\t...".
struct Line {
  size_t index = 0;  // position in the file
  std::string tag;
  std::map<std::string, std::string> kv;
  std::string raw;

  bool has(const std::string& key) const { return kv.count(key) != 0; }
  std::string get(const std::string& key) const;
  int64_t num(const std::string& key) const;   // decimal; throws if absent or malformed
  uint64_t ptr(const std::string& key) const;  // 0x-hex
};

std::vector<Line> ParseLines(const std::string& text);
std::vector<Line> ReadLog(const std::string& path);
std::string ReadFile(const std::string& path);

// Lines with this tag, optionally also matching key=value pairs.
std::vector<Line> Select(const std::vector<Line>& lines, const std::string& tag,
                         const std::map<std::string, std::string>& match = {});

}  // namespace jvmpitest
