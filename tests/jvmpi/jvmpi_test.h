// SPDX-License-Identifier: Apache-2.0
// The fixture of the JVMPI conformance tests: every test runs once per JDK (17, and 25 when it
// is installed), launching a real JVM with libjvmpi.so and one of the conformance agents.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "jvm_runner.h"

namespace jvmpitest {

class JvmpiTest : public ::testing::TestWithParam<Jdk> {
 protected:
  void SetUp() override;
  void TearDown() override;

  const Jdk& jdk() const { return GetParam(); }
  // Unique per test, JDK and process: <build>/tests/jvmpi/output/<suite>.<test>.<jdk>.<pid>;
  // the files of passing tests are removed.
  std::string Stem() const;
  std::string LogPath() const { return Stem() + ".log"; }
  std::vector<Line> Log() const { return ReadLog(LogPath()); }

  // Options to run main_class with agent lib<jvmpitest_<agent>>.so given "log=<LogPath()>"
  // (plus extra_options), the agent's path as -Djvmpitest.agent (for Agent.hook) and the JNI
  // helper library as -Djvmpitest.native.
  JvmOptions WithAgent(const std::string& agent, const std::string& main_class,
                       const std::string& extra_options = "") const;
  JvmResult Run(const JvmOptions& options) const { return RunJvm(jdk(), options, Stem()); }
};

// The status column of an event's row in docs/jvmpi-conformance.md ("full", "later", ...), or
// "" when the table has no such row.
std::string DocStatus(int event);

// Instantiates a JvmpiTest suite for every JDK, naming the variants jdk17 and jdk25.
#define JVMPI_TEST_SUITE(suite)                                                      \
  INSTANTIATE_TEST_SUITE_P(Jdks, suite, ::testing::ValuesIn(::jvmpitest::AllJdks()), \
                           [](const auto& info) { return info.param.name; })

}  // namespace jvmpitest
