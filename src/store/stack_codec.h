// SPDX-License-Identifier: Apache-2.0
// A stack's frame ids as one small blob (LEB128 varints, root first): the key that makes the same
// stack one row however many periods hold it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace store {

std::string encode_frame_ids(const std::vector<int64_t>& ids);
// false on a malformed blob (truncated varint, negative id).
bool decode_frame_ids(std::string_view blob, std::vector<int64_t>& ids);
// A 64-bit hash of the frame names (each with its length, so that frame boundaries count), read
// 16 bytes at a time: the writer's key for a known stack, computed without copying the names.
uint64_t frames_hash(const std::vector<std::string>& frames);

// A writer's known stacks: an in-memory intern table keyed by frames_hash, each entry holding its
// stack id and its frames as pointers to interned names, so that a hit costs one pass over the
// names to hash them and one to compare them, and no allocation (most of a period's stacks were
// seen before). Bounded: a program with ever new stacks costs lookups, not memory.
class StackIdCache {
 public:
  // The stack's id, from the cache or from `resolve(frames)` (which finds or makes its row).
  template <class Resolve>
  int64_t get(const std::vector<std::string>& frames, Resolve&& resolve) {
    const uint64_t hash = frames_hash(frames);
    if (const Entry* e = find(hash, frames)) return e->id;
    const int64_t id = resolve(frames);
    remember(hash, frames, id);
    return id;
  }
  // After a rollback or a clean-up that deleted stack rows.
  void clear();
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    int64_t id;
    uint32_t first;  // the frames: refs_[first, first + count)
    uint32_t count;
  };
  const Entry* find(uint64_t hash, const std::vector<std::string>& frames) const;
  void remember(uint64_t hash, const std::vector<std::string>& frames, int64_t id);

  static constexpr size_t kMaxStacks = 65536;
  static constexpr size_t kMaxFrameRefs = kMaxStacks * 64;
  std::unordered_multimap<uint64_t, uint32_t> by_hash_;  // -> index in entries_
  std::vector<Entry> entries_;
  std::vector<const std::string*> refs_;
  std::unordered_set<std::string> names_;  // node-based: the pointers in refs_ stay valid
};

}  // namespace store
