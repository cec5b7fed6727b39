// SPDX-License-Identifier: Apache-2.0
// One period's samples of one measure as one blob: the entry count, the stack ids in increasing
// order as deltas, then the weights, all LEB128 varints. Ids close together and small weights
// take a byte or two each, so a period costs a few bytes per distinct stack instead of a
// database row per stack (docs/profile-store.md, Schema).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace store {

struct StackWeight {
  int64_t stack_id = 0;
  uint64_t weight = 0;
  bool operator==(const StackWeight&) const = default;
};

// `samples` sorted by stack id, ids unique and > 0, weights > 0.
std::string encode_samples(const std::vector<StackWeight>& samples);
// Throws StoreError naming what is wrong (truncated varint, ids not increasing, a zero weight,
// bytes left over); never reads past the blob.
std::vector<StackWeight> decode_samples(std::string_view blob);
// Both sorted by stack id; the union, weights of the same stack added.
std::vector<StackWeight> merge_samples(const std::vector<StackWeight>& a,
                                       const std::vector<StackWeight>& b);
// Sorts by stack id and adds up the weights of entries with the same id, in place.
void sum_by_stack(std::vector<StackWeight>& samples);
uint64_t total_weight(const std::vector<StackWeight>& samples);

}  // namespace store
