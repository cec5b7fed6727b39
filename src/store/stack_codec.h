// SPDX-License-Identifier: Apache-2.0
// A stack's frame ids as one small blob (LEB128 varints, root first): the key that makes the same
// stack one row however many periods hold it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace store {

std::string encode_frame_ids(const std::vector<int64_t>& ids);
// false on a malformed blob (truncated varint, negative id).
bool decode_frame_ids(std::string_view blob, std::vector<int64_t>& ids);
// The frame names as one unambiguous string (each prefixed by its length): a writer's cache key
// that finds a known stack with one hash instead of one per frame.
std::string frames_key(const std::vector<std::string>& frames);

// A writer's known stacks by their frame names (most of a period's stacks were seen before).
// Bounded: a program with ever new stacks costs lookups, not memory.
class StackIdCache {
 public:
  // The stack's id, from the cache or from `resolve(frames)` (which finds or makes its row).
  template <class Resolve>
  int64_t get(const std::vector<std::string>& frames, Resolve&& resolve) {
    std::string key = frames_key(frames);
    if (auto it = ids_.find(key); it != ids_.end()) return it->second;
    const int64_t id = resolve(frames);
    if (ids_.size() >= kMaxStacks) ids_.clear();
    ids_.emplace(std::move(key), id);
    return id;
  }
  // After a rollback or a clean-up that deleted stack rows.
  void clear() { ids_.clear(); }

 private:
  static constexpr size_t kMaxStacks = 65536;
  std::unordered_map<std::string, int64_t> ids_;
};

}  // namespace store
