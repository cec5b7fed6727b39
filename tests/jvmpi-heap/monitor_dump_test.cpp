// SPDX-License-Identifier: Apache-2.0
// MONITOR_DUMP of a known situation (MonitorProgram.java): two threads deadlocked on two Java
// monitors, a third waiting to be notified on another, and a JVMPI raw monitor held by one agent
// thread while another blocks entering it. Owners, entry counts, both waiter lists, traces and
// thread status words.
#include <gtest/gtest.h>
#include <jvmpi.h>

#include <cstdio>

#include "dump_parser.h"
#include "heap_test.h"

namespace jvmpiheap {
namespace {

std::string hex(Id v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

class MonitorDumpTest : public HeapTest {};

TEST_P(MonitorDumpTest, DeadlockWaiterAndRawMonitor) {
  const LaunchResult r = run_java("dump", "", "jvmpiheap.MonitorProgram");
  expect_clean_exit(r);
  const Facts facts(r.out);
  ASSERT_EQ(facts.num("deadlocked_threads"), 2) << "the program did not deadlock";
  ASSERT_NE(facts.get("raw_monitor"), "0x0") << "the raw monitor scenario did not start";
  ASSERT_EQ(facts.num("rc_monitor_dump"), JVMPI_SUCCESS);
  EXPECT_EQ(facts.num("raw_released"), 1);

  const AgentTables t = read_agent_tables(out_dir() + "/monitors.txt");
  std::vector<MonitorRecord> monitors;
  std::string error;
  ASSERT_TRUE(parse_monitor_dump(read_file(out_dir() + "/monitors.bin"), &monitors, &error))
      << error;

  const Id a = t.thread_env("deadlock-a"), b = t.thread_env("deadlock-b");
  const Id waiter = t.thread_env("notify-waiter");
  const Id raw_owner = t.thread_env("raw-owner"), raw_waiter = t.thread_env("raw-waiter");
  for (Id env : {a, b, waiter, raw_owner, raw_waiter}) ASSERT_NE(env, 0u) << "THREAD_START missing";

  auto java_monitor = [&](const std::string& fact) -> const MonitorRecord* {
    const Id object = parse_number(facts.get(fact));
    for (const auto& m : monitors) {
      if (m.kind == JVMPI_MONITOR_JAVA && m.object == object) return &m;
    }
    ADD_FAILURE() << "no JAVA monitor record for " << fact;
    return nullptr;
  };
  // Each deadlocked monitor: owned by one thread, the other waiting to enter.
  if (const MonitorRecord* m = java_monitor("id_lock_a")) {
    EXPECT_EQ(m->owner, a);
    EXPECT_EQ(m->entry_count, 1u);
    EXPECT_EQ(m->waiting_to_enter, std::vector<Id>{b});
    EXPECT_TRUE(m->waiting_to_be_notified.empty());
  }
  if (const MonitorRecord* m = java_monitor("id_lock_b")) {
    EXPECT_EQ(m->owner, b);
    EXPECT_EQ(m->entry_count, 1u);
    EXPECT_EQ(m->waiting_to_enter, std::vector<Id>{a});
    EXPECT_TRUE(m->waiting_to_be_notified.empty());
  }
  // The waited-on monitor: released by its waiter, which waits to be notified.
  if (const MonitorRecord* m = java_monitor("id_lock_c")) {
    EXPECT_EQ(m->owner, 0u);
    EXPECT_EQ(m->entry_count, 0u);
    EXPECT_TRUE(m->waiting_to_enter.empty());
    EXPECT_EQ(m->waiting_to_be_notified, std::vector<Id>{waiter});
  }
  // The raw monitor: named, with its ID, owned by raw-owner, raw-waiter waiting to enter.
  const MonitorRecord* raw = nullptr;
  for (const auto& m : monitors) {
    if (m.kind == JVMPI_MONITOR_RAW && m.raw_id == parse_number(facts.get("raw_monitor"))) raw = &m;
  }
  ASSERT_NE(raw, nullptr) << "no RAW record for the agent's raw monitor";
  auto name = t.values.find("rawname_" + hex(raw->name_ptr));
  ASSERT_NE(name, t.values.end());
  EXPECT_EQ(name->second, "heaptest-raw");
  EXPECT_EQ(raw->owner, raw_owner);
  EXPECT_EQ(raw->entry_count, 1u);
  EXPECT_EQ(raw->waiting_to_enter, std::vector<Id>{raw_waiter});
  EXPECT_TRUE(raw->waiting_to_be_notified.empty());

  // Traces and status words for the threads involved.
  auto status = [&](Id env) {
    auto it = t.values.find("status_of_" + hex(env));
    EXPECT_NE(it, t.values.end()) << "no status word for thread " << hex(env);
    return it == t.values.end() ? -1 : std::stoi(it->second);
  };
  const int flags = JVMPI_THREAD_SUSPENDED | JVMPI_THREAD_INTERRUPTED;
  EXPECT_EQ(status(a) & ~flags, JVMPI_THREAD_MONITOR_WAIT) << "deadlock-a";
  EXPECT_EQ(status(b) & ~flags, JVMPI_THREAD_MONITOR_WAIT) << "deadlock-b";
  EXPECT_EQ(status(waiter) & ~flags, JVMPI_THREAD_CONDVAR_WAIT) << "notify-waiter";
  EXPECT_EQ(status(raw_waiter) & ~flags, JVMPI_THREAD_MONITOR_WAIT) << "raw-waiter";
  for (Id env : {a, b}) {
    auto tr = t.traces.find(env);
    ASSERT_NE(tr, t.traces.end()) << "no trace for " << hex(env);
    bool in_lock = false;
    for (const auto& f : tr->second) in_lock |= f.name == "jvmpiheap.MonitorProgram.lockInOrder";
    EXPECT_TRUE(in_lock) << "the deadlocked thread's trace lacks lockInOrder";
  }
  auto tr = t.traces.find(waiter);
  ASSERT_NE(tr, t.traces.end());
  bool in_wait = false;
  for (const auto& f : tr->second) in_wait |= f.name == "jvmpiheap.MonitorProgram.waitForNotify";
  EXPECT_TRUE(in_wait);
}

INSTANTIATE_TEST_SUITE_P(Jdks, MonitorDumpTest, testing::ValuesIn(all_jdks()), jdk_param_name);

}  // namespace
}  // namespace jvmpiheap
