// SPDX-License-Identifier: Apache-2.0
// The samples blob of the store's schema 3: what goes in comes out, merging adds weights, and a
// damaged blob gives a StoreError naming what is wrong (never a crash or a huge allocation).
#include "sample_codec.h"

#include <gtest/gtest.h>

#include <climits>
#include <map>
#include <random>

#include "store.h"

namespace {

using store::StackWeight;

std::vector<StackWeight> some_samples(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::map<int64_t, uint64_t> m;
  while (m.size() < n) m[1 + static_cast<int64_t>(rng() % 2000)] = 1 + rng() % 100;
  std::vector<StackWeight> out;
  for (const auto& [id, w] : m) out.push_back({id, w});
  return out;
}

TEST(SampleCodec, RoundTripsAndIsCompact) {
  for (size_t n : {0, 1, 2, 600}) {
    const auto samples = some_samples(n, n);
    const std::string blob = store::encode_samples(samples);
    EXPECT_EQ(store::decode_samples(blob), samples) << n;
    // Ids under 2000 apart by a few, weights under 128: at most 3 bytes an entry, plus the count.
    EXPECT_LE(blob.size(), 2 + 3 * n) << n;
  }
  // The extremes of both fields.
  const std::vector<StackWeight> extremes = {
      {1, UINT64_MAX}, {2, 1}, {INT64_MAX - 1, 1ull << 63}, {INT64_MAX, 127}};
  EXPECT_EQ(store::decode_samples(store::encode_samples(extremes)), extremes);
}

TEST(SampleCodec, MergeAddsWeightsOfTheSameStack) {
  const std::vector<StackWeight> a = {{1, 5}, {3, 7}, {9, 1}};
  const std::vector<StackWeight> b = {{2, 4}, {3, 10}, {10, 2}};
  EXPECT_EQ(store::merge_samples(a, b),
            (std::vector<StackWeight>{{1, 5}, {2, 4}, {3, 17}, {9, 1}, {10, 2}}));
  EXPECT_EQ(store::merge_samples(a, {}), a);
  EXPECT_EQ(store::merge_samples({}, b), b);
  EXPECT_EQ(store::total_weight(store::merge_samples(a, b)),
            store::total_weight(a) + store::total_weight(b));
  // Merging what was decoded gives what merging before encoding gives.
  const auto x = some_samples(300, 1), y = some_samples(400, 2);
  EXPECT_EQ(store::merge_samples(store::decode_samples(store::encode_samples(x)),
                                 store::decode_samples(store::encode_samples(y))),
            store::merge_samples(x, y));
}

void expect_malformed(const std::string& blob, const std::string& what) {
  try {
    store::decode_samples(blob);
    ADD_FAILURE() << "decoded a blob with " << what;
  } catch (const store::StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("malformed samples blob: " + what), std::string::npos)
        << e.what();
  }
}

TEST(SampleCodec, DamagedBlobsGiveAClearError) {
  const std::string good = store::encode_samples(some_samples(50, 3));
  // Every shortened blob misses part of an entry.
  for (size_t len = 0; len < good.size(); ++len) {
    EXPECT_THROW(store::decode_samples(good.substr(0, len)), store::StoreError) << len;
  }
  expect_malformed("", "truncated varint");
  expect_malformed(good + '\x01', "1 bytes left over");
  // A count of 2^63 in a 12-byte blob: refused before anything is allocated for it.
  expect_malformed(std::string(9, '\x80') + '\x01' + "\x01\x01", "count");
  expect_malformed(std::string(10, '\xff') + '\x01', "varint longer than 64 bits");
  expect_malformed(std::string("\x02\x05\x00\x01\x01", 5), "stack ids not increasing");
  expect_malformed(std::string("\x01\x05\x00", 3), "zero weight");
  // Any byte changed: decoded or refused, never a crash (-DSANITIZE=ON checks every read).
  for (size_t i = 0; i < good.size(); ++i)
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      try {
        const auto back = store::decode_samples(bad);
        for (size_t k = 1; k < back.size(); ++k) ASSERT_LT(back[k - 1].stack_id, back[k].stack_id);
      } catch (const store::StoreError&) {
      }
    }
}

}  // namespace
