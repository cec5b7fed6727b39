// ObjectTable (src/hprof/object_table.*) against std::unordered_map: every put, find and remove
// must agree, through growth and through deletions inside probe runs that wrap around the end.
#include "object_table.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

namespace hprof::agent {
namespace {

jobjectID id(uint64_t n) {
  return reinterpret_cast<jobjectID>(static_cast<uintptr_t>(n));
}

void expect_same(const ObjectTable& table, const std::unordered_map<uint64_t, TrackedObject>& ref,
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

TEST(ObjectTable, AgreesWithAMapUnderRandomPutsAndRemoves) {
  ObjectTable table;
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

TEST(ObjectTable, RemovingEverythingLeavesItEmptyAndUsable) {
  ObjectTable table;
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

TEST(ObjectTable, NullIdIsNeverStored) {
  ObjectTable table;
  table.put(nullptr, {1, 1});
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.find(nullptr), nullptr);
}

}  // namespace
}  // namespace hprof::agent
