#include "launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "hprof_test_config.h"

extern char** environ;

namespace hproftest {

bool Jdk::present() const {
  return access(java().c_str(), X_OK) == 0;
}

Jdk Jdk17() {
  return {17, HPROF_TEST_JDK17_HOME};
}
Jdk Jdk25() {
  return {25, HPROF_TEST_JDK25_HOME};
}

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/hprof-test-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  if (keep_) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool FileExists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

namespace {

std::string Tail(const std::string& s, size_t n) {
  return s.size() <= n ? s : "[...]" + s.substr(s.size() - n);
}

std::string Quote(const std::string& s) {
  if (!s.empty() && s.find_first_of(" \t'\"$\\;&|<>()*?") == std::string::npos) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

std::string LibDir() {
  const char* dir = std::getenv("HPROF_TEST_LIB_DIR");
  return dir != nullptr && *dir != '\0' ? dir : HPROF_TEST_LIB_DIR;
}

std::string RunResult::describe() const {
  std::ostringstream os;
  os << "command: " << command << "\nended: ";
  if (timed_out) {
    os << "TIMED OUT, killed";
    if (!stacks_file.empty()) os << " (native stacks before the kill: " << stacks_file << ")";
  } else if (signal != 0) {
    os << "killed by signal " << signal;
  } else {
    os << "exit code " << exit_code;
  }
  os << "\n--- stdout ---\n" << Tail(out, 3000) << "\n--- stderr ---\n" << Tail(err, 5000);
  return os.str();
}

JavaProcess::JavaProcess(const Jdk& jdk, const JavaCommand& command, const std::string& work_dir)
    : out_path_(work_dir + "/_stdout.txt"),
      err_path_(work_dir + "/_stderr.txt"),
      stacks_path_(work_dir + "/_hang_stacks.txt") {
  std::vector<std::string> argv{jdk.java()};
  for (const auto& a : command.vm_args) argv.push_back(a);
  if (!command.main_class.empty()) {
    argv.push_back("-cp");
    argv.push_back(HPROF_TEST_CLASSES);
    argv.push_back(command.main_class);
  }
  for (const auto& a : command.args) argv.push_back(a);

  std::vector<std::pair<std::string, std::string>> set = command.env;
  set.emplace_back("LD_LIBRARY_PATH", LibDir());
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string key = entry.substr(0, entry.find('='));
    bool drop = key == "_JAVA_HPROF_OPTIONS" || key == "JAVA_TOOL_OPTIONS" ||
                key == "_JAVA_OPTIONS" || key == "JDK_JAVA_OPTIONS";
    for (const auto& [k, v] : set) drop |= key == k;
    for (const auto& k : command.unset_env) drop |= key == k;
    if (!drop) env.push_back(entry);
  }
  for (const auto& [k, v] : set) env.push_back(k + "=" + v);

  std::string line = "cd " + Quote(work_dir) + " &&";
  for (const auto& [k, v] : set) line += " " + k + "=" + Quote(v);
  for (const auto& a : argv) line += " " + Quote(a);
  result_.command = line;

  std::vector<char*> cargv, cenv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  for (auto& e : env) cenv.push_back(e.data());
  cenv.push_back(nullptr);

  int in_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  const int out_fd = open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int err_fd = open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out_fd < 0 || err_fd < 0) throw std::runtime_error("cannot create " + out_path_);
  const std::string dir = work_dir;

  deadline_ = std::chrono::steady_clock::now() + command.timeout;
  pid_ = fork();
  if (pid_ == 0) {
    setpgid(0, 0);  // its own process group: a time-out kills everything it started
    // The test process may block signals (gtest does not, but be sure): the JVM expects defaults.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    dup2(in_pipe[0], 0);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    if (chdir(dir.c_str()) != 0) _exit(126);
    execve(cargv[0], cargv.data(), cenv.data());
    const char msg[] = "launcher: execve failed\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_fd);
  close(err_fd);
  stdin_fd_ = in_pipe[1];
  if (pid_ < 0) throw std::runtime_error("fork failed");
  result_.pid = pid_;
}

JavaProcess::~JavaProcess() {
  if (pid_ > 0 && !reaped_) {
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (stdin_fd_ >= 0) close(stdin_fd_);
}

void JavaProcess::pause() {
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

void JavaProcess::reap(int status) {
  reaped_ = true;
  if (WIFSIGNALED(status)) result_.signal = WTERMSIG(status);
  if (WIFEXITED(status)) result_.exit_code = WEXITSTATUS(status);
}

bool JavaProcess::running() {
  if (reaped_) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    reap(status);
    return false;
  }
  if (expired()) {
    kill_hung();
    return false;
  }
  return true;
}

void JavaProcess::kill_hung() {
  // Keep the native stacks of a hung JVM for the bug report, when gdb is there.
  if (access("/usr/bin/gdb", X_OK) == 0) {
    const std::string cmd = "timeout 60 /usr/bin/gdb -p " + std::to_string(pid_) +
                            " -batch -ex 'thread apply all bt 30' > '" + stacks_path_ +
                            "' 2>&1 < /dev/null";
    if (std::system(cmd.c_str()) == 0) result_.stacks_file = stacks_path_;
  }
  kill(-pid_, SIGKILL);
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  reaped_ = true;
  result_.timed_out = true;
}

std::string JavaProcess::stdout_so_far() const {
  return ReadFile(out_path_);
}

bool JavaProcess::wait_for_stdout(const std::string& text) {
  return wait_until([&] { return stdout_so_far().find(text) != std::string::npos; });
}

void JavaProcess::signal(int sig) {
  if (!reaped_) kill(pid_, sig);
}

void JavaProcess::write_stdin(const std::string& text) {
  if (stdin_fd_ >= 0) (void)!write(stdin_fd_, text.data(), text.size());
}

void JavaProcess::close_stdin() {
  if (stdin_fd_ >= 0) close(stdin_fd_);
  stdin_fd_ = -1;
}

RunResult JavaProcess::wait(bool close_input) {
  if (close_input) close_stdin();
  while (running()) pause();
  result_.out = ReadFile(out_path_);
  result_.err = ReadFile(err_path_);
  return result_;
}

RunResult RunJava(const Jdk& jdk, const JavaCommand& command, const std::string& work_dir) {
  JavaProcess p(jdk, command, work_dir);
  return p.wait();
}

}  // namespace hproftest
