// SPDX-License-Identifier: Apache-2.0
// The CPU sampler's ring (src/jvmpi/sample_ring.h): what producers publish comes out once each, in
// claim order, nothing is lost or duplicated when several threads produce at once, and a full ring
// refuses instead of overwriting.
#include "sample_ring.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace {

using jvmpi::SampleRing;

JNIEnv* Tag(uintptr_t v) {
  return reinterpret_cast<JNIEnv*>(v);
}

TEST(SampleRing, FullRingRefusesAndDrainsInOrder) {
  SampleRing ring(4);
  for (uintptr_t i = 1; i <= 4; ++i) {
    SampleRing::Slot* slot = ring.claim();
    ASSERT_NE(slot, nullptr);
    slot->env = Tag(i);
    slot->num_frames = 1;
    SampleRing::publish(slot);
  }
  EXPECT_EQ(ring.claim(), nullptr) << "a full ring must refuse, not overwrite";
  for (uintptr_t i = 1; i <= 4; ++i) {
    SampleRing::Slot* slot = ring.peek();
    ASSERT_NE(slot, nullptr);
    EXPECT_EQ(slot->env, Tag(i));
    ring.release(slot);
  }
  EXPECT_EQ(ring.peek(), nullptr);
  EXPECT_NE(ring.claim(), nullptr) << "released slots are reused";
}

TEST(SampleRing, UnpublishedSlotHoldsBackTheDrainer) {
  SampleRing ring(4);
  SampleRing::Slot* first = ring.claim();
  SampleRing::Slot* second = ring.claim();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  SampleRing::publish(second);
  EXPECT_EQ(ring.peek(), nullptr) << "the oldest slot is still being filled";
  SampleRing::publish(first);
  EXPECT_EQ(ring.peek(), first);
}

TEST(SampleRing, ConcurrentProducersLoseAndDuplicateNothing) {
  constexpr int kProducers = 4;
  constexpr uintptr_t kEach = 200000;
  SampleRing ring(256);
  std::atomic<uint64_t> refused{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      for (uintptr_t i = 0; i < kEach; ++i) {
        SampleRing::Slot* slot = ring.claim();
        if (slot == nullptr) {
          refused.fetch_add(1);
          continue;
        }
        slot->env = Tag((static_cast<uintptr_t>(p) << 32) | i);
        slot->num_frames = static_cast<jint>(i % 7) + 1;
        SampleRing::publish(slot);
      }
    });
  }
  std::vector<uintptr_t> last(kProducers, 0);
  std::vector<bool> seen_any(kProducers, false);
  uint64_t drained = 0;
  std::thread stopper([&] {
    for (auto& t : producers) t.join();
    done.store(true);
  });
  for (;;) {
    SampleRing::Slot* slot = ring.peek();
    if (slot == nullptr) {
      if (done.load() && ring.peek() == nullptr) break;
      std::this_thread::yield();
      continue;
    }
    const auto v = reinterpret_cast<uintptr_t>(slot->env);
    const auto p = static_cast<size_t>(v >> 32);
    const uintptr_t i = v & 0xffffffffu;
    ASSERT_LT(p, static_cast<size_t>(kProducers));
    EXPECT_EQ(slot->num_frames, static_cast<jint>(i % 7) + 1) << "slot read before it was filled";
    // Each producer's samples come out in the order it produced them, each once.
    if (seen_any[p]) {
      EXPECT_GT(i, last[p]);
    }
    last[p] = i;
    seen_any[p] = true;
    ++drained;
    ring.release(slot);
  }
  stopper.join();
  EXPECT_EQ(drained + refused.load(), kProducers * kEach);
  EXPECT_GT(drained, 0u);
}

}  // namespace
