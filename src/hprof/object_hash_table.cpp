// SPDX-License-Identifier: Apache-2.0
#include "object_hash_table.h"

namespace hprof::agent {

size_t ObjectHashTable::home(jobjectID key) const {
  // Fibonacci hashing: IDs are often consecutive multiples of 8, which this spreads evenly.
  const auto bits = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(key));
  return static_cast<size_t>((bits * 0x9e3779b97f4a7c15ULL) >> shift_);
}

size_t ObjectHashTable::find_slot(jobjectID key) const {
  const size_t mask = slots_.size() - 1;
  size_t i = home(key);
  while (slots_[i].key != nullptr && slots_[i].key != key) i = (i + 1) & mask;
  return i;
}

void ObjectHashTable::grow() {
  std::vector<Slot> old;
  old.swap(slots_);
  const size_t capacity = old.empty() ? 1024 : old.size() * 2;
  slots_.assign(capacity, Slot{});
  shift_ = 64;
  for (size_t c = capacity; c > 1; c >>= 1) --shift_;
  for (const Slot& s : old) {
    if (s.key != nullptr) slots_[find_slot(s.key)] = s;
  }
}

void ObjectHashTable::put(jobjectID object, TrackedObject value) {
  if (object == nullptr) return;
  // At most three quarters full, so probe runs stay short.
  if ((size_ + 1) * 4 > slots_.size() * 3) grow();
  Slot& slot = slots_[find_slot(object)];
  if (slot.key == nullptr) {
    slot.key = object;
    ++size_;
  }
  slot.value = value;
}

const TrackedObject* ObjectHashTable::find(jobjectID object) const {
  if (object == nullptr || slots_.empty()) return nullptr;
  const Slot& slot = slots_[find_slot(object)];
  return slot.key == nullptr ? nullptr : &slot.value;
}

void ObjectHashTable::prefetch(jobjectID object) const {
  if (object != nullptr && !slots_.empty()) __builtin_prefetch(&slots_[home(object)]);
}

bool ObjectHashTable::remove(jobjectID object, TrackedObject* removed) {
  if (object == nullptr || slots_.empty()) return false;
  const size_t mask = slots_.size() - 1;
  size_t hole = find_slot(object);
  if (slots_[hole].key == nullptr) return false;
  if (removed != nullptr) *removed = slots_[hole].value;
  --size_;
  // Backward shift: later entries of the run whose home is not between the hole and them move
  // into the hole, so no tombstones are needed and lookups stay exact.
  for (size_t next = (hole + 1) & mask; slots_[next].key != nullptr; next = (next + 1) & mask) {
    const size_t h = home(slots_[next].key);
    const bool stays = hole <= next ? (hole < h && h <= next) : (hole < h || h <= next);
    if (stays) continue;
    slots_[hole] = slots_[next];
    hole = next;
  }
  slots_[hole] = Slot{};
  return true;
}

}  // namespace hprof::agent
