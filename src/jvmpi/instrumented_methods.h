// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <bci.h>
#include <jni.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "block_arena.h"

namespace jvmpi {

// One instrumented class's methods as its hooks need them: each method's name and descriptor
// (to check the jmethodID of the frame a hook runs for), the jmethodID once found, and the keys
// of its lookupswitch instructions. Laid out in one piece of a BlockArena, and freed with it.
class InstrumentedMethods {
 public:
  // nullptr when the arena has no memory, or the methods do not fit 32-bit counts.
  static InstrumentedMethods* create(BlockArena& arena,
                                     const std::vector<bci::MethodInfo>& methods);

  size_t size() const { return method_count_; }
  std::string_view name(size_t method) const;
  std::string_view descriptor(size_t method) const;
  std::atomic<jmethodID>& id(size_t method);
  // The pair the lookupswitch at bytecode `offset` of `method` takes for `key`, as an index into
  // its match pairs; -1 for its default branch or when the method has no switch there.
  int lookup_pair(size_t method, uint32_t offset, int32_t key) const;

 private:
  struct Method;
  struct Switch;
  InstrumentedMethods() = default;
  Method* methods() const;
  const Switch* switches() const;
  const int32_t* keys() const;
  const char* text() const;

  uint32_t method_count_ = 0;
  uint32_t switch_count_ = 0;
  uint32_t key_count_ = 0;
};

}  // namespace jvmpi
