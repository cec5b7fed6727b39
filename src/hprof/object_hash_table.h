// SPDX-License-Identifier: Apache-2.0
// Objects by JVMPI object ID in an open-addressing hash table (linear probing, deletion by backward
// shift) with the entries stored inline: ObjectTable's home for objects that outlived its directly
// indexed window of young IDs.
#pragma once

#include <jvmpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hprof::agent {

struct TrackedObject {
  uint32_t site = 0;
  jint size = 0;
};

class ObjectHashTable {
 public:
  // Records `object` (an ID is never null), replacing what an earlier entry said about it.
  void put(jobjectID object, TrackedObject value);
  // The entry for `object`, or nullptr. Valid until the next put or remove.
  const TrackedObject* find(jobjectID object) const;
  // Starts fetching the slot where find(object) begins its probe (a hint).
  void prefetch(jobjectID object) const;
  // Removes `object`; returns whether it was there, and its entry in `removed`.
  bool remove(jobjectID object, TrackedObject* removed);
  size_t size() const { return size_; }

 private:
  struct Slot {
    jobjectID key = nullptr;  // nullptr: empty
    TrackedObject value;
  };

  size_t home(jobjectID key) const;
  size_t find_slot(jobjectID key) const;  // the key's slot, or the empty slot ending its run
  void grow();

  std::vector<Slot> slots_;
  size_t size_ = 0;
  unsigned shift_ = 64;  // 64 - log2(slots_.size())
};

}  // namespace hprof::agent
