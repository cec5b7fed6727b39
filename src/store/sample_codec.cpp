// SPDX-License-Identifier: Apache-2.0
#include "sample_codec.h"

#include <algorithm>

#include "store.h"

namespace store {
namespace {

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

[[noreturn]] void malformed(const std::string& what, size_t at) {
  throw StoreError("malformed samples blob: " + what + " at byte " + std::to_string(at));
}

uint64_t get_varint(std::string_view blob, size_t& at) {
  uint64_t v = 0;
  const size_t start = at;
  for (int shift = 0; shift < 64; shift += 7) {
    if (at >= blob.size()) malformed("truncated varint", start);
    const auto b = static_cast<uint8_t>(blob[at++]);
    // The tenth byte may only hold the top bit of a 64-bit value.
    if (shift == 63 && b > 1) malformed("varint longer than 64 bits", start);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  malformed("varint longer than 64 bits", start);
}

}  // namespace

std::string encode_samples(const std::vector<StackWeight>& samples) {
  std::string out;
  out.reserve(1 + samples.size() * 3);
  put_varint(out, samples.size());
  int64_t previous = 0;
  for (const StackWeight& s : samples) {
    put_varint(out, static_cast<uint64_t>(s.stack_id - previous));
    previous = s.stack_id;
  }
  for (const StackWeight& s : samples) put_varint(out, s.weight);
  return out;
}

std::vector<StackWeight> decode_samples(std::string_view blob) {
  size_t at = 0;
  const uint64_t n = get_varint(blob, at);
  // Every entry takes at least two bytes (its id delta and its weight): a larger count is a lie
  // that must not size an allocation.
  if (n > (blob.size() - at) / 2) malformed("count " + std::to_string(n) + " too large", 0);
  std::vector<StackWeight> out(n);
  uint64_t id = 0;
  for (auto& s : out) {
    const size_t here = at;
    const uint64_t delta = get_varint(blob, at);
    if (delta == 0 || delta > static_cast<uint64_t>(INT64_MAX) - id)
      malformed("stack ids not increasing", here);
    id += delta;
    s.stack_id = static_cast<int64_t>(id);
  }
  for (auto& s : out) {
    const size_t here = at;
    s.weight = get_varint(blob, at);
    if (s.weight == 0) malformed("zero weight", here);
  }
  if (at != blob.size()) malformed(std::to_string(blob.size() - at) + " bytes left over", at);
  return out;
}

std::vector<StackWeight> merge_samples(const std::vector<StackWeight>& a,
                                       const std::vector<StackWeight>& b) {
  std::vector<StackWeight> out;
  out.reserve(a.size() + b.size());
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].stack_id < b[j].stack_id)) {
      out.push_back(a[i++]);
    } else if (i == a.size() || b[j].stack_id < a[i].stack_id) {
      out.push_back(b[j++]);
    } else {
      out.push_back({a[i].stack_id, a[i].weight + b[j].weight});
      ++i;
      ++j;
    }
  }
  return out;
}

void sum_by_stack(std::vector<StackWeight>& samples) {
  std::sort(samples.begin(), samples.end(),
            [](const StackWeight& a, const StackWeight& b) { return a.stack_id < b.stack_id; });
  size_t out = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    if (out > 0 && samples[out - 1].stack_id == samples[i].stack_id)
      samples[out - 1].weight += samples[i].weight;
    else
      samples[out++] = samples[i];
  }
  samples.resize(out);
}

uint64_t total_weight(const std::vector<StackWeight>& samples) {
  uint64_t total = 0;
  for (const StackWeight& s : samples) total += s.weight;
  return total;
}

}  // namespace store
