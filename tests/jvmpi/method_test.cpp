// SPDX-License-Identifier: Apache-2.0
// METHOD_ENTRY, METHOD_ENTRY2 and METHOD_EXIT. docs/jvmpi-conformance.md says whether the runtime
// offers them yet: while it says "later", EnableEvent must answer JVMPI_NOT_AVAILABLE and the rest
// is skipped; once it says anything else, the events are checked in full.
#include "jvmpi_test.h"

namespace jvmpitest {
namespace {

constexpr int kNotAvailable = 1;

class JvmpiMethodEvents : public JvmpiTest {
 protected:
  // Runs MethodProgram with the given entry event; false (and the test skipped) while the
  // conformance table lists the events as not implemented yet.
  bool RunProgram(const char* events, int entry_event) {
    result_ = Run(WithAgent("methods", "jvmpitest.MethodProgram", std::string("events=") + events));
    EXPECT_TRUE(result_.exited(0)) << result_.Describe();
    log_ = Log();
    const std::string status = DocStatus(entry_event);
    EXPECT_NE(status, "") << "no row for event " << entry_event << " in the conformance table";
    auto entry = Select(log_, "ENABLE", {{"event", std::to_string(entry_event)}});
    auto exit = Select(log_, "ENABLE", {{"event", "3"}});
    EXPECT_EQ(entry.size(), 1u);
    EXPECT_EQ(exit.size(), 1u);
    if (entry.empty() || exit.empty()) return false;
    if (status == "later") {
      EXPECT_EQ(entry[0].num("rc"), kNotAvailable) << "documented as later, yet enabled";
      EXPECT_EQ(exit[0].num("rc"), kNotAvailable);
      return false;
    }
    EXPECT_EQ(entry[0].num("rc"), 0) << "documented as " << status;
    EXPECT_EQ(exit[0].num("rc"), 0);
    return entry[0].num("rc") == 0 && exit[0].num("rc") == 0;
  }

  Line Count(const std::string& method) {
    auto c = Select(log_, "COUNT", {{"method", "jvmpitest.MethodProgram" + method}});
    EXPECT_EQ(c.size(), 1u) << "no events for " << method << "\n" << result_.Describe();
    return c.empty() ? Line{} : c[0];
  }

  void ExpectCallsCounted() {
    const int64_t rounds = 3000, throws = 3;  // MethodProgram.ROUNDS, THROWS
    for (const char* m : {"$Worker.work", ".middle", ".leaf"}) {
      Line c = Count(m);
      if (c.raw.empty()) continue;
      EXPECT_EQ(c.num("entries"), rounds) << c.raw;
      EXPECT_EQ(c.num("exits"), rounds) << c.raw;
    }
    Line t = Count(".thrower");
    if (!t.raw.empty()) {
      EXPECT_EQ(t.num("entries"), throws);
      EXPECT_EQ(t.num("exits"), throws) << "an exit by exception is an exit too";
    }
    auto stack = Select(log_, "STACK");
    ASSERT_EQ(stack.size(), 1u);
    EXPECT_EQ(stack[0].num("mismatches"), 0) << "a METHOD_EXIT did not close the latest entry";
    EXPECT_EQ(stack[0].num("overflow"), 0);
  }

  JvmResult result_;
  std::vector<Line> log_;
};

TEST_P(JvmpiMethodEvents, EntryAndExitPairUpWithTheCalls) {
  if (!RunProgram("entry", 1)) {
    if (!HasFailure()) GTEST_SKIP() << "METHOD_ENTRY is documented as not available yet";
    return;
  }
  ExpectCallsCounted();
}

TEST_P(JvmpiMethodEvents, Entry2CarriesTheReceiver) {
  if (!RunProgram("entry2", 2)) {
    if (!HasFailure()) GTEST_SKIP() << "METHOD_ENTRY2 is documented as not available yet";
    return;
  }
  ExpectCallsCounted();
  Line work = Count("$Worker.work");
  if (!work.raw.empty()) {
    EXPECT_EQ(work.num("receiver_worker"), work.num("entries")) << work.raw;
  }
  for (const char* m : {".middle", ".leaf", ".thrower"}) {
    Line c = Count(m);
    if (!c.raw.empty()) {
      EXPECT_EQ(c.num("receiver_null"), c.num("entries")) << "static: " << c.raw;
    }
  }
}

JVMPI_TEST_SUITE(JvmpiMethodEvents);

}  // namespace
}  // namespace jvmpitest
