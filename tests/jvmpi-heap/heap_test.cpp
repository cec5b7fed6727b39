// SPDX-License-Identifier: Apache-2.0
#include "heap_test.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "test_config.h"

namespace jvmpiheap {

std::vector<Jdk> all_jdks() {
  return {{"jdk17", TEST_JDK17_HOME}, {"jdk25", TEST_JDK25_HOME}};
}

void PrintTo(const Jdk& jdk, std::ostream* os) {
  *os << jdk.name;
}

std::string jdk_param_name(const testing::TestParamInfo<Jdk>& info) {
  return info.param.name;
}

std::string agent_path(const std::string& agent) {
  return std::string(HEAP_AGENTS_DIR) + "/libjvmpiheap_" + agent + ".so";
}

std::string native_lib_path() {
  return std::string(HEAP_AGENTS_DIR) + "/libjvmpiheap_native.so";
}

std::string test_classes_dir() {
  return HEAP_TEST_CLASSES;
}

unsigned long long parse_number(const std::string& s) {
  if (s.empty()) return 0;
  return std::strtoull(s.c_str(), nullptr, 0);
}

Facts::Facts(const std::string& out) {
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("FACT ", 0) != 0) continue;
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    values_.emplace(line.substr(5, eq - 5), line.substr(eq + 1));
  }
}

std::string Facts::get(const std::string& key) const {
  auto it = values_.find(key);
  return it == values_.end() ? "" : it->second;
}

long long Facts::num(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return -1;
  return static_cast<long long>(std::strtoll(it->second.c_str(), nullptr, 0));
}

std::vector<std::string> Facts::all(const std::string& key) const {
  std::vector<std::string> out;
  auto [b, e] = values_.equal_range(key);
  for (auto it = b; it != e; ++it) out.push_back(it->second);
  return out;
}

void HeapTest::SetUp() {
  const std::string java = jdk().home + "/bin/java";
  if (access(java.c_str(), X_OK) != 0) {
    GTEST_SKIP() << jdk().name << " not installed (no " << java << ")";
  }
  const auto* info = testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(info->test_suite_name()) + "." + info->name();
  for (char& c : name) {
    if (c == '/') c = '.';
  }
  out_dir_ = std::string(HEAP_AGENTS_DIR) + "/output/" + name;
  std::filesystem::remove_all(out_dir_);
  std::filesystem::create_directories(out_dir_);
}

void HeapTest::TearDown() {
  // Passing tests leave nothing behind; failing ones keep their files for inspection.
  if (!out_dir_.empty() && !HasFailure() && std::getenv("JVMPIHEAP_KEEP") == nullptr) {
    std::filesystem::remove_all(out_dir_);
  }
}

LaunchResult HeapTest::run_java(const std::string& agent, const std::string& agent_options,
                                const std::string& main_class, const std::vector<std::string>& args,
                                const std::vector<std::string>& jvm_options, int timeout_seconds) {
  const char* lib_override = std::getenv("JVMPI_TEST_LIB");
  const std::string lib = lib_override != nullptr ? lib_override : TEST_JVMPI_LIB;
  std::string opts = "out=" + out_dir_;
  if (!agent_options.empty()) opts += "," + agent_options;
  LaunchSpec spec;
  spec.argv = {jdk().home + "/bin/java",
               "-agentpath:" + lib + "=" + agent_path(agent) + ":" + opts,
               "-Xshare:auto",
               "-Djvmpiheap.agent=" + agent_path(agent),
               "-Djvmpiheap.native=" + native_lib_path(),
               "-Djvmpiheap.out=" + out_dir_,
               "-cp",
               test_classes_dir()};
  for (const auto& o : jvm_options) spec.argv.push_back(o);
  spec.argv.push_back(main_class);
  for (const auto& a : args) spec.argv.push_back(a);
  spec.stdout_path = out_dir_ + "/java.out";
  spec.stderr_path = out_dir_ + "/java.err";
  spec.timeout_seconds = timeout_seconds;
  return launch(spec);
}

void HeapTest::expect_clean_exit(const LaunchResult& r) {
  EXPECT_TRUE(r.started);
  EXPECT_FALSE(r.timed_out) << "stdout:\n" << r.out << "\nstderr:\n" << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.describe() << "\nstdout:\n" << r.out << "\nstderr:\n" << r.err;
}

}  // namespace jvmpiheap
