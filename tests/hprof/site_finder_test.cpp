// SPDX-License-Identifier: Apache-2.0
// SiteFinder (src/hprof/allocation_site_memo.*) against the plain way (intern the trace, look the
// site up): the same sites for the same stacks, through the per-thread memo and the shared table,
// and with bytecode indexes (GetCallTraceLocations) turned into lines only for new stacks: indexes
// on one line share a site, the traces carry lines, and lines are asked for rarely.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "allocation_site_memo.h"

namespace hprof::agent {
namespace {

jmethodID method(uintptr_t n) {
  return reinterpret_cast<jmethodID>(n * 16);
}
jobjectID klass(uintptr_t n) {
  return reinterpret_cast<jobjectID>(n * 8);
}

// A known line table: in every method, bytecode index b is on line 100 + b / 10.
int g_line_calls = 0;
jint JNICALL line_of(jmethodID, jint location) {
  ++g_line_calls;
  return location < 0 ? -3 : 100 + location / 10;
}

// One of 400 stacks (a program has a bounded number of allocation sites), to `depth` frames.
std::vector<JVMPI_CallFrame> random_stack(std::mt19937& rng, int depth, bool locations) {
  std::mt19937 pick(static_cast<unsigned>(rng() % 400));
  std::vector<JVMPI_CallFrame> frames(static_cast<size_t>(depth));
  for (auto& f : frames) {
    f.method_id = method(1 + pick() % 5);
    const jint bci = static_cast<jint>(pick() % 40);
    f.lineno = locations ? bci : 100 + bci / 10;
  }
  return frames;
}

TEST(SiteFinder, SameSitesAsInterningAndLookingUp) {
  AllocationSites sites, plain_sites;
  TraceTable traces, plain_traces;
  SiteFinder finder;
  std::mt19937 rng(5);
  for (int i = 0; i < 50000; ++i) {
    const int depth = static_cast<int>(rng() % 7);  // 5 and 6 skip the finder's caches
    const auto frames = random_stack(rng, depth, false);
    const jobjectID c = klass(1 + rng() % 3);
    const jint type = rng() % 4 == 0 ? JVMPI_CLASS : JVMPI_NORMAL_OBJECT;
    const uint32_t got = finder.find(sites, traces, frames.data(), depth, 0, type, c);
    const uint32_t want =
        plain_sites.site_index({type, c, plain_traces.intern(frames.data(), depth, 0)});
    ASSERT_EQ(got, want) << "allocation " << i;
  }
  EXPECT_EQ(traces.size(), plain_traces.size());
}

// Keys store locations in 16 bits (biased by 3): lines beyond that, or codes below -3, take the
// uncached path, and must still get the site the cached path would give.
TEST(SiteFinder, LocationsOutsideTheKeyRangeGetTheSameSites) {
  AllocationSites sites, plain_sites;
  TraceTable traces, plain_traces;
  SiteFinder finder;
  std::mt19937 rng(13);
  const jint odd[] = {-4, -3, -1, 0, 65532, 65533, 70000, 1 << 20};
  for (int i = 0; i < 20000; ++i) {
    const int depth = 1 + static_cast<int>(rng() % 4);
    auto frames = random_stack(rng, depth, false);
    frames[rng() % static_cast<unsigned>(depth)].lineno = odd[rng() % 8];
    const jobjectID c = klass(1 + rng() % 2);
    const uint32_t got =
        finder.find(sites, traces, frames.data(), depth, 0, JVMPI_NORMAL_OBJECT, c);
    const uint32_t want = plain_sites.site_index(
        {JVMPI_NORMAL_OBJECT, c, plain_traces.intern(frames.data(), depth, 0)});
    ASSERT_EQ(got, want) << "allocation " << i;
  }
  EXPECT_EQ(sites.sites().size(), plain_sites.sites().size());
}

TEST(SiteFinder, BytecodeIndexesOnOneLineShareASiteAndTracesHaveLines) {
  AllocationSites sites, plain_sites;
  TraceTable traces, plain_traces;
  SiteFinder finder;
  std::mt19937 rng(9);
  g_line_calls = 0;
  constexpr int kAllocations = 50000;
  for (int i = 0; i < kAllocations; ++i) {
    const int depth = 1 + static_cast<int>(rng() % 4);
    auto located = random_stack(rng, depth, true);
    if (rng() % 10 == 0) located[0].lineno = -1;  // a native frame
    std::vector<JVMPI_CallFrame> lined = located;
    for (auto& f : lined) f.lineno = f.lineno < 0 ? -3 : 100 + f.lineno / 10;
    const jobjectID c = klass(1 + rng() % 2);
    const uint32_t got =
        finder.find(sites, traces, located.data(), depth, 0, JVMPI_NORMAL_OBJECT, c, line_of);
    const uint32_t want = plain_sites.site_index(
        {JVMPI_NORMAL_OBJECT, c, plain_traces.intern(lined.data(), depth, 0)});
    ASSERT_EQ(got, want) << "allocation " << i;
  }
  // Same traces, with lines, in the same order.
  ASSERT_EQ(traces.size(), plain_traces.size());
  const auto a = traces.take_unwritten();
  const auto b = plain_traces.take_unwritten();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].serial, b[i].serial);
    EXPECT_EQ(a[i].frames, b[i].frames) << "trace " << a[i].serial;
  }
  // Lines were looked up for new stacks only, not for every frame of every allocation.
  EXPECT_LT(g_line_calls, kAllocations / 2);
}

TEST(SiteFinder, ThreadsAgreeOnEverySite) {
  AllocationSites sites;
  TraceTable traces;
  SiteFinder finder;
  constexpr int kThreads = 4;
  std::vector<std::vector<uint32_t>> answers(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(77);  // every thread walks the same stacks
      for (int i = 0; i < 20000; ++i) {
        const auto frames = random_stack(rng, 3, false);
        answers[t].push_back(
            finder.find(sites, traces, frames.data(), 3, 0, JVMPI_NORMAL_OBJECT, klass(1)));
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(answers[t], answers[0]);
  // One site per distinct stack, as one thread alone would have made them.
  AllocationSites plain_sites;
  TraceTable plain_traces;
  std::mt19937 rng(77);
  for (int i = 0; i < 20000; ++i) {
    const auto frames = random_stack(rng, 3, false);
    plain_sites.site_index(
        {JVMPI_NORMAL_OBJECT, klass(1), plain_traces.intern(frames.data(), 3, 0)});
  }
  EXPECT_EQ(sites.sites().size(), plain_sites.sites().size());
}

// Known sites are read without a lock while other threads add sites and grow the shared table
// (1024 slots, doubled at half full): 6000 distinct (stack, class) keys make it grow three times
// while every thread is reading, and misses the per-thread memo most of the time.
TEST(SiteFinder, ThreadsAgreeWhileTheTableGrows) {
  AllocationSites sites;
  TraceTable traces;
  SiteFinder finder;
  constexpr int kThreads = 4;
  constexpr int kKeys = 6000;
  constexpr int kAllocations = 60000;
  // Key i: 400 distinct stacks times 15 classes.
  auto key_of = [](int i, std::vector<JVMPI_CallFrame>* frames) {
    frames->assign(3, JVMPI_CallFrame{});
    (*frames)[0] = {100 + i % 400, method(1)};
    (*frames)[1] = {7, method(2 + static_cast<uintptr_t>(i % 400) % 3)};
    (*frames)[2] = {9, method(5)};
    return klass(1 + static_cast<uintptr_t>(i / 400));
  };
  std::vector<std::vector<uint32_t>> answers(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 order(static_cast<unsigned>(t));  // each thread its own order of keys
      std::vector<uint32_t> by_key(kKeys, UINT32_MAX);
      std::vector<JVMPI_CallFrame> frames;
      for (int i = 0; i < kAllocations; ++i) {
        const int k = static_cast<int>(order() % kKeys);
        const jobjectID c = key_of(k, &frames);
        const uint32_t site =
            finder.find(sites, traces, frames.data(), 3, 0, JVMPI_NORMAL_OBJECT, c);
        if (by_key[k] == UINT32_MAX) by_key[k] = site;
        ASSERT_EQ(site, by_key[k]) << "thread " << t << " key " << k;  // stable once found
      }
      answers[t] = by_key;
    });
  }
  for (auto& th : threads) th.join();
  // A key seen by two threads has one site; distinct keys have distinct sites.
  std::vector<uint32_t> site_of(kKeys, UINT32_MAX);
  for (int t = 0; t < kThreads; ++t) {
    for (int k = 0; k < kKeys; ++k) {
      if (answers[t][k] == UINT32_MAX) continue;
      if (site_of[k] == UINT32_MAX) site_of[k] = answers[t][k];
      EXPECT_EQ(answers[t][k], site_of[k]) << "key " << k;
    }
  }
  std::vector<uint32_t> seen;
  for (uint32_t s : site_of) {
    if (s != UINT32_MAX) seen.push_back(s);
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(std::adjacent_find(seen.begin(), seen.end()), seen.end());
  EXPECT_EQ(sites.sites().size(), seen.size());
  // The same keys looked up again, on this thread, without adding any.
  std::vector<JVMPI_CallFrame> frames;
  for (int k = 0; k < kKeys; ++k) {
    if (site_of[k] == UINT32_MAX) continue;
    const jobjectID c = key_of(k, &frames);
    ASSERT_EQ(finder.find(sites, traces, frames.data(), 3, 0, JVMPI_NORMAL_OBJECT, c), site_of[k]);
  }
  EXPECT_EQ(sites.sites().size(), seen.size());
}

}  // namespace
}  // namespace hprof::agent
