// SPDX-License-Identifier: Apache-2.0
// Which threads a new net= connection's hello announces again (ThreadTable::
// alive_since_last_period): the live ones and those that ended since the last period began (the
// next period may still name them, also after a new thread took over their JNIEnv), never one that
// ended before it; the ended ones kept are bounded however many threads come and go.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tables.h"

namespace hprof::agent {
namespace {

JNIEnv* Env(uintptr_t n) {
  return reinterpret_cast<JNIEnv*>(n * 64);
}

unsigned Start(ThreadTable& t, JNIEnv* env, const std::string& name) {
  std::string group = "main";
  JVMPI_Event e{};
  e.event_type = JVMPI_EVENT_THREAD_START;
  e.u.thread_start.thread_name = const_cast<char*>(name.c_str());
  e.u.thread_start.group_name = group.data();
  e.u.thread_start.parent_name = group.data();
  e.u.thread_start.thread_env_id = env;
  return t.on_thread_start(e);
}

std::vector<std::string> Names(const ThreadTable& t) {
  std::vector<std::string> out;
  for (const ThreadInfo& i : t.alive_since_last_period()) out.push_back(i.name);
  return out;
}

TEST(ThreadReplay, LiveThreadsAndThoseEndedSinceThePeriodBeganInSerialOrder) {
  ThreadTable t;
  t.begin_period();
  Start(t, Env(1), "main");
  Start(t, Env(2), "early");
  Start(t, Env(3), "worker");
  t.on_thread_end(Env(2));
  t.begin_period();  // "early" ended before this period: its samples are all in earlier ones
  t.on_thread_end(Env(3));
  EXPECT_EQ(Names(t), (std::vector<std::string>{"main", "worker"}));
  // A new thread on worker's env: worker is still announced, under its own serial.
  const unsigned next = Start(t, Env(3), "next");
  const std::vector<ThreadInfo> got = t.alive_since_last_period();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[1].name, "worker");
  EXPECT_FALSE(got[1].alive);
  EXPECT_EQ(got[2].name, "next");
  EXPECT_EQ(got[2].serial, next);
  // The next period: worker is no longer named by anything to come.
  t.begin_period();
  EXPECT_EQ(Names(t), (std::vector<std::string>{"main", "next"}));
}

TEST(ThreadReplay, EndedThreadsKeptAreBounded) {
  ThreadTable t;
  t.begin_period();
  // A collector away for long: threads start and end on one env, no period is written.
  const size_t n = ThreadTable::kEndedKeptLimit + 100;
  for (size_t i = 0; i < n; ++i) {
    Start(t, Env(7), "t" + std::to_string(i));
    t.on_thread_end(Env(7));
  }
  // The kept ones, and the last thread's entry in the table itself.
  EXPECT_EQ(t.alive_since_last_period().size(), ThreadTable::kEndedKeptLimit + 1);
}

TEST(ThreadReplay, NothingIsKeptWithoutPeriods) {
  ThreadTable t;  // no period= : begin_period is never called
  for (int i = 0; i < 10; ++i) {
    Start(t, Env(5), "t" + std::to_string(i));
    t.on_thread_end(Env(5));
  }
  EXPECT_EQ(t.alive_since_last_period().size(), 1u);  // the table's own entry, as before
}

}  // namespace
}  // namespace hprof::agent
