// SPDX-License-Identifier: Apache-2.0
// Forward type simulation over straight-line code between StackMapTable frames. It yields the
// verifier's state where instrumentation needs a frame the original code did not have (after a
// conditional branch rewritten as inverted-branch + goto_w), and whether `this` is still
// uninitialized before each instruction of a constructor.
#pragma once

#include <optional>
#include <stdexcept>
#include <vector>

#include "code.h"

namespace bci {

// The simulation met code it cannot type (e.g. jsr under the type checker); the method is left
// uninstrumented.
struct SimulationError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Verifier state with one entry per slot: a long or double is followed by a Top.
struct SlotState {
  std::vector<VType> locals;
  std::vector<VType> stack;
};

std::vector<VType> to_slots(const std::vector<VType>& entries);
std::vector<VType> to_entries(const std::vector<VType>& slots, bool trim_trailing_top);

class Simulator {
 public:
  Simulator(ConstantPool& cp, uint16_t this_class, const CodeAttribute& code,
            const std::vector<Instruction>& instructions, const std::vector<Frame>& frames,
            const std::vector<VType>& initial);

  // Throws SimulationError.
  void run();

  bool this_uninit_before(size_t instruction) const { return uninit_before_[instruction]; }
  // invokespecial <init> that initializes `this` (the super() or this() call of a constructor).
  bool initializes_this(size_t instruction) const { return initializes_this_[instruction]; }
  // Fall-through state after the conditional branch at `instruction`, as frame entries.
  Frame fallthrough_frame(size_t instruction) const;

 private:
  void step(const Instruction& in, SlotState& s);
  void push(SlotState& s, VType t);
  void push_type(SlotState& s, std::string_view descriptor);
  VType pop(SlotState& s);
  void pop_n(SlotState& s, size_t n);
  void store(SlotState& s, uint16_t index, VType t);
  VType load(const SlotState& s, uint16_t index, bool wide);
  VType object(std::string_view name);
  VType array_component(VType array);

  ConstantPool& cp_;
  uint16_t this_class_;
  const CodeAttribute& code_;
  const std::vector<Instruction>& instructions_;
  const std::vector<Frame>& frames_;
  std::vector<VType> initial_;
  std::vector<int32_t> index_of_offset_;
  std::vector<bool> uninit_before_;
  std::vector<bool> initializes_this_;
  std::vector<std::optional<SlotState>> fallthrough_;
};

}  // namespace bci
