// SPDX-License-Identifier: Apache-2.0
// A fixed ring of stack samples that signal handlers fill and one drainer empties. Producers
// claim a slot with one compare-and-swap and publish it with a sequence number (the bounded queue
// of Dmitry Vyukov), so a handler never blocks and never allocates: when the ring is full the
// sample is dropped and the caller counts it.
#pragma once

#include <jni.h>
#include <jvmpi.h>

#include <atomic>
#include <cstdint>
#include <memory>

namespace jvmpi {

class SampleRing {
 public:
  static constexpr int kMaxDepth = 128;

  struct Slot {
    std::atomic<uint64_t> sequence{0};
    JNIEnv* env = nullptr;
    jint num_frames = 0;  // > 0: a stack; else no Java stack was found (see failure)
    jint failure = 0;     // with num_frames <= 0: the JVMPI_EXT_FAIL_* kind
    jint weight = 1;      // timer expiries this sample stands for
    JVMPI_CallFrame frames[kMaxDepth];
  };

  // `capacity` must be a power of two.
  explicit SampleRing(uint32_t capacity)
      : mask_(capacity - 1), slots_(std::make_unique<Slot[]>(capacity)) {
    for (uint32_t i = 0; i < capacity; ++i) slots_[i].sequence.store(i, std::memory_order_relaxed);
  }
  SampleRing(const SampleRing&) = delete;
  SampleRing& operator=(const SampleRing&) = delete;

  // A slot to fill, or null when full. Async-signal-safe. Finish with publish().
  Slot* claim() {
    uint64_t pos = enqueue_.load(std::memory_order_relaxed);
    for (;;) {
      Slot& slot = slots_[pos & mask_];
      const uint64_t seq = slot.sequence.load(std::memory_order_acquire);
      const auto diff = static_cast<int64_t>(seq - pos);
      if (diff == 0) {
        if (enqueue_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          slot.sequence.store(kClaimedBit | pos, std::memory_order_relaxed);
          return &slot;
        }
      } else if (diff < 0) {
        return nullptr;  // the drainer has not freed this slot yet: full
      } else {
        pos = enqueue_.load(std::memory_order_relaxed);
      }
    }
  }
  static void publish(Slot* slot) {
    const uint64_t pos = slot->sequence.load(std::memory_order_relaxed) & ~kClaimedBit;
    slot->sequence.store(pos + 1, std::memory_order_release);
  }

  // The oldest published slot, or null (empty, or its producer has not finished). One drainer at a
  // time (the caller serializes); finish with release().
  Slot* peek() {
    Slot& slot = slots_[dequeue_ & mask_];
    const uint64_t seq = slot.sequence.load(std::memory_order_acquire);
    return seq == dequeue_ + 1 ? &slot : nullptr;
  }
  void release(Slot* slot) {
    slot->sequence.store(dequeue_ + mask_ + 1, std::memory_order_release);
    ++dequeue_;
  }

 private:
  // Marks a claimed slot so that its sequence matches neither a free nor a published one.
  static constexpr uint64_t kClaimedBit = uint64_t{1} << 63;

  const uint64_t mask_;
  std::unique_ptr<Slot[]> slots_;
  alignas(64) std::atomic<uint64_t> enqueue_{0};
  alignas(64) uint64_t dequeue_ = 0;
};

}  // namespace jvmpi
