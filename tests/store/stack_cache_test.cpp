// SPDX-License-Identifier: Apache-2.0
// The writer's intern table of known stacks: a stack seen before is found without asking the
// database, a different stack (even one with the same frames cut at other places) never is, and
// the table stays bounded.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "sample_codec.h"
#include "stack_codec.h"

namespace {

using Frames = std::vector<std::string>;

TEST(StackIdCache, KnownStacksAreFoundWithoutResolvingAgain) {
  store::StackIdCache cache;
  int resolved = 0;
  int64_t next_id = 1;
  auto resolve = [&](const Frames&) {
    ++resolved;
    return next_id++;
  };
  const Frames a = {"java.lang.Thread.run", "com.example.Server.handle", "com.example.Db.query"};
  const Frames b = {"java.lang.Thread.run", "com.example.Server.handle", "com.example.Db.commit"};
  EXPECT_EQ(cache.get(a, resolve), 1);
  EXPECT_EQ(cache.get(b, resolve), 2);
  // Copies (other string objects with the same names) are the same stacks.
  const Frames a_copy(a.begin(), a.end()), b_copy(b.begin(), b.end());
  EXPECT_EQ(cache.get(a_copy, resolve), 1);
  EXPECT_EQ(cache.get(b_copy, resolve), 2);
  EXPECT_EQ(resolved, 2);
  cache.clear();
  EXPECT_EQ(cache.get(a, resolve), 3);
  EXPECT_EQ(resolved, 3);
}

TEST(StackIdCache, FrameBoundariesAndOrderMakeDifferentStacks) {
  store::StackIdCache cache;
  int64_t next_id = 1;
  auto resolve = [&](const Frames&) { return next_id++; };
  // The same characters cut at other places, in another order, a prefix, an empty frame.
  const std::vector<Frames> stacks = {
      {"ab", "c"},
      {"a", "bc"},
      {"abc"},
      {"c", "ab"},
      {"ab"},
      {"ab", "c", ""},
      {"", "ab", "c"},
      // Names of every length around the hash's 4, 8 and 16 byte steps, differing in one byte.
      {"0123456789abcdefX"},
      {"0123456789abcdefY"},
      {"0123456789abcdeX"},
      {"0123456789abcdeY"},
      {"01234567X"},
      {"01234567Y"},
      {"0123X"},
      {"0123Y"},
      {"0X"},
      {"0Y"},
      {"X"},
      {"Y"}};
  std::set<int64_t> ids;
  for (const Frames& f : stacks) ids.insert(cache.get(f, resolve));
  EXPECT_EQ(ids.size(), stacks.size());
  for (const Frames& f : stacks) ids.insert(cache.get(f, resolve));
  EXPECT_EQ(ids.size(), stacks.size());  // each found again, none resolved twice
  EXPECT_EQ(next_id, static_cast<int64_t>(stacks.size()) + 1);
}

TEST(StackIdCache, StaysBoundedUnderEverNewStacks) {
  store::StackIdCache cache;
  int64_t next_id = 1;
  auto resolve = [&](const Frames&) { return next_id++; };
  size_t largest = 0;
  for (int i = 0; i < 200'000; ++i) {
    cache.get({"java.lang.Thread.run", "com.example.Gen.m" + std::to_string(i)}, resolve);
    largest = std::max(largest, cache.size());
  }
  EXPECT_LE(largest, size_t{65536});
  EXPECT_EQ(next_id, 200'001);
  // After the table was emptied, a recent stack is still found by its (new) entry.
  const int64_t before = next_id;
  cache.get({"java.lang.Thread.run", "com.example.Gen.m199999"}, resolve);
  EXPECT_EQ(next_id, before);
}

TEST(SumByStack, SortsAndAddsWeightsOfTheSameStack) {
  std::vector<store::StackWeight> s = {{5, 1}, {2, 3}, {5, 4}, {9, 1}, {2, 2}, {1, 7}};
  store::sum_by_stack(s);
  const std::vector<store::StackWeight> want = {{1, 7}, {2, 5}, {5, 5}, {9, 1}};
  EXPECT_EQ(s, want);
  std::vector<store::StackWeight> empty;
  store::sum_by_stack(empty);
  EXPECT_TRUE(empty.empty());
}

}  // namespace
