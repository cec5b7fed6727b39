// SPDX-License-Identifier: Apache-2.0
#include "launcher.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "hprof_test_config.h"

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
  return testsupport::ReadWholeFile(path);
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
  os << "\n--- stdout ---\n"
     << testsupport::Tail(out, 3000) << "\n--- stderr ---\n"
     << testsupport::Tail(err, 5000);
  return os.str();
}

namespace {

testsupport::ChildSpec JavaSpec(const Jdk& jdk, const JavaCommand& command,
                                const std::string& work_dir) {
  testsupport::ChildSpec spec;
  spec.argv.push_back(jdk.java());
  for (const auto& a : command.vm_args) spec.argv.push_back(a);
  if (!command.main_class.empty()) {
    spec.argv.push_back("-cp");
    spec.argv.push_back(HPROF_TEST_CLASSES);
    spec.argv.push_back(command.main_class);
  }
  for (const auto& a : command.args) spec.argv.push_back(a);
  spec.set_env = command.env;
  spec.set_env.emplace_back("LD_LIBRARY_PATH", LibDir());
  // Options from the test's own environment would change what the JVM under test does.
  spec.unset_env = {"_JAVA_HPROF_OPTIONS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
                    "JDK_JAVA_OPTIONS"};
  spec.unset_env.insert(spec.unset_env.end(), command.unset_env.begin(), command.unset_env.end());
  spec.stdout_path = work_dir + "/_stdout.txt";
  spec.stderr_path = work_dir + "/_stderr.txt";
  spec.work_dir = work_dir;
  spec.timeout = command.timeout;
  spec.stacks_path = work_dir + "/_hang_stacks.txt";
  return spec;
}

}  // namespace

JavaProcess::JavaProcess(const Jdk& jdk, const JavaCommand& command, const std::string& work_dir)
    : process_(JavaSpec(jdk, command, work_dir)) {
  result_.command = process_.command();
  result_.pid = process_.pid();
}

JavaProcess::~JavaProcess() = default;

bool JavaProcess::running() {
  return process_.running();
}

std::string JavaProcess::stdout_so_far() const {
  return process_.stdout_so_far();
}

std::string JavaProcess::stderr_so_far() const {
  return process_.stderr_so_far();
}

bool JavaProcess::wait_for_stdout(const std::string& text) {
  return wait_until([&] { return stdout_so_far().find(text) != std::string::npos; });
}

void JavaProcess::signal(int sig) {
  process_.signal(sig);
}

void JavaProcess::write_stdin(const std::string& text) {
  process_.write_stdin(text);
}

void JavaProcess::close_stdin() {
  process_.close_stdin();
}

RunResult JavaProcess::wait(bool close_input) {
  if (close_input) close_stdin();
  const testsupport::ChildStatus& status = process_.wait();
  result_.exit_code = status.exit_code;
  result_.signal = status.signal;
  result_.timed_out = status.timed_out;
  result_.stacks_file = status.stacks_file;
  result_.out = process_.stdout_so_far();
  result_.err = process_.stderr_so_far();
  return result_;
}

RunResult RunJava(const Jdk& jdk, const JavaCommand& command, const std::string& work_dir) {
  JavaProcess p(jdk, command, work_dir);
  return p.wait();
}

}  // namespace hproftest
