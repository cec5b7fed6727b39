// SPDX-License-Identifier: Apache-2.0
// ObjectTable (src/hprof/object_table.*: a window of young IDs indexed directly, the rest in
// ObjectHashTable) and ObjectHashTable on its own, against std::unordered_map: every put, find and
// remove must agree, through growth, deletions inside probe runs that wrap around the end, the
// window moving on, chunks retired with their survivors, and IDs that jump far ahead.
#include "object_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace hprof::agent {
namespace {

jobjectID id(uint64_t n) {
  return reinterpret_cast<jobjectID>(static_cast<uintptr_t>(n));
}

template <typename Table>
void expect_same(const Table& table, const std::unordered_map<uint64_t, TrackedObject>& ref,
                 uint64_t max_key) {
  ASSERT_EQ(table.size(), ref.size());
  for (uint64_t k = 8; k <= max_key; k += 8) {
    const TrackedObject* found = table.find(id(k));
    auto it = ref.find(k);
    if (it == ref.end()) {
      EXPECT_EQ(found, nullptr) << "key " << k;
    } else {
      ASSERT_NE(found, nullptr) << "key " << k;
      EXPECT_EQ(found->site, it->second.site);
      EXPECT_EQ(found->size, it->second.size);
    }
  }
}

template <typename Table>
class BothTables : public ::testing::Test {};
using TableTypes = ::testing::Types<ObjectTable, ObjectHashTable>;
TYPED_TEST_SUITE(BothTables, TableTypes);

TYPED_TEST(BothTables, AgreesWithAMapUnderRandomPutsAndRemoves) {
  TypeParam table;
  std::unordered_map<uint64_t, TrackedObject> ref;
  std::mt19937_64 rng(12345);
  constexpr uint64_t kKeys = 6000;  // IDs are multiples of 8, like the runtime's tags
  for (int step = 0; step < 200000; ++step) {
    const uint64_t k = 8 * (1 + rng() % kKeys);
    if (rng() % 3 == 0) {
      TrackedObject removed;
      const bool was = table.remove(id(k), &removed);
      auto it = ref.find(k);
      ASSERT_EQ(was, it != ref.end()) << "step " << step;
      if (was) {
        EXPECT_EQ(removed.site, it->second.site);
        ref.erase(it);
      }
    } else {
      const TrackedObject v{static_cast<uint32_t>(rng()), static_cast<jint>(rng() % 1000)};
      table.put(id(k), v);
      ref[k] = v;
    }
    if (step % 20000 == 0) expect_same(table, ref, 8 * kKeys);
  }
  expect_same(table, ref, 8 * kKeys);
}

TYPED_TEST(BothTables, RemovingEverythingLeavesItEmptyAndUsable) {
  TypeParam table;
  for (uint64_t k = 8; k <= 8 * 5000; k += 8) table.put(id(k), {static_cast<uint32_t>(k), 1});
  EXPECT_EQ(table.size(), 5000u);
  for (uint64_t k = 8; k <= 8 * 5000; k += 8) EXPECT_TRUE(table.remove(id(k), nullptr));
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.find(id(8)), nullptr);
  EXPECT_FALSE(table.remove(id(8), nullptr));
  table.put(id(16), {7, 9});
  ASSERT_NE(table.find(id(16)), nullptr);
  EXPECT_EQ(table.find(id(16))->size, 9);
}

TYPED_TEST(BothTables, NullIdIsNeverStored) {
  TypeParam table;
  table.put(nullptr, {1, 1});
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.find(nullptr), nullptr);
}

// Allocation as the runtime does it: IDs rise (a little out of order, as threads race between
// taking an ID and reporting it), and frees come in bursts after "collections", which kill most
// young objects and few old ones. The window must move on, retire chunks with their survivors
// into the hash table, and still agree with the map on every object.
TEST(ObjectTable, AgreesWithAMapWhileTheWindowMovesOn) {
  ObjectTable table;
  std::unordered_map<uint64_t, TrackedObject> ref;
  std::vector<uint64_t> live;
  std::unordered_set<uint64_t> old_ids;
  std::mt19937_64 rng(777);
  uint64_t next = 8;
  size_t most_chunks = 0;
  for (int cycle = 0; cycle < 40; ++cycle) {
    // About 3 chunks' worth of allocations between collections, in batches of 4 shuffled IDs.
    for (int i = 0; i < 12000; ++i) {
      uint64_t batch[4] = {next, next + 8, next + 16, next + 24};
      next += 32;
      std::shuffle(batch, batch + 4, rng);
      for (uint64_t k : batch) {
        const TrackedObject v{static_cast<uint32_t>(rng()), static_cast<jint>(rng() % 4096)};
        table.put(id(k), v);
        ref[k] = v;
        live.push_back(k);
      }
    }
    // The collection: 95% of the young die, 2% of the old (those that survived one before).
    std::vector<uint64_t> survivors;
    for (uint64_t k : live) {
      const bool dies = old_ids.count(k) != 0 ? rng() % 50 == 0 : rng() % 20 != 0;
      if (dies) {
        TrackedObject removed;
        ASSERT_TRUE(table.remove(id(k), &removed)) << "key " << k;
        EXPECT_EQ(removed.site, ref[k].site);
        EXPECT_EQ(removed.size, ref[k].size);
        ref.erase(k);
        old_ids.erase(k);
      } else {
        survivors.push_back(k);
        old_ids.insert(k);
      }
    }
    live.swap(survivors);
    ASSERT_EQ(table.size(), ref.size());
    most_chunks = std::max(most_chunks, table.young_chunks());
  }
  // Objects that outlived the window went to the hash table; the window stayed small.
  EXPECT_GT(table.old_size(), 0u);
  EXPECT_GT(table.young_size(), 0u);
  EXPECT_LE(most_chunks, ObjectTable::kMinChunks + 8);
  for (const auto& [k, v] : ref) {
    const TrackedObject* found = table.find(id(k));
    ASSERT_NE(found, nullptr) << "key " << k;
    EXPECT_EQ(found->site, v.site);
    EXPECT_EQ(found->size, v.size);
  }
  // Freed IDs, never-used IDs in the window, and IDs beyond it are not found.
  EXPECT_EQ(table.find(id(next)), nullptr);
  EXPECT_EQ(table.find(id(next + 8 * ObjectTable::kChunkSlots * 3)), nullptr);
  EXPECT_FALSE(table.remove(id(next), nullptr));
  for (uint64_t k = 8; k < next; k += 8 * 97) {
    EXPECT_EQ(table.find(id(k)) != nullptr, ref.count(k) != 0) << "key " << k;
  }
}

// Nothing is freed: the window keeps every object (each one counts as live), so its size follows
// the live objects, and lookups still work after it grew to many chunks.
TEST(ObjectTable, KeepsEveryLiveObjectWhenNothingDies) {
  ObjectTable table;
  constexpr uint64_t kObjects = 20 * ObjectTable::kChunkSlots;
  for (uint64_t n = 1; n <= kObjects; ++n) table.put(id(8 * n), {static_cast<uint32_t>(n), 16});
  EXPECT_EQ(table.size(), kObjects);
  EXPECT_GE(table.young_chunks(), 20u);
  for (uint64_t n = 1; n <= kObjects; n += 101) {
    const TrackedObject* found = table.find(id(8 * n));
    ASSERT_NE(found, nullptr) << n;
    EXPECT_EQ(found->site, n);
  }
}

// Once the window's objects died, its chunks are recycled: a long run of short-lived objects
// needs no more than a chunk or two, and nothing reaches the hash table.
TEST(ObjectTable, ShortLivedObjectsNeverReachTheHashTable) {
  ObjectTable table;
  uint64_t next = 8;
  for (int round = 0; round < 100; ++round) {
    std::vector<uint64_t> ids;
    for (int i = 0; i < 5000; ++i, next += 8) {
      table.put(id(next), {1, 24});
      ids.push_back(next);
    }
    for (uint64_t k : ids) ASSERT_TRUE(table.remove(id(k), nullptr));
  }
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.old_size(), 0u);
  EXPECT_LE(table.young_chunks(), 2u);
}

// An ID far ahead of the window (a heap dump tagged millions of objects in between) moves what the
// window held to the hash table; IDs that are not multiples of 8 always live there. All are found.
TEST(ObjectTable, FarJumpsAndOddIdsStayFindable) {
  ObjectTable table;
  for (uint64_t n = 1; n <= 1000; ++n) table.put(id(8 * n), {static_cast<uint32_t>(n), 8});
  const uint64_t far = 8 * ObjectTable::kChunkSlots * (ObjectTable::kMaxJumpChunks + 50);
  table.put(id(far), {4242, 32});
  table.put(id(12), {12, 12});
  table.put(id(far + 3), {3, 3});
  EXPECT_EQ(table.size(), 1003u);
  EXPECT_EQ(table.old_size(), 1002u);  // the 1000 from the window and two odd IDs
  for (uint64_t n = 1; n <= 1000; ++n) {
    const TrackedObject* found = table.find(id(8 * n));
    ASSERT_NE(found, nullptr) << n;
    EXPECT_EQ(found->site, n);
  }
  ASSERT_NE(table.find(id(far)), nullptr);
  EXPECT_EQ(table.find(id(far))->site, 4242u);
  ASSERT_NE(table.find(id(12)), nullptr);
  EXPECT_EQ(table.find(id(12))->site, 12u);
  ASSERT_NE(table.find(id(far + 3)), nullptr);
  // An ID before the window that was never put, and one later put there (an object tagged long
  // ago and reported now), go to the hash table.
  EXPECT_EQ(table.find(id(8 * 5000)), nullptr);
  table.put(id(8 * 5000), {5000, 1});
  ASSERT_NE(table.find(id(8 * 5000)), nullptr);
  TrackedObject removed;
  EXPECT_TRUE(table.remove(id(8 * 5000), &removed));
  EXPECT_EQ(removed.site, 5000u);
  EXPECT_TRUE(table.remove(id(8), &removed));
  EXPECT_EQ(removed.site, 1u);
  EXPECT_EQ(table.size(), 1002u);
}

}  // namespace
}  // namespace hprof::agent
