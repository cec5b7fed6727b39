#include "jvm_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "test_config.h"

extern char** environ;

namespace jvmpitest {

bool Jdk::present() const {
  return access(java().c_str(), X_OK) == 0;
}

void PrintTo(const Jdk& jdk, std::ostream* os) {
  *os << jdk.name << " (" << jdk.home << ")";
}

std::vector<Jdk> AllJdks() {
  return {{"jdk17", TEST_JDK17_HOME, 17}, {"jdk25", TEST_JDK25_HOME, 25}};
}

std::string JvmpiLibrary() {
  const char* override_path = std::getenv("JVMPI_TEST_LIB");
  return override_path != nullptr && *override_path != '\0' ? override_path : TEST_JVMPI_LIB;
}

std::string AgentLibrary(const std::string& short_name) {
  return std::string(TEST_AGENTS_DIR) + "/libjvmpitest_" + short_name + ".so";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace {

std::string Tail(const std::string& s, size_t n) {
  return s.size() <= n ? s : "[...]" + s.substr(s.size() - n);
}

std::string Quote(const std::string& s) {
  if (s.find_first_of(" \t'\"$") == std::string::npos) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

std::string JvmResult::Describe() const {
  std::ostringstream os;
  os << "command: " << command << "\nstatus: ";
  if (timed_out) {
    os << "TIMED OUT (killed)";
  } else if (signaled) {
    os << "killed by signal " << term_signal;
  } else {
    os << "exit code " << exit_code;
  }
  os << "\n--- stdout ---\n" << Tail(out, 6000) << "\n--- stderr ---\n" << Tail(err, 6000);
  return os.str();
}

JvmProcess::JvmProcess(const Jdk& jdk, const JvmOptions& options, const std::string& output_stem)
    : out_path_(output_stem + ".out"), err_path_(output_stem + ".err") {
  std::vector<std::string> argv{jdk.java()};
  if (options.with_agentpath) {
    std::string agentpath = "-agentpath:" + JvmpiLibrary();
    if (options.agent_spec) agentpath += "=" + *options.agent_spec;
    argv.push_back(agentpath);
  }
  for (const auto& a : options.vm_args) argv.push_back(a);
  argv.push_back("-cp");
  argv.push_back(TEST_JAVA_TEST_CLASSES);
  argv.push_back(options.main_class);
  for (const auto& a : options.args) argv.push_back(a);

  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    bool overridden = false;
    for (const auto& [k, v] : options.env) overridden |= entry.rfind(k + "=", 0) == 0;
    if (!overridden) env.push_back(entry);
  }
  for (const auto& [k, v] : options.env) env.push_back(k + "=" + v);

  for (const auto& a : argv) command_ += (command_.empty() ? "" : " ") + Quote(a);
  for (const auto& [k, v] : options.env) command_ = k + "=" + Quote(v) + " " + command_;
  result_.command = command_;

  std::vector<char*> cargv, cenv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  for (auto& e : env) cenv.push_back(e.data());
  cenv.push_back(nullptr);

  int in_pipe[2];
  if (pipe(in_pipe) != 0) throw std::runtime_error("pipe failed");
  int out_fd = open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int err_fd = open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out_fd < 0 || err_fd < 0) throw std::runtime_error("cannot create " + out_path_);

  deadline_ = std::chrono::steady_clock::now() + options.timeout;
  pid_ = fork();
  if (pid_ == 0) {
    setpgid(0, 0);  // its own group, so a timeout kills everything it started
    dup2(in_pipe[0], 0);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    close(in_pipe[0]);
    close(in_pipe[1]);
    execve(cargv[0], cargv.data(), cenv.data());
    const char msg[] = "jvm_runner: execve failed\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_fd);
  close(err_fd);
  stdin_fd_ = in_pipe[1];
  if (pid_ < 0) throw std::runtime_error("fork failed");
}

JvmProcess::~JvmProcess() {
  if (pid_ > 0 && !reaped_) {
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (stdin_fd_ >= 0) close(stdin_fd_);
}

bool JvmProcess::WaitForStdout(const std::string& text, std::chrono::milliseconds bound) {
  const auto end = std::chrono::steady_clock::now() + bound;
  while (std::chrono::steady_clock::now() < end) {
    if (ReadFile(out_path_).find(text) != std::string::npos) return true;
    int status;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      reaped_ = true;
      result_.signaled = WIFSIGNALED(status);
      result_.term_signal = result_.signaled ? WTERMSIG(status) : 0;
      result_.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      return ReadFile(out_path_).find(text) != std::string::npos;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

void JvmProcess::Signal(int sig) {
  if (!reaped_) kill(pid_, sig);
}

void JvmProcess::WriteStdin(const std::string& text) {
  if (stdin_fd_ >= 0) (void)!write(stdin_fd_, text.data(), text.size());
}

void JvmProcess::CloseStdin() {
  if (stdin_fd_ >= 0) close(stdin_fd_);
  stdin_fd_ = -1;
}

JvmResult JvmProcess::Wait() {
  while (!reaped_) {
    int status;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      result_.signaled = WIFSIGNALED(status);
      result_.term_signal = result_.signaled ? WTERMSIG(status) : 0;
      result_.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      break;
    }
    if (std::chrono::steady_clock::now() > deadline_) {
      kill(-pid_, SIGKILL);
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      reaped_ = true;
      result_.timed_out = true;
      CloseStdin();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  result_.out = ReadFile(out_path_);
  result_.err = ReadFile(err_path_);
  return result_;
}

JvmResult RunJvm(const Jdk& jdk, const JvmOptions& options, const std::string& output_stem) {
  JvmProcess process(jdk, options, output_stem);
  process.CloseStdin();  // a program that reads stdin sees its end at once
  return process.Wait();
}

std::string Line::get(const std::string& key) const {
  auto it = kv.find(key);
  return it == kv.end() ? std::string() : it->second;
}

int64_t Line::num(const std::string& key) const {
  auto it = kv.find(key);
  if (it == kv.end()) throw std::runtime_error("no " + key + " in: " + raw);
  size_t used = 0;
  int64_t v = std::stoll(it->second, &used, 10);
  if (used != it->second.size()) throw std::runtime_error("not a number: " + key + " in: " + raw);
  return v;
}

uint64_t Line::ptr(const std::string& key) const {
  auto it = kv.find(key);
  if (it == kv.end()) throw std::runtime_error("no " + key + " in: " + raw);
  return std::stoull(it->second, nullptr, 16);
}

std::vector<Line> ParseLines(const std::string& text) {
  std::vector<Line> lines;
  std::istringstream in(text);
  std::string raw;
  while (std::getline(in, raw)) {
    Line line;
    line.index = lines.size();
    line.raw = raw;
    std::istringstream fields(raw);
    std::string field;
    bool first = true;
    while (std::getline(fields, field, '\t')) {
      if (first) {
        line.tag = field;
        first = false;
        continue;
      }
      auto eq = field.find('=');
      if (eq != std::string::npos) line.kv[field.substr(0, eq)] = field.substr(eq + 1);
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

std::vector<Line> ReadLog(const std::string& path) {
  return ParseLines(ReadFile(path));
}

std::vector<Line> Select(const std::vector<Line>& lines, const std::string& tag,
                         const std::map<std::string, std::string>& match) {
  std::vector<Line> out;
  for (const auto& l : lines) {
    if (l.tag != tag) continue;
    bool ok = true;
    for (const auto& [k, v] : match) ok &= l.get(k) == v;
    if (ok) out.push_back(l);
  }
  return out;
}

}  // namespace jvmpitest
