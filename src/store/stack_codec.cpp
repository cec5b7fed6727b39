// SPDX-License-Identifier: Apache-2.0
#include "stack_codec.h"

#include <cstring>

namespace store {

std::string encode_frame_ids(const std::vector<int64_t>& ids) {
  std::string out;
  out.reserve(ids.size() * 2);
  for (int64_t id : ids) {
    auto v = static_cast<uint64_t>(id);
    while (v >= 0x80) {
      out.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out.push_back(static_cast<char>(v));
  }
  return out;
}

bool decode_frame_ids(std::string_view blob, std::vector<int64_t>& ids) {
  ids.clear();
  uint64_t v = 0;
  int shift = 0;
  for (char c : blob) {
    const auto b = static_cast<uint8_t>(c);
    if (shift > 56) return false;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (b & 0x80) {
      shift += 7;
      continue;
    }
    if (v > static_cast<uint64_t>(INT64_MAX)) return false;
    ids.push_back(static_cast<int64_t>(v));
    v = 0;
    shift = 0;
  }
  return shift == 0;
}

namespace {

// Multiplies to 128 bits and folds the halves: the mixing step of wyhash-style hashes.
inline uint64_t mix(uint64_t a, uint64_t b) {
  const unsigned __int128 r = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}

constexpr uint64_t kSeed = 0x9e3779b97f4a7c15ULL, kM1 = 0xa0761d6478bd642fULL,
                   kM2 = 0xe7037ed1a0b428dbULL;

inline uint64_t load8(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint64_t load4(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

}  // namespace

uint64_t frames_hash(const std::vector<std::string>& frames) {
  uint64_t h = kSeed ^ frames.size();
  for (const std::string& f : frames) {
    const char* p = f.data();
    size_t n = f.size();
    h = mix(h ^ n, kM1);
    for (; n > 16; p += 16, n -= 16) h = mix(load8(p) ^ h, load8(p + 8) ^ kM2);
    // The last 1 to 16 bytes in at most two loads, overlapping when fewer than 16 are left (as
    // wyhash reads its tail): no byte loop.
    uint64_t a = 0, b = 0;
    if (n > 8) {
      a = load8(p);
      b = load8(p + n - 8);
    } else if (n >= 4) {
      a = load4(p) << 32 | load4(p + n - 4);
    } else if (n > 0) {
      a = uint64_t{static_cast<uint8_t>(p[0])} << 16 |
          uint64_t{static_cast<uint8_t>(p[n >> 1])} << 8 | static_cast<uint8_t>(p[n - 1]);
    }
    h = mix(a ^ h, b ^ kM2 ^ n);
  }
  return mix(h, kM1);
}

const StackIdCache::Entry* StackIdCache::find(uint64_t hash,
                                              const std::vector<std::string>& frames) const {
  const auto [from, to] = by_hash_.equal_range(hash);
  for (auto it = from; it != to; ++it) {
    const Entry& e = entries_[it->second];
    if (e.count != frames.size()) continue;
    bool same = true;
    for (uint32_t i = 0; i < e.count && same; ++i) same = *refs_[e.first + i] == frames[i];
    if (same) return &e;
  }
  return nullptr;
}

void StackIdCache::remember(uint64_t hash, const std::vector<std::string>& frames, int64_t id) {
  if (entries_.size() >= kMaxStacks || refs_.size() + frames.size() > kMaxFrameRefs) clear();
  // A stack deeper than the whole table is looked up again next time, never cached.
  if (frames.size() > kMaxFrameRefs) return;
  entries_.push_back(
      {id, static_cast<uint32_t>(refs_.size()), static_cast<uint32_t>(frames.size())});
  for (const std::string& f : frames) refs_.push_back(&*names_.insert(f).first);
  by_hash_.emplace(hash, static_cast<uint32_t>(entries_.size() - 1));
}

void StackIdCache::clear() {
  by_hash_.clear();
  entries_.clear();
  refs_.clear();
  names_.clear();
}

}  // namespace store
