// SPDX-License-Identifier: Apache-2.0
// Every event of a thread comes between its THREAD_START and its THREAD_END, on every thread the
// program has, including the thread that ends the VM (DestroyJavaVM), which the launcher attaches
// on the OS thread that ran main and which may get main's JNIEnv address back. Agent:
// agents/order_agent.c, with method events on (they come from every thread that runs Java code).
#include "jvmpi_test.h"

namespace jvmpitest {
namespace {

class JvmpiThreadOrder : public JvmpiTest {};

TEST_P(JvmpiThreadOrder, NoEventOutsideItsThreadsStartAndEnd) {
  const JvmResult result = Run(WithAgent("order", "jvmpitest.StartupProgram"));
  ASSERT_TRUE(result.exited(0)) << result.Describe();
  const auto log = Log();
  auto summary = Select(log, "SUMMARY");
  ASSERT_EQ(summary.size(), 1u) << result.Describe();
  std::string first;
  for (const Line& v : Select(log, "VIOLATION")) first += v.raw + "\n";
  EXPECT_GT(summary[0].num("checked"), 1000) << summary[0].raw;
  EXPECT_EQ(summary[0].num("before_start"), 0) << summary[0].raw << "\n" << first;
  EXPECT_EQ(summary[0].num("after_end"), 0) << summary[0].raw << "\n" << first;
  EXPECT_EQ(summary[0].num("tls_lost"), 0) << summary[0].raw;
}

JVMPI_TEST_SUITE(JvmpiThreadOrder);

}  // namespace
}  // namespace jvmpitest
