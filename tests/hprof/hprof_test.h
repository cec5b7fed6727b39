// SPDX-License-Identifier: Apache-2.0
// The fixture of the HPROF tests: one instance per JDK (17 always; 25 when installed, else the
// test is skipped), a fresh working directory per test, and helpers to run a test program under
// HPROF and read its java.hprof.txt.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hprof_text.h"
#include "launcher.h"

namespace hproftest {

class HprofTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override;
  void TearDown() override;

  const Jdk& jdk() const { return jdk_; }
  const TempDir& dir() const { return dir_; }
  std::string path(const std::string& name) const { return dir_ / name; }

  // java -agentlib:hprof=<options> [vm_args] <main_class> <args> in the test's directory.
  JavaCommand Command(const std::string& hprof_options, const std::string& main_class,
                      const std::vector<std::string>& args = {},
                      const std::vector<std::string>& vm_args = {}) const;
  RunResult Run(const std::string& hprof_options, const std::string& main_class,
                const std::vector<std::string>& args = {},
                const std::vector<std::string>& vm_args = {});
  RunResult Run(const JavaCommand& command);

  // Parses a profile the test's JVM wrote (default java.hprof.txt in the working directory).
  Profile ReadProfile(const std::string& name = "java.hprof.txt") const;

 private:
  Jdk jdk_;
  TempDir dir_;
};

// The profile's structural problems, for failure messages.
std::string Problems(const Profile& p);

// Lines of `text` that are not lines of HPROF's help screen (as printed by `help`).
std::vector<std::string> LinesOutsideHelp(const std::string& text, const std::string& help);

// A loopback TCP listener on an ephemeral port; accept_all() reads one connection to EOF.
class LoopbackReceiver {
 public:
  // Listens on 127.0.0.1:port (0: any free port).
  explicit LoopbackReceiver(int port = 0);
  ~LoopbackReceiver();
  int port() const { return port_; }
  // Accepts one connection (waits up to `seconds`); false if none came.
  bool accept_one(int seconds);
  // Reads what has arrived so far without blocking for long (up to `ms` per read).
  std::string read_available(int ms);
  // Reads until the peer closes or, once the JVM has ended, nothing more arrives.
  std::string read_to_eof(JavaProcess& jvm);
  void send(const std::string& bytes);
  std::string received() const { return data_; }

 private:
  int listen_fd_ = -1;
  int conn_fd_ = -1;
  int port_ = 0;
  std::string data_;
};

// A port on 127.0.0.1 that nothing listens on (bound, then closed).
int ClosedPort();

}  // namespace hproftest

#define INSTANTIATE_FOR_JDKS(Suite)                                        \
  INSTANTIATE_TEST_SUITE_P(Jdk, Suite, ::testing::Values(17, 25),          \
                           [](const ::testing::TestParamInfo<int>& info) { \
                             return "jdk" + std::to_string(info.param);    \
                           })

// Asserts that the profile is well formed, listing its problems and the run if not.
#define ASSERT_WELL_FORMED(profile, run)                                \
  ASSERT_TRUE((profile).ok()) << "java.hprof.txt is not well formed:\n" \
                              << ::hproftest::Problems(profile) << (run).describe()
#define EXPECT_WELL_FORMED(profile, run)                                \
  EXPECT_TRUE((profile).ok()) << "java.hprof.txt is not well formed:\n" \
                              << ::hproftest::Problems(profile) << (run).describe()
