// SPDX-License-Identifier: Apache-2.0
// A small launcher for the HPROF tests: runs `java` with LD_LIBRARY_PATH pointing at the built
// libhprof.so, in a working directory of the test's own, with a time limit, and captures the exit
// status, stdout and stderr. A running JVM can be watched, signalled and fed on stdin.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "child_process.h"

namespace hproftest {

struct Jdk {
  int feature = 17;  // 17 or 25
  std::string home;
  std::string java() const { return home + "/bin/java"; }
  bool present() const;
};

Jdk Jdk17();
// Where libhprof.so and libjvmpi.so are: $HPROF_TEST_LIB_DIR if set, else the build's lib/.
std::string LibDir();
Jdk Jdk25();

// A fresh directory under $TMPDIR (or /tmp), removed by the destructor unless keep() was called.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  void keep() { keep_ = true; }

 private:
  std::string path_;
  bool keep_ = false;
};

struct JavaCommand {
  // VM options, in order, e.g. "-agentlib:hprof=heap=sites", "-Xmx32m".
  std::vector<std::string> vm_args;
  std::string main_class;  // e.g. "hproftest.Trivial"; empty: no class (e.g. for -version)
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // set (or replaced) in the child
  std::vector<std::string> unset_env;                    // removed from the child's environment
  std::chrono::seconds timeout{90};
};

struct RunResult {
  pid_t pid = -1;
  int exit_code = -1;  // when exited normally
  int signal = 0;      // when killed by a signal
  bool timed_out = false;
  std::string out, err;
  std::string command;      // as a shell line, for messages
  std::string stacks_file;  // gdb's stacks of a JVM killed at its time limit, if taken

  bool exited(int code) const { return !timed_out && signal == 0 && exit_code == code; }
  bool exited_nonzero() const { return !timed_out && signal == 0 && exit_code > 0; }
  // The command, how it ended and the tails of stdout and stderr.
  std::string describe() const;
};

// A running JVM. stdout/stderr go to files in the working directory; stdin is a pipe.
class JavaProcess {
 public:
  JavaProcess(const Jdk& jdk, const JavaCommand& command, const std::string& work_dir);
  ~JavaProcess();  // kills the JVM if it is still running
  JavaProcess(const JavaProcess&) = delete;
  JavaProcess& operator=(const JavaProcess&) = delete;

  pid_t pid() const { return process_.pid(); }
  // False once the JVM has ended; at its time limit it is killed (and counts as ended).
  bool running();
  // Waits until stdout holds `text`; false if the JVM ended first or the time limit passed.
  bool wait_for_stdout(const std::string& text);
  // Waits until pred() holds; false if the JVM ended first (pred is checked once more then) or
  // the time limit passed. For conditions on files the JVM writes.
  template <typename Pred>
  bool wait_until(Pred pred) {
    while (!expired()) {
      if (pred()) return true;
      if (!running()) return pred();
      pause();
    }
    return false;
  }
  void signal(int sig);
  void write_stdin(const std::string& text);
  void close_stdin();
  // Waits for the end (killing the JVM at the time limit) and returns everything.
  // Closes stdin first (so a program waiting for input ends) unless `close_input` is false, for
  // tests that must see the process end by other means.
  RunResult wait(bool close_input = true);
  std::string stdout_so_far() const;
  std::string stderr_so_far() const;

 private:
  bool expired() const { return process_.expired(); }
  static void pause() { testsupport::ChildProcess::pause(); }

  testsupport::ChildProcess process_;
  RunResult result_;
};

// Runs a JVM to its end.
RunResult RunJava(const Jdk& jdk, const JavaCommand& command, const std::string& work_dir);

std::string ReadFile(const std::string& path);
bool FileExists(const std::string& path);
void WriteFile(const std::string& path, const std::string& text);
std::vector<std::string> SplitLines(const std::string& text);

}  // namespace hproftest
