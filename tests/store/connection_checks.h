// SPDX-License-Identifier: Apache-2.0
// The connection history checks both backends' tests run (store_test.cpp on SQLite,
// postgres_test.cpp on PostgreSQL): connections recorded at their beginning and at their end,
// read back after the store is reopened (a restarted collector), and deleted by retention.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "store.h"

namespace connection_checks {

constexpr int64_t kHourMs = 3'600'000;
constexpr int64_t kDayMs = 24 * kHourMs;

inline store::JvmIdentity checkout_jvm(int64_t now) {
  return {"web-1", 4711, "demo.App", "17.0.15", now - 3 * kDayMs, {{"service", "checkout"}}};
}

inline store::Connection begun(const store::JvmIdentity& jvm, int64_t number,
                               const std::string& collector, int64_t at) {
  store::Connection c;
  c.jvm = jvm;
  c.connection = number;
  c.collector = collector;
  c.connected_ms = at;
  return c;
}

inline store::Connection ended(store::Connection c, int64_t at, const std::string& cause,
                               uint64_t dropped_events, uint64_t periods) {
  c.ended_ms = at;
  c.end_cause = cause;
  c.dropped_events = dropped_events;
  c.dropped_bytes = dropped_events * 100;
  c.bytes = periods * 1000 + 77;
  c.periods = periods;
  return c;
}

// `open` opens the same store again (as a restarted collector does); `rows(table)` counts a
// table's rows directly in the database.
inline void check_connection_history(
    const std::function<std::unique_ptr<store::ProfileStore>()>& open,
    const std::function<int64_t(const std::string&)>& rows, int64_t now) {
  const store::JvmIdentity jvm = checkout_jvm(now);
  store::JvmIdentity other = jvm;
  other.pid = 4712;
  const auto first = begun(jvm, 1, "web-9 pid 10", now - 2 * kDayMs);
  const auto second = begun(jvm, 2, "web-9 pid 10", now - kHourMs);
  const auto third = begun(jvm, 3, "web-9 pid 11", now - 10 * 60'000);
  {
    auto s = open();
    ASSERT_TRUE(s->record_connection(first));
    ASSERT_TRUE(s->record_connection(ended(first, now - 2 * kDayMs + 5000, "reset", 3, 4)));
    // Its beginning again (a record that came late) leaves its end as it was.
    ASSERT_TRUE(s->record_connection(first));
    // The second one's collector stops before it ends: no end is ever written.
    ASSERT_TRUE(s->record_connection(second));
    ASSERT_TRUE(s->record_connection(third));
    ASSERT_TRUE(s->record_connection(ended(third, now - 60'000, "agent exited", 9, 50)));
    // An end whose beginning was never written is added whole.
    ASSERT_TRUE(s->record_connection(
        ended(begun(jvm, 4, "web-9 pid 11", now - 30'000), now - 20'000, "closed by agent", 9, 1)));
    ASSERT_TRUE(s->record_connection(begun(other, 1, "web-9 pid 11", now - 1000)));
    s->flush();
    EXPECT_EQ(s->stats().connections_failed, 0u) << s->stats().last_error;
  }

  // A store opened again (a restarted collector) reads them back, each JVM's in order.
  auto s = open();
  const auto got = s->connections({jvm}, 100);
  ASSERT_EQ(got.size(), 4u);
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].connection, static_cast<int64_t>(i + 1));
    EXPECT_EQ(got[i].jvm.host, "web-1");
    EXPECT_EQ(got[i].jvm.pid, 4711);
  }
  EXPECT_EQ(got[0].collector, "web-9 pid 10");
  EXPECT_EQ(got[0].connected_ms, now - 2 * kDayMs);
  EXPECT_EQ(got[0].ended_ms, now - 2 * kDayMs + 5000);
  EXPECT_EQ(got[0].end_cause, "reset");
  EXPECT_EQ(got[0].dropped_events, 3u);
  EXPECT_EQ(got[0].dropped_bytes, 300u);
  EXPECT_EQ(got[0].periods, 4u);
  EXPECT_EQ(got[0].bytes, 4077u);
  EXPECT_EQ(got[1].connected_ms, now - kHourMs);
  EXPECT_EQ(got[1].ended_ms, 0);  // no end recorded
  EXPECT_EQ(got[1].end_cause, "");
  EXPECT_EQ(got[2].collector, "web-9 pid 11");
  EXPECT_EQ(got[2].end_cause, "agent exited");
  EXPECT_EQ(got[2].periods, 50u);
  EXPECT_EQ(got[3].end_cause, "closed by agent");
  EXPECT_EQ(got[3].ended_ms, now - 20'000);

  // At most the newest N per JVM, still in order; two JVMs in one call.
  const auto newest = s->connections({jvm}, 2);
  ASSERT_EQ(newest.size(), 2u);
  EXPECT_EQ(newest[0].connection, 3);
  EXPECT_EQ(newest[1].connection, 4);
  const auto both = s->connections({other, jvm}, 100);
  ASSERT_EQ(both.size(), 5u);
  EXPECT_EQ(both[0].jvm.pid, 4712);
  EXPECT_EQ(both[1].jvm.pid, 4711);
  store::JvmIdentity unknown = jvm;
  unknown.start_ms += 1;
  EXPECT_TRUE(s->connections({unknown}, 100).empty());

  // Retention: connections that ended before the cut go, and one without an end by its
  // beginning; the JVM rows go with the last of their connections (they have no periods).
  store::RetentionPolicy policy;
  policy.retention_ms = kDayMs;
  EXPECT_EQ(s->maintain(policy, now).connections_deleted, 1u);
  const auto kept = s->connections({jvm}, 100);
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept[0].connection, 2);
  EXPECT_EQ(rows("jvms"), 2);
  EXPECT_EQ(s->maintain(policy, now + 2 * kDayMs).connections_deleted, 4u);
  EXPECT_TRUE(s->connections({jvm, other}, 100).empty());
  EXPECT_EQ(rows("connections"), 0);
  EXPECT_EQ(rows("jvms"), 0);
  EXPECT_EQ(rows("labels"), 0);
}

}  // namespace connection_checks
