// SPDX-License-Identifier: Apache-2.0
// AllocationSites records allocations in per-thread buffers merged off the hot path: the counts
// stay exact with many allocating threads, with threads that end before their buffer fills, and
// with frees of objects still in another thread's buffer.
#include "allocation_sites.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace hprof::agent {
namespace {

jobjectID id(uint64_t bits) {
  return reinterpret_cast<jobjectID>(static_cast<uintptr_t>(bits));
}

// IDs as the runtime hands them out: one counter shared by all threads, multiples of 8.
std::atomic<uint64_t> g_next_id{8};
jobjectID next_id() {
  return id(g_next_id.fetch_add(8));
}

TEST(AllocationSites, ManyThreadsCountEveryAllocation) {
  constexpr int kThreads = 32;
  constexpr uint64_t kPerThread = 20'011;  // not a multiple of the buffer size
  AllocationSites sites;
  const uint32_t site_a = sites.site_index({JVMPI_NORMAL_OBJECT, id(0x100), 7});
  const uint32_t site_b = sites.site_index({JVMPI_INT, nullptr, 9});
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (uint64_t i = 0; i < kPerThread; ++i) {
        sites.on_alloc_at(next_id(), (i + t) % 3 == 0 ? site_b : site_a, 24);
      }
    });
  }
  for (auto& t : threads) t.join();
  uint64_t b_objects = 0;
  for (int t = 0; t < kThreads; ++t) {
    for (uint64_t i = 0; i < kPerThread; ++i) b_objects += (i + t) % 3 == 0;
  }
  const SiteCounts totals = sites.totals();
  EXPECT_EQ(totals.alloc_objects, kThreads * kPerThread);
  EXPECT_EQ(totals.live_objects, kThreads * kPerThread);
  EXPECT_EQ(totals.alloc_bytes, kThreads * kPerThread * 24);
  const std::vector<Site> all = sites.sites();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[site_b].counts.alloc_objects, b_objects);
  EXPECT_EQ(all[site_a].counts.alloc_objects, kThreads * kPerThread - b_objects);
}

TEST(AllocationSites, FreesOfBufferedObjectsAreApplied) {
  AllocationSites sites;
  const uint32_t site = sites.site_index({JVMPI_NORMAL_OBJECT, id(0x100), 7});
  // One thread allocates a few objects (its buffer does not fill) and stays alive; another frees
  // them among enough other frees to apply a batch at once.
  std::vector<jobjectID> objects;
  std::atomic<bool> allocated{false}, done{false};
  std::thread allocator([&] {
    for (int i = 0; i < 10; ++i) {
      objects.push_back(next_id());
      sites.on_alloc_at(objects.back(), site, 16);
    }
    allocated = true;
    while (!done) std::this_thread::yield();
  });
  while (!allocated) std::this_thread::yield();
  std::thread freer([&] {
    for (int i = 0; i < 5; ++i) sites.on_free(objects[i]);
    for (int i = 0; i < 10'000; ++i) sites.on_free(id(3 + 8 * i));  // never allocated
  });
  freer.join();
  const SiteCounts totals = sites.totals();
  done = true;
  allocator.join();
  EXPECT_EQ(totals.alloc_objects, 10u);
  EXPECT_EQ(totals.live_objects, 5u);
  unsigned trace = 0;
  jint size = 0;
  EXPECT_FALSE(sites.object_info(objects[0], &trace, &size)) << "freed";
  ASSERT_TRUE(sites.object_info(objects[9], &trace, &size)) << "still buffered when asked";
  EXPECT_EQ(trace, 7u);
  EXPECT_EQ(size, 16);
}

TEST(AllocationSites, EndedThreadsBuffersAreMergedAndDropped) {
  AllocationSites sites;
  const uint32_t site = sites.site_index({JVMPI_NORMAL_OBJECT, id(0x100), 7});
  for (int round = 0; round < 200; ++round) {  // 200 short-lived threads, 3 allocations each
    std::thread([&] {
      for (int i = 0; i < 3; ++i) sites.on_alloc_at(next_id(), site, 16);
    }).join();
  }
  EXPECT_EQ(sites.totals().alloc_objects, 600u);
  EXPECT_EQ(sites.sites()[site].counts.live_objects, 600u);
}

// A thread that meets a second table (HPROF has one; tests make several) records there too.
TEST(AllocationSites, AThreadCanServeTwoTables) {
  AllocationSites first, second;
  const uint32_t a = first.site_index({JVMPI_NORMAL_OBJECT, id(0x100), 1});
  const uint32_t b = second.site_index({JVMPI_NORMAL_OBJECT, id(0x200), 2});
  for (int i = 0; i < 1000; ++i) {
    first.on_alloc_at(next_id(), a, 8);
    second.on_alloc_at(next_id(), b, 8);
  }
  EXPECT_EQ(first.totals().alloc_objects, 1000u);
  EXPECT_EQ(second.totals().alloc_objects, 1000u);
}

}  // namespace
}  // namespace hprof::agent
