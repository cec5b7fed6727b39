// SPDX-License-Identifier: Apache-2.0
#include "child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace testsupport {

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Tail(const std::string& s, size_t n) {
  return s.size() <= n ? s : "[...]" + s.substr(s.size() - n);
}

std::string ShellQuote(const std::string& s) {
  if (!s.empty() && s.find_first_of(" \t'\"$\\;&|<>()*?") == std::string::npos) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

namespace {

// This process's environment without the variables the spec sets or unsets, then those it sets.
std::vector<std::string> ChildEnvironment(const ChildSpec& spec) {
  auto replaced = [&](const std::string& key) {
    return std::any_of(spec.set_env.begin(), spec.set_env.end(),
                       [&](const auto& kv) { return kv.first == key; }) ||
           std::find(spec.unset_env.begin(), spec.unset_env.end(), key) != spec.unset_env.end();
  };
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (!replaced(entry.substr(0, entry.find('=')))) env.push_back(entry);
  }
  for (const auto& [k, v] : spec.set_env) env.push_back(k + "=" + v);
  return env;
}

std::string ShellLine(const ChildSpec& spec) {
  std::string line;
  auto add = [&](const std::string& word) { line += (line.empty() ? "" : " ") + word; };
  if (!spec.work_dir.empty()) add("cd " + ShellQuote(spec.work_dir) + " &&");
  for (const auto& [k, v] : spec.set_env) add(k + "=" + ShellQuote(v));
  for (const auto& a : spec.argv) add(ShellQuote(a));
  return line;
}

std::vector<char*> NullTerminated(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (auto& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

void CloseIfOpen(int fd) {
  if (fd >= 0) close(fd);
}

void WaitBlocking(pid_t pid, int* status) {
  while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

ChildProcess::ChildProcess(const ChildSpec& spec)
    : stdout_path_(spec.stdout_path),
      stderr_path_(spec.stderr_path),
      stacks_path_(spec.stacks_path),
      command_(ShellLine(spec)) {
  if (spec.argv.empty()) throw std::runtime_error("no program to run");
  // Everything the child needs is prepared before fork: only async-signal-safe calls after it.
  std::vector<std::string> args = spec.argv;
  std::vector<std::string> env = ChildEnvironment(spec);
  const std::vector<char*> cargv = NullTerminated(args);
  const std::vector<char*> cenv = NullTerminated(env);
  const std::string exec_failed = "child_process: execve failed: " + args[0] + "\n";
  const std::string dir = spec.work_dir;

  const int out_fd = open(stdout_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int err_fd = open(stderr_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int in_fds[2] = {-1, -1};  // [0] the child's stdin, [1] ours when it is a pipe
  const bool have_stdin = spec.stdin_pipe
                              ? pipe2(in_fds, O_CLOEXEC) == 0
                              : (in_fds[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;
  if (out_fd < 0 || err_fd < 0 || !have_stdin) {
    for (int fd : {out_fd, err_fd, in_fds[0], in_fds[1]}) CloseIfOpen(fd);
    throw std::runtime_error("cannot create " + stdout_path_ + ", " + stderr_path_ + " or stdin");
  }

  deadline_ = std::chrono::steady_clock::now() + spec.timeout;
  pid_ = fork();
  if (pid_ == 0) {
    setpgid(0, 0);  // its own process group, so a timeout kills everything it started
    // The test process may block signals (gtest does not, but be sure): the JVM expects defaults.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    dup2(in_fds[0], STDIN_FILENO);
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    if (!dir.empty() && chdir(dir.c_str()) != 0) _exit(126);
    execve(cargv[0], cargv.data(), cenv.data());
    (void)!write(STDERR_FILENO, exec_failed.data(), exec_failed.size());
    _exit(127);
  }
  for (int fd : {out_fd, err_fd, in_fds[0]}) close(fd);
  stdin_fd_ = in_fds[1];
  if (pid_ < 0) {
    close_stdin();
    throw std::runtime_error("fork failed");
  }
  setpgid(pid_, pid_);  // also from here, so the group exists even if the child has not run yet
}

ChildProcess::~ChildProcess() {
  if (!reaped_) {
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    int status = 0;
    WaitBlocking(pid_, &status);
  }
  close_stdin();
}

void ChildProcess::pause() {
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

void ChildProcess::record(int wait_status) {
  reaped_ = true;
  if (WIFSIGNALED(wait_status)) status_.signal = WTERMSIG(wait_status);
  if (WIFEXITED(wait_status)) status_.exit_code = WEXITSTATUS(wait_status);
}

bool ChildProcess::ended() {
  if (reaped_) return true;
  int wait_status = 0;
  const pid_t r = waitpid(pid_, &wait_status, WNOHANG);
  if (r == pid_) record(wait_status);
  // Any other failure means there is no child left to wait for.
  if (r < 0 && errno != EINTR) reaped_ = true;
  return reaped_;
}

bool ChildProcess::running() {
  if (ended()) return false;
  if (!expired()) return true;
  kill_at_time_limit();
  return false;
}

void ChildProcess::kill_at_time_limit() {
  // Keep the native stacks of a hung JVM for the bug report, when gdb is there.
  if (!stacks_path_.empty() && access("/usr/bin/gdb", X_OK) == 0) {
    const std::string cmd = "timeout 60 /usr/bin/gdb -p " + std::to_string(pid_) +
                            " -batch -ex 'thread apply all bt 30' > " + ShellQuote(stacks_path_) +
                            " 2>&1 < /dev/null";
    if (std::system(cmd.c_str()) == 0) status_.stacks_file = stacks_path_;
  }
  kill(-pid_, SIGKILL);
  kill(pid_, SIGKILL);
  int ignored = 0;
  WaitBlocking(pid_, &ignored);
  reaped_ = true;
  status_.timed_out = true;
  close_stdin();
}

const ChildStatus& ChildProcess::wait() {
  while (running()) pause();
  return status_;
}

void ChildProcess::signal(int sig) {
  if (!reaped_) kill(pid_, sig);
}

void ChildProcess::write_stdin(const std::string& text) {
  if (stdin_fd_ >= 0) (void)!write(stdin_fd_, text.data(), text.size());
}

void ChildProcess::close_stdin() {
  if (stdin_fd_ >= 0) close(stdin_fd_);
  stdin_fd_ = -1;
}

std::string ChildProcess::stdout_so_far() const {
  return ReadWholeFile(stdout_path_);
}

std::string ChildProcess::stderr_so_far() const {
  return ReadWholeFile(stderr_path_);
}

}  // namespace testsupport
