// SPDX-License-Identifier: Apache-2.0
// The objects heap=sites tracks, by JVMPI object ID. The runtime hands out IDs as consecutive
// multiples of 8 (object_ids.h), and most objects die young, so recent IDs are kept in a window of
// chunks indexed directly by ID: an allocation writes the next slot of the newest chunk (no
// hashing, no cache miss) and a free clears one slot. Chunks leave the window from the oldest end:
// an emptied one is recycled; while the window holds more than twice as many slots as live objects,
// the oldest chunk's survivors move to a hash table (ObjectHashTable) and the chunk is recycled.
// Any other ID (not a multiple of 8, or older than the window) goes to the hash table directly.
#pragma once

#include <jvmpi.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "object_hash_table.h"

namespace hprof::agent {

class ObjectTable {
 public:
  ObjectTable();
  ~ObjectTable();
  ObjectTable(const ObjectTable&) = delete;
  ObjectTable& operator=(const ObjectTable&) = delete;

  // Records `object` (null is ignored), replacing what an earlier entry said about it.
  void put(jobjectID object, TrackedObject value);
  // The entry for `object`, or nullptr. Valid until the next put or remove.
  const TrackedObject* find(jobjectID object) const;
  // Starts fetching the memory find(object) will read (a hint; no effect on the contents).
  void prefetch(jobjectID object) const;
  // Removes `object`; returns whether it was there, and its entry in `removed`.
  bool remove(jobjectID object, TrackedObject* removed);
  size_t size() const { return young_live_ + old_.size(); }

  // For tests and statistics: objects in the window, chunks allocated to it, objects in the hash.
  size_t young_size() const { return young_live_; }
  size_t young_chunks() const { return allocated_chunks_; }
  size_t old_size() const { return old_.size(); }

  static constexpr unsigned kChunkBits = 14;  // 16 Ki IDs (128 KiB of entries) per chunk
  static constexpr size_t kChunkSlots = size_t{1} << kChunkBits;
  // The window always may hold this many chunks, however few objects live in it.
  static constexpr size_t kMinChunks = 8;
  // A put further ahead than this many chunks empties the window into the hash table first.
  static constexpr uint64_t kMaxJumpChunks = 4096;

 private:
  struct Chunk;

  // Where `object` would be in the window: its chunk (null if none) and slot. False if the ID is
  // not window-shaped or before the window's start.
  bool young_place(jobjectID object, uint64_t* chunk_number, size_t* slot) const;
  Chunk* chunk_at(uint64_t chunk_number) const;
  Chunk* make_chunk(uint64_t chunk_number);  // extends the window to chunk_number
  void retire_oldest();                      // survivors to old_, chunk recycled
  void trim_front();                         // drops empty or absent chunks at the oldest end
  void shrink_if_sparse();

  // chunks_[i] holds chunk number first_chunk_ + i (null: nothing was put there).
  std::deque<std::unique_ptr<Chunk>> chunks_;
  uint64_t first_chunk_ = 0;
  size_t allocated_chunks_ = 0;
  size_t young_live_ = 0;
  std::vector<std::unique_ptr<Chunk>> spare_;  // recycled chunks, a few at most
  ObjectHashTable old_;
};

}  // namespace hprof::agent
