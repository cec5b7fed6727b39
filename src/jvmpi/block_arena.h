// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>

namespace jvmpi {

// Memory taken from the kernel in blocks (mmap) and given back whole (munmap) when the arena is
// destroyed; an allocation is a pointer bump. Not thread-safe: the caller serialises.
//
// For tables the runtime builds while HotSpot redefines classes on the same thread: from malloc
// they would lie between the VM's own allocations of that moment (its class parsing, its method-ID
// caches), and once freed their pages would stay resident for as long as any VM allocation beside
// them lives, since the C heap can only give whole free pages back.
class BlockArena {
 public:
  BlockArena() = default;
  ~BlockArena();
  BlockArena(const BlockArena&) = delete;
  BlockArena& operator=(const BlockArena&) = delete;

  // `bytes` aligned to `align` (a power of two up to 64), zero-filled; nullptr when the kernel
  // refuses memory.
  void* allocate(size_t bytes, size_t align);
  // What the arena has mapped, for tests and reports.
  size_t mapped_bytes() const { return mapped_; }

 private:
  struct Block;
  Block* current_ = nullptr;  // allocations come from here; each block links to the one before
  size_t mapped_ = 0;
};

}  // namespace jvmpi
