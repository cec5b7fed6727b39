// SPDX-License-Identifier: Apache-2.0
// Internal: the id -> object table's shape, shared by the indexer (which builds an
// open-addressing table of {id, node} slots for pass 2) and the saved index (which keeps only the
// node of each slot, 4 bytes a slot, and reads a candidate's id back from the dump). Both must
// agree on the slot count and the home slot of an id, so they are defined once, here; changing
// either means a new index file version.
#pragma once

#include <cstdint>
#include <span>

#include "dominators.h"

namespace analysis::detail {

// 1.5 slots per object (and a few more, so a table is never full): linear probing stays short.
inline uint64_t id_table_slots(uint64_t objects) {
  return objects + objects / 2 + 16;
}

// Home slot of an id: the Fibonacci hash scaled to the table's size (any size, not a power of
// two, by a 128-bit multiply).
inline uint64_t id_home(uint64_t id, uint64_t slots) {
  const uint64_t hash = id * 0x9E3779B97F4A7C15ull;
  return static_cast<uint64_t>((static_cast<unsigned __int128>(hash) * slots) >> 64);
}

// The node with this id in a table of nodes (kNone: empty slot); `id_of(node)` reads a node's
// id. kNone if absent. At most one pass over the table, whatever its contents.
template <typename IdOf>
uint32_t find_in_id_table(std::span<const uint32_t> table, uint64_t id, IdOf&& id_of) {
  const uint64_t slots = table.size();
  if (slots == 0) return kNone;
  uint64_t slot = id_home(id, slots);
  for (uint64_t probes = 0; probes < slots; ++probes) {
    const uint32_t node = table[slot];
    if (node == kNone || id_of(node) == id) return node;
    slot = slot + 1 == slots ? 0 : slot + 1;
  }
  return kNone;
}

}  // namespace analysis::detail
