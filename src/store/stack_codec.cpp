// SPDX-License-Identifier: Apache-2.0
#include "stack_codec.h"

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

std::string frames_key(const std::vector<std::string>& frames) {
  size_t size = 0;
  for (const std::string& f : frames) size += f.size() + 4;
  std::string key;
  key.reserve(size);
  for (const std::string& f : frames) {
    const auto n = static_cast<uint32_t>(f.size());
    key.append(reinterpret_cast<const char*>(&n), sizeof n);
    key += f;
  }
  return key;
}

}  // namespace store
