// SPDX-License-Identifier: Apache-2.0
// A child process for the tests that launch JVMs: an executable with an edited copy of this
// process's environment, stdout and stderr in files (so they can be read while it runs), stdin a
// pipe or /dev/null, in a process group of its own, with a time limit at which the whole group is
// killed. Each suite's launcher is a thin adapter over this.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace testsupport {

struct ChildSpec {
  std::vector<std::string> argv;  // argv[0] is the executable's path (no PATH search)
  std::vector<std::pair<std::string, std::string>> set_env;  // added, or replacing inherited ones
  std::vector<std::string> unset_env;                        // removed from the inherited ones
  std::string stdout_path;                                   // created or truncated
  std::string stderr_path;
  std::string work_dir;    // empty: this process's
  bool stdin_pipe = true;  // false: stdin is /dev/null
  std::chrono::steady_clock::duration timeout = std::chrono::seconds(60);
  // Where gdb writes the native stacks of a child killed at its time limit; empty: not taken.
  std::string stacks_path;
};

struct ChildStatus {
  int exit_code = -1;  // when it exited normally
  int signal = 0;      // the signal that ended it; 0 when killed at the time limit
  bool timed_out = false;
  std::string stacks_file;  // gdb's stacks of the child killed at its time limit, if taken
};

class ChildProcess {
 public:
  // Starts the child; throws std::runtime_error when it cannot.
  explicit ChildProcess(const ChildSpec& spec);
  ~ChildProcess();  // kills the child's group if the child is still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // The environment changes, working directory and arguments as a shell line, for messages.
  const std::string& command() const { return command_; }
  bool expired() const { return std::chrono::steady_clock::now() > deadline_; }
  // Reaps the child if it has ended, without waiting or killing it; true once it has ended.
  bool ended();
  // False once the child has ended; at the time limit it is killed (and counts as ended).
  bool running();
  // Waits for the end, killing the child at the time limit.
  const ChildStatus& wait();
  void signal(int sig);  // to the child itself (not its group), while it has not been reaped
  // Ignored once stdin is closed. A child that stopped reading can raise SIGPIPE here.
  void write_stdin(const std::string& text);
  void close_stdin();
  std::string stdout_so_far() const;
  std::string stderr_so_far() const;
  // One polling interval of the waits above.
  static void pause();

 private:
  void record(int wait_status);
  void kill_at_time_limit();

  std::string stdout_path_, stderr_path_, stacks_path_, command_;
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  bool reaped_ = false;
  std::chrono::steady_clock::time_point deadline_;
  ChildStatus status_;
};

// Whole file contents ("" when missing).
std::string ReadWholeFile(const std::string& path);
// The last n characters of s, marked "[...]" when cut.
std::string Tail(const std::string& s, size_t n);
// s as one shell word.
std::string ShellQuote(const std::string& s);

}  // namespace testsupport
