// SPDX-License-Identifier: Apache-2.0
// The table the method hooks read (src/jvmpi/instrumented_methods.h), laid out in a BlockArena:
// every method's name, descriptor and lookupswitch keys come back as the instrumenter gave them,
// each method has its own jmethodID slot, and the arena's memory goes back to the kernel with it.
#include "instrumented_methods.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace {

using jvmpi::BlockArena;
using jvmpi::InstrumentedMethods;

bci::MethodInfo Method(std::string name, std::string descriptor,
                       std::vector<bci::LookupSwitch> switches = {}) {
  bci::MethodInfo m;
  m.name = std::move(name);
  m.descriptor = std::move(descriptor);
  m.instrumented = true;
  m.lookup_switches = std::move(switches);
  return m;
}

// Whether [address, address + 1) lies in one of this process's mappings.
bool Mapped(const void* address) {
  std::ifstream maps("/proc/self/maps");
  const auto at = reinterpret_cast<uintptr_t>(address);
  std::string line;
  while (std::getline(maps, line)) {
    const uintptr_t from = std::stoull(line.substr(0, line.find('-')), nullptr, 16);
    const uintptr_t to = std::stoull(line.substr(line.find('-') + 1), nullptr, 16);
    if (at >= from && at < to) return true;
  }
  return false;
}

TEST(InstrumentedMethods, GivesBackNamesDescriptorsAndSwitchesOfEveryMethod) {
  BlockArena arena;
  const std::vector<bci::MethodInfo> methods = {
      Method("<init>", "()V"),
      Method("a_rather_long_method_name_beyond_any_small_string", "(Ljava/lang/String;IJ)[[D",
             {{12, {-5, 0, 7, 1000}}, {40, {3}}}),
      Method("", ""),
      Method("dispatch", "(I)I", {{0, {}}, {9, {-2147483647 - 1, 2147483647}}}),
  };
  InstrumentedMethods* t = InstrumentedMethods::create(arena, methods);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->size(), methods.size());
  for (size_t i = 0; i < methods.size(); ++i) {
    EXPECT_EQ(t->name(i), methods[i].name) << i;
    EXPECT_EQ(t->descriptor(i), methods[i].descriptor) << i;
    EXPECT_EQ(t->id(i).load(), nullptr) << i;
    for (const bci::LookupSwitch& s : methods[i].lookup_switches) {
      for (size_t k = 0; k < s.keys.size(); ++k) {
        EXPECT_EQ(t->lookup_pair(i, s.offset, s.keys[k]), static_cast<int>(k))
            << "method " << i << " switch at " << s.offset << " key " << s.keys[k];
      }
    }
  }
  // A key no pair matches, a switch offset the method has not, a method without switches: the
  // default branch.
  EXPECT_EQ(t->lookup_pair(1, 12, 1), -1);
  EXPECT_EQ(t->lookup_pair(1, 13, 0), -1);
  EXPECT_EQ(t->lookup_pair(0, 12, -5), -1);
  EXPECT_EQ(t->lookup_pair(3, 0, 0), -1);
  // The same offset in another method is that method's switch.
  EXPECT_EQ(t->lookup_pair(3, 9, 2147483647), 1);
  EXPECT_EQ(t->lookup_pair(1, 40, 3), 0);
}

TEST(InstrumentedMethods, EachMethodHasItsOwnIdSlot) {
  BlockArena arena;
  InstrumentedMethods* t =
      InstrumentedMethods::create(arena, {Method("a", "()V"), Method("b", "()V")});
  ASSERT_NE(t, nullptr);
  jmethodID one = reinterpret_cast<jmethodID>(uintptr_t{0x1000});
  t->id(1).store(one);
  EXPECT_EQ(t->id(0).load(), nullptr);
  EXPECT_EQ(t->id(1).load(), one);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(&t->id(0)) % alignof(std::atomic<jmethodID>), 0u);
}

TEST(InstrumentedMethods, ClassWithoutMethods) {
  BlockArena arena;
  InstrumentedMethods* t = InstrumentedMethods::create(arena, {});
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->size(), 0u);
}

// Many tables, and one larger than a block: every table stays intact (nothing overlaps), and
// destroying the arena unmaps its blocks.
TEST(InstrumentedMethods, ManyTablesAndAHugeOneLiveInTheArenaAndLeaveWithIt) {
  std::vector<const InstrumentedMethods*> tables;
  std::vector<std::vector<bci::MethodInfo>> inputs;
  auto* arena = new BlockArena;
  for (int c = 0; c < 400; ++c) {
    std::vector<bci::MethodInfo> methods;
    const int count = c == 123 ? 20000 : 1 + c % 17;
    for (int m = 0; m < count; ++m) {
      methods.push_back(Method("m" + std::to_string(c) + "_" + std::to_string(m),
                               "(" + std::string(static_cast<size_t>(m % 5), 'I') + ")V",
                               {{static_cast<uint32_t>(m), {m, m + 1}}}));
    }
    InstrumentedMethods* t = InstrumentedMethods::create(*arena, methods);
    ASSERT_NE(t, nullptr) << c;
    tables.push_back(t);
    inputs.push_back(std::move(methods));
  }
  EXPECT_GT(arena->mapped_bytes(), size_t{1} << 20);  // more than one block, the huge table's own
  for (size_t c = 0; c < tables.size(); ++c) {
    ASSERT_EQ(tables[c]->size(), inputs[c].size());
    for (size_t m = 0; m < inputs[c].size(); ++m) {
      ASSERT_EQ(tables[c]->name(m), inputs[c][m].name) << c << " " << m;
      ASSERT_EQ(tables[c]->descriptor(m), inputs[c][m].descriptor) << c << " " << m;
      ASSERT_EQ(tables[c]->lookup_pair(m, static_cast<uint32_t>(m), static_cast<int32_t>(m) + 1),
                1);
    }
  }
  const void* first = tables.front();
  const void* huge = tables[123];
  ASSERT_TRUE(Mapped(first));
  ASSERT_TRUE(Mapped(huge));
  delete arena;
  EXPECT_FALSE(Mapped(first));
  EXPECT_FALSE(Mapped(huge));
}

TEST(BlockArena, AlignsAndRefusesBadAlignments) {
  BlockArena arena;
  for (size_t align : {1, 2, 8, 16, 64}) {
    void* p = arena.allocate(3, align);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % align, 0u) << align;
  }
  EXPECT_EQ(arena.allocate(8, 0), nullptr);
  EXPECT_EQ(arena.allocate(8, 3), nullptr);
  EXPECT_EQ(arena.allocate(8, 128), nullptr);
  EXPECT_EQ(arena.allocate(SIZE_MAX - 16, 8), nullptr);
}

}  // namespace
