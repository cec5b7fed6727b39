// SPDX-License-Identifier: Apache-2.0
#include "jvm_runner.h"

#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "test_config.h"

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
  return testsupport::ReadWholeFile(path);
}

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
  os << "\n--- stdout ---\n"
     << testsupport::Tail(out, 6000) << "\n--- stderr ---\n"
     << testsupport::Tail(err, 6000);
  return os.str();
}

namespace {

testsupport::ChildSpec JvmSpec(const Jdk& jdk, const JvmOptions& options,
                               const std::string& output_stem) {
  testsupport::ChildSpec spec;
  spec.argv.push_back(jdk.java());
  if (options.with_agentpath) {
    std::string agentpath = "-agentpath:" + JvmpiLibrary();
    if (options.agent_spec) agentpath += "=" + *options.agent_spec;
    spec.argv.push_back(agentpath);
  }
  for (const auto& a : options.vm_args) spec.argv.push_back(a);
  spec.argv.push_back("-cp");
  spec.argv.push_back(TEST_JAVA_TEST_CLASSES);
  spec.argv.push_back(options.main_class);
  for (const auto& a : options.args) spec.argv.push_back(a);
  spec.set_env = options.env;
  spec.stdout_path = output_stem + ".out";
  spec.stderr_path = output_stem + ".err";
  spec.timeout = options.timeout;
  return spec;
}

}  // namespace

JvmProcess::JvmProcess(const Jdk& jdk, const JvmOptions& options, const std::string& output_stem)
    : process_(JvmSpec(jdk, options, output_stem)) {
  result_.command = process_.command();
}

JvmProcess::~JvmProcess() = default;

bool JvmProcess::WaitForStdout(const std::string& text, std::chrono::milliseconds bound) {
  const auto end = std::chrono::steady_clock::now() + bound;
  auto seen = [&] { return process_.stdout_so_far().find(text) != std::string::npos; };
  while (std::chrono::steady_clock::now() < end) {
    if (seen()) return true;
    // Not killed here at the time limit: Wait does that.
    if (process_.ended()) return seen();
    testsupport::ChildProcess::pause();
  }
  return false;
}

void JvmProcess::Signal(int sig) {
  process_.signal(sig);
}

void JvmProcess::WriteStdin(const std::string& text) {
  process_.write_stdin(text);
}

void JvmProcess::CloseStdin() {
  process_.close_stdin();
}

JvmResult JvmProcess::Wait() {
  const testsupport::ChildStatus& status = process_.wait();
  result_.timed_out = status.timed_out;
  result_.signaled = status.signal != 0;
  result_.term_signal = status.signal;
  result_.exit_code = status.exit_code;
  result_.out = process_.stdout_so_far();
  result_.err = process_.stderr_so_far();
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
