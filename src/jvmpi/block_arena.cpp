// SPDX-License-Identifier: Apache-2.0
#include "block_arena.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>

namespace jvmpi {

struct BlockArena::Block {
  Block* previous;
  size_t size;  // of the whole mapping, this header included
  size_t used;  // bytes from the mapping's start
};

namespace {

// Large enough that a session's tables take a few blocks (about 4 KiB per instrumented class).
constexpr size_t kBlockBytes = 256 * 1024;
constexpr size_t kPage = 4096;

size_t round_up(size_t n, size_t to) {
  return (n + to - 1) / to * to;
}

}  // namespace

BlockArena::~BlockArena() {
  while (current_ != nullptr) {
    Block* previous = current_->previous;
    munmap(current_, current_->size);
    current_ = previous;
  }
}

void* BlockArena::allocate(size_t bytes, size_t align) {
  if (align == 0 || (align & (align - 1)) != 0 || align > 64) return nullptr;
  if (current_ != nullptr) {
    const size_t at = round_up(current_->used, align);
    if (at <= current_->size && bytes <= current_->size - at) {
      current_->used = at + bytes;
      return reinterpret_cast<char*>(current_) + at;
    }
  }
  const size_t header = round_up(sizeof(Block), 64);
  if (bytes > SIZE_MAX - header - kPage) return nullptr;
  const size_t size = std::max(kBlockBytes, round_up(header + bytes, kPage));
  void* mapped = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) return nullptr;
  auto* block = static_cast<Block*>(mapped);
  block->previous = current_;
  block->size = size;
  block->used = header + bytes;
  current_ = block;
  mapped_ += size;
  return static_cast<char*>(mapped) + header;
}

}  // namespace jvmpi
