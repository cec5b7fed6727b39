// SPDX-License-Identifier: Apache-2.0
// AllocationSites::object_traces (the heap dump's batched lookup) answers what object_info answers
// one object at a time: for objects in ObjectTable's window of young IDs, in its hash table (IDs
// far apart, odd IDs, survivors of retired chunks), freed ones, unknown ones and null.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "allocation_sites.h"

namespace hprof::agent {
namespace {

jobjectID id(uint64_t bits) {
  return reinterpret_cast<jobjectID>(static_cast<uintptr_t>(bits));
}

TEST(ObjectTraces, BatchAgreesWithOneByOneLookups) {
  AllocationSites sites;
  std::vector<jobjectID> asked;
  std::mt19937_64 random(15);
  for (uint64_t i = 1; i <= 200'000; ++i) {
    // Consecutive multiples of 8 (the window), then far jumps and odd IDs (the hash table).
    const uint64_t bits = i % 50 == 0 ? (i << 24) + 3 : 8 * i;
    sites.on_alloc(id(bits), SiteKey{JVMPI_NORMAL_OBJECT, id(0x100), static_cast<unsigned>(i % 97)},
                   16);
    asked.push_back(id(bits));
    if (i % 5 == 0) asked.push_back(id(8 * i + 4));  // never allocated
  }
  for (uint64_t i = 1; i <= 200'000; i += 3) sites.on_free(id(8 * i));
  asked.push_back(nullptr);
  std::shuffle(asked.begin(), asked.end(), random);

  std::vector<unsigned> traces(asked.size(), 12345);
  sites.object_traces(asked.data(), asked.size(), traces.data());
  size_t found = 0;
  for (size_t k = 0; k < asked.size(); ++k) {
    unsigned trace = 0;
    jint size = 0;
    const bool known = sites.object_info(asked[k], &trace, &size);
    ASSERT_EQ(traces[k], known ? trace : 0u) << "object " << asked[k];
    found += known ? 1 : 0;
  }
  EXPECT_GT(found, 100'000u);
  EXPECT_LT(found, asked.size() - 40'000);
}

}  // namespace
}  // namespace hprof::agent
