// SPDX-License-Identifier: Apache-2.0
#include "jvmpi_test.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "test_config.h"

namespace jvmpitest {

void JvmpiTest::SetUp() {
  if (!jdk().present()) {
    GTEST_SKIP() << "JDK " << jdk().feature << " not present at " << jdk().home;
  }
  mkdir((std::string(TEST_AGENTS_DIR) + "/output").c_str(), 0755);
  std::remove(LogPath().c_str());
}

std::string JvmpiTest::Stem() const {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(info->test_suite_name()) + "." + info->name();
  for (char& c : name) {
    if (c == '/') c = '.';
  }
  // The pid keeps concurrent runs of the same test (two developers, ctest -j) apart.
  return std::string(TEST_AGENTS_DIR) + "/output/" + name + "." + std::to_string(getpid());
}

void JvmpiTest::TearDown() {
  // What a failed test saw stays for inspection; a passing test leaves nothing behind.
  if (HasFailure() || IsSkipped()) return;
  for (const char* suffix : {".log", ".out", ".err"}) std::remove((Stem() + suffix).c_str());
}

JvmOptions JvmpiTest::WithAgent(const std::string& agent, const std::string& main_class,
                                const std::string& extra_options) const {
  JvmOptions o;
  o.agent_spec = AgentLibrary(agent) + ":log=" + LogPath() +
                 (extra_options.empty() ? "" : "," + extra_options);
  o.vm_args.push_back("-Djvmpitest.agent=" + AgentLibrary(agent));
  o.vm_args.push_back("-Djvmpitest.native=" + AgentLibrary("native"));
  // JDK 22+ warns when System.load is called without it.
  if (jdk().feature >= 22) o.vm_args.push_back("--enable-native-access=ALL-UNNAMED");
  o.main_class = main_class;
  return o;
}

std::string DocStatus(int event) {
  std::ifstream doc(std::string(TEST_SOURCE_DIR) + "/docs/jvmpi-conformance.md");
  const std::string prefix = "| " + std::to_string(event) + " |";
  std::string line;
  while (std::getline(doc, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    // | n | NAME | status | ...
    const size_t a = line.find('|', prefix.size());
    const size_t b = a == std::string::npos ? a : line.find('|', a + 1);
    if (b == std::string::npos) break;
    std::string status = line.substr(a + 1, b - a - 1);
    status.erase(0, status.find_first_not_of(' '));
    status.erase(status.find_last_not_of(' ') + 1);
    return status;
  }
  return "";
}

}  // namespace jvmpitest
