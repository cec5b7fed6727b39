// SPDX-License-Identifier: Apache-2.0
// What a period= period reads: the CPU rows changed since the last period (not the whole table)
// and the traces interned since the last write (not a walk over every trace), and after a reset
// or a reconnect everything again.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "cost_table.h"
#include "tables.h"

namespace hprof::agent {
namespace {

std::vector<unsigned> Traces(std::vector<Cost> costs) {
  std::vector<unsigned> out;
  for (const Cost& c : costs) out.push_back(c.trace);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(PeriodReads, ChangedCostsOnlyWithTheirCumulativeCounts) {
  CostTable t;
  t.add(1, 5, 0);  // before periods began: counts as changed once tracking starts
  t.track_changes();
  t.add(2, 1, 0);
  t.add(2, 1, 0);
  uint64_t clears = 0;
  std::vector<Cost> first = t.take_changed(clears);
  EXPECT_EQ(Traces(first), (std::vector<unsigned>{1, 2}));
  EXPECT_EQ(clears, 0u);
  // Nothing changed: nothing read.
  EXPECT_TRUE(t.take_changed(clears).empty());
  t.add(1, 3, 0);
  const std::vector<Cost> second = t.take_changed(clears);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].trace, 1u);
  EXPECT_EQ(second[0].count, 8u);  // cumulative: the period takes the growth itself
  // A reset is counted, and rows added after it are changed rows again.
  t.clear();
  t.add(1, 2, 0);
  const std::vector<Cost> third = t.take_changed(clears);
  EXPECT_EQ(clears, 1u);
  ASSERT_EQ(third.size(), 1u);
  EXPECT_EQ(third[0].count, 2u);
  EXPECT_EQ(t.sorted_by_count().size(), 1u);
}

TEST(PeriodReads, UntrackedTableListsNothing) {
  CostTable t;  // no period=: the sampler's adds record nothing extra
  t.add(1, 1, 0);
  uint64_t clears = 0;
  EXPECT_TRUE(t.take_changed(clears).empty());
  EXPECT_EQ(t.total_count(), 1u);
}

unsigned Intern(TraceTable& t, int method) {
  JVMPI_CallFrame f{};
  f.method_id = reinterpret_cast<jmethodID>(static_cast<uintptr_t>(method) * 16);
  f.lineno = 1;
  return t.intern(&f, 1, 0);
}

TEST(PeriodReads, UnwrittenTracesAreTheNewOnesUntilAllAreMarkedAgain) {
  TraceTable t;
  const unsigned a = Intern(t, 1);
  std::vector<TraceInfo> first = t.take_unwritten();  // the empty trace and a
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first.back().serial, a);
  EXPECT_TRUE(t.take_unwritten().empty());
  const unsigned b = Intern(t, 2);
  EXPECT_EQ(Intern(t, 1), a);  // known: nothing new
  const std::vector<TraceInfo> second = t.take_unwritten();
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].serial, b);
  // A reconnected stream: every trace again, in serial order.
  t.mark_all_unwritten();
  const std::vector<TraceInfo> all = t.take_unwritten();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[1].serial, a);
  EXPECT_EQ(all[2].serial, b);
}

}  // namespace
}  // namespace hprof::agent
