// SPDX-License-Identifier: Apache-2.0
#include "object_table.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace hprof::agent {

struct ObjectTable::Chunk {
  size_t live = 0;
  uint64_t used[kChunkSlots / 64] = {};  // bit i: slot i holds an object
  TrackedObject slots[kChunkSlots];

  bool has(size_t slot) const { return (used[slot / 64] >> (slot % 64) & 1) != 0; }
  void mark(size_t slot) { used[slot / 64] |= uint64_t{1} << (slot % 64); }
  void unmark(size_t slot) { used[slot / 64] &= ~(uint64_t{1} << (slot % 64)); }
};

namespace {

constexpr size_t kMaxSpareChunks = 4;

jobjectID id_at(uint64_t chunk_number, size_t slot) {
  const uint64_t n = (chunk_number << ObjectTable::kChunkBits) | slot;
  return reinterpret_cast<jobjectID>(static_cast<uintptr_t>(n << 3));
}

}  // namespace

ObjectTable::ObjectTable() = default;
ObjectTable::~ObjectTable() = default;

bool ObjectTable::young_place(jobjectID object, uint64_t* chunk_number, size_t* slot) const {
  const auto bits = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(object));
  if ((bits & 7) != 0) return false;
  const uint64_t n = bits >> 3;
  *chunk_number = n >> kChunkBits;
  *slot = static_cast<size_t>(n & (kChunkSlots - 1));
  // The window's start only moves forward, and an ID before it was either never in the window or
  // moved to the hash table when its chunk was retired.
  return *chunk_number >= first_chunk_;
}

ObjectTable::Chunk* ObjectTable::chunk_at(uint64_t chunk_number) const {
  const uint64_t i = chunk_number - first_chunk_;
  return i < chunks_.size() ? chunks_[i].get() : nullptr;
}

ObjectTable::Chunk* ObjectTable::make_chunk(uint64_t chunk_number) {
  if (chunks_.empty()) {
    first_chunk_ = chunk_number;
  } else if (chunk_number - first_chunk_ >= chunks_.size() + kMaxJumpChunks) {
    // IDs jumped far ahead (e.g. a heap dump tagged every untagged object): rather than a long run
    // of empty chunks, everything in the window moves to the hash table.
    while (!chunks_.empty()) retire_oldest();
    first_chunk_ = chunk_number;
  }
  while (first_chunk_ + chunks_.size() <= chunk_number) chunks_.emplace_back();
  std::unique_ptr<Chunk>& place = chunks_[chunk_number - first_chunk_];
  if (!spare_.empty()) {
    place = std::move(spare_.back());
    spare_.pop_back();
  } else {
    place = std::make_unique<Chunk>();
  }
  Chunk* chunk = place.get();
  ++allocated_chunks_;
  shrink_if_sparse();
  return chunk;
}

void ObjectTable::shrink_if_sparse() {
  // At least half the window's slots hold live objects (beyond its first few chunks); the oldest
  // chunks, whose objects outlived the rest, give way first. The newest chunk always stays.
  while (chunks_.size() > 1 && allocated_chunks_ > kMinChunks &&
         allocated_chunks_ * kChunkSlots > 2 * young_live_ + kMinChunks * kChunkSlots) {
    retire_oldest();
  }
}

void ObjectTable::retire_oldest() {
  std::unique_ptr<Chunk> chunk = std::move(chunks_.front());
  chunks_.pop_front();
  const uint64_t number = first_chunk_++;
  if (chunk == nullptr) return;
  for (size_t w = 0; w < kChunkSlots / 64; ++w) {
    for (uint64_t bits = chunk->used[w]; bits != 0; bits &= bits - 1) {
      const size_t slot = w * 64 + static_cast<size_t>(std::countr_zero(bits));
      old_.put(id_at(number, slot), chunk->slots[slot]);
    }
  }
  young_live_ -= chunk->live;
  --allocated_chunks_;
  if (spare_.size() < kMaxSpareChunks) {
    chunk->live = 0;
    std::memset(chunk->used, 0, sizeof chunk->used);
    spare_.push_back(std::move(chunk));
  }
}

void ObjectTable::trim_front() {
  while (chunks_.size() > 1 && (chunks_.front() == nullptr || chunks_.front()->live == 0)) {
    retire_oldest();
  }
}

void ObjectTable::put(jobjectID object, TrackedObject value) {
  if (object == nullptr) return;
  uint64_t number = 0;
  size_t slot = 0;
  if (!young_place(object, &number, &slot)) {
    old_.put(object, value);
    return;
  }
  Chunk* chunk = chunk_at(number);
  if (chunk == nullptr) chunk = make_chunk(number);
  if (!chunk->has(slot)) {
    chunk->mark(slot);
    ++chunk->live;
    ++young_live_;
  }
  chunk->slots[slot] = value;
}

const TrackedObject* ObjectTable::find(jobjectID object) const {
  if (object == nullptr) return nullptr;
  uint64_t number = 0;
  size_t slot = 0;
  if (!young_place(object, &number, &slot)) return old_.find(object);
  const Chunk* chunk = chunk_at(number);
  return chunk != nullptr && chunk->has(slot) ? &chunk->slots[slot] : nullptr;
}

void ObjectTable::prefetch(jobjectID object) const {
  if (object == nullptr) return;
  uint64_t number = 0;
  size_t slot = 0;
  if (!young_place(object, &number, &slot)) {
    old_.prefetch(object);
    return;
  }
  const Chunk* chunk = chunk_at(number);
  if (chunk == nullptr) return;
  __builtin_prefetch(&chunk->used[slot / 64]);
  __builtin_prefetch(&chunk->slots[slot]);
}

bool ObjectTable::remove(jobjectID object, TrackedObject* removed) {
  if (object == nullptr) return false;
  uint64_t number = 0;
  size_t slot = 0;
  if (!young_place(object, &number, &slot)) return old_.remove(object, removed);
  Chunk* chunk = chunk_at(number);
  if (chunk == nullptr || !chunk->has(slot)) return false;
  if (removed != nullptr) *removed = chunk->slots[slot];
  chunk->unmark(slot);
  --chunk->live;
  --young_live_;
  if (chunk->live == 0 && number != first_chunk_ + chunks_.size() - 1) {
    // An emptied chunk (not the newest, where puts go on) is recycled at once.
    std::unique_ptr<Chunk>& place = chunks_[number - first_chunk_];
    --allocated_chunks_;
    if (spare_.size() < kMaxSpareChunks) spare_.push_back(std::move(place));
    place.reset();
    trim_front();
  }
  return true;
}

}  // namespace hprof::agent
