// SPDX-License-Identifier: Apache-2.0
// What a period= period reads: the CPU rows and allocation sites changed since the last period
// (not the whole tables) and the traces interned since the last write (not a walk over every
// trace), and after a reset or a reconnect everything again.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "allocation_sites.h"
#include "cost_table.h"
#include "period_report.h"
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

std::vector<uint32_t> Indexes(const std::vector<std::pair<uint32_t, Site>>& sites) {
  std::vector<uint32_t> out;
  for (const auto& s : sites) out.push_back(s.first);
  return out;
}

jobjectID Object(uintptr_t n) {
  return reinterpret_cast<jobjectID>(n * 8);
}

TEST(PeriodReads, ChangedSitesOnlyWithTheirCumulativeCounts) {
  AllocationSites t;
  const jobjectID cls = Object(1000);
  const uint32_t a = t.site_index({JVMPI_NORMAL_OBJECT, cls, 1});
  const uint32_t b = t.site_index({JVMPI_NORMAL_OBJECT, cls, 2});
  const uint32_t c = t.site_index({JVMPI_NORMAL_OBJECT, cls, 3});
  t.on_alloc_at(Object(1), a, 16);  // before periods began: changed once tracking starts
  t.track_changes();
  t.on_alloc_at(Object(2), b, 24);
  t.on_alloc_at(Object(3), b, 24);
  std::vector<std::pair<uint32_t, Site>> first = t.take_changed();
  EXPECT_EQ(Indexes(first), (std::vector<uint32_t>{a, b}));
  EXPECT_EQ(first[1].second.counts.alloc_bytes, 48u);
  // Nothing changed: nothing read, however many sites the table holds.
  EXPECT_TRUE(t.take_changed().empty());
  // A free changes its site's live counts only; an allocation another site's.
  t.on_free(Object(2));
  t.on_alloc_at(Object(4), c, 8);
  const std::vector<std::pair<uint32_t, Site>> second = t.take_changed();
  ASSERT_EQ(Indexes(second), (std::vector<uint32_t>{b, c}));
  EXPECT_EQ(second[0].second.counts.alloc_objects, 2u);  // cumulative
  EXPECT_EQ(second[0].second.counts.live_objects, 1u);
  // A reset changes the sites whose allocated counts it lowers (b: one object freed), no other.
  t.clear_counts();
  EXPECT_EQ(Indexes(t.take_changed()), (std::vector<uint32_t>{b}));
}

TEST(PeriodReads, ABlockOfChangedSitesEqualsOneOfTheWholeTable) {
  // The PERIOD block from the changed sites against every site reported so far is the block
  // from the whole table against the whole table of the last period.
  AllocationSites t;
  const jobjectID cls = Object(1000);
  std::vector<uint32_t> idx;
  for (unsigned trace = 1; trace <= 50; ++trace)
    idx.push_back(t.site_index({JVMPI_NORMAL_OBJECT, cls, trace}));
  for (uintptr_t i = 0; i < 500; ++i) t.on_alloc_at(Object(i + 1), idx[i % 50], 16);
  auto whole = [&t] {
    PeriodSnapshot s;
    const std::vector<Site> sites = t.sites();
    for (uint32_t i = 0; i < sites.size(); ++i) s.sites.emplace(i, sites[i]);
    return s;
  };
  PeriodSnapshot whole_before = whole();
  t.track_changes();
  PeriodSnapshot changed_before;
  for (auto& [i, site] : t.take_changed()) changed_before.sites.emplace(i, site);
  // A period in which three sites allocate and one loses objects.
  for (uintptr_t i = 0; i < 30; ++i) t.on_alloc_at(Object(1000 + i), idx[(i % 3) * 7], 32);
  t.on_free(Object(5));
  t.on_free(Object(55));
  PeriodSnapshot now_changed;
  for (auto& [i, site] : t.take_changed()) now_changed.sites.emplace(i, site);
  EXPECT_EQ(now_changed.sites.size(), 4u);
  const PeriodSections sections{false, false, true, false};
  auto name = [](const SiteKey&) { return std::string("C"); };
  const std::string from_changed =
      period_block(2, 0, 1, sections, changed_before, now_changed, name);
  const std::string from_whole = period_block(2, 0, 1, sections, whole_before, whole(), name);
  EXPECT_EQ(from_changed, from_whole);
  EXPECT_NE(from_whole.find("SITES: rows=4"), std::string::npos) << from_whole;
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
