// SPDX-License-Identifier: Apache-2.0
// Assembles bytecode from byte runs, symbolic branches and switches, choosing branch widths:
// goto/jsr become goto_w/jsr_w and a conditional branch that cannot reach its target becomes an
// inverted branch over a goto_w.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace bci {

class CodeBuilder {
 public:
  // Room for this many labels and about this many bytes: a vector that doubles holds both copies
  // at once, which for a large method would be much of the instrumenter's peak memory.
  void reserve(size_t labels, size_t bytes);
  int new_label();
  void mark(int label);
  // Catch-all coverage of the code emitted from now on (0: not covered).
  void set_region(uint8_t region) { region_ = region; }

  void u1(uint8_t v);
  void u2(uint16_t v);
  void bytes(std::span<const uint8_t> b);
  // goto, jsr or a conditional branch; fallthrough_ref is reported by inverted_branches().
  void branch(uint8_t opcode, int target, int fallthrough_ref = -1);
  void tableswitch(int default_target, int32_t low, int32_t high, std::vector<int> targets);
  void lookupswitch(int default_target, std::vector<int32_t> keys, std::vector<int> targets);

  // Assigns offsets, widening branches until every branch reaches its target. Returns the code
  // length (may exceed 65535; the caller decides).
  uint32_t layout();
  uint32_t position(int label) const { return label_positions_[label]; }
  std::vector<uint8_t> emit() const;

  struct InvertedBranch {
    uint32_t resume_offset;  // just after the goto_w: the fall-through path continues here
    int fallthrough_ref;
  };
  std::vector<InvertedBranch> inverted_branches() const;

  struct Region {
    uint32_t start;
    uint32_t end;
    uint8_t region;
  };
  // Maximal runs of non-zero regions, in code order.
  std::vector<Region> regions() const;

 private:
  enum class Kind : uint8_t { kBytes, kBranch, kSwitch };
  // A run of bytes, a branch or a switch. A large method has tens of thousands, so an item is
  // small: a run's bytes live in bytes_, a switch's operands in switches_, and a label is not an
  // item but a place in one (so it does not split a run).
  struct Item {
    Kind kind = Kind::kBytes;
    uint8_t region = 0;
    uint8_t opcode = 0;
    bool widened = false;
    int target = -1;      // branch target or switch default (label)
    int ref = -1;         // kBranch: fallthrough_ref
    uint32_t data = 0;    // kBytes: start in bytes_; kSwitch: index in switches_
    uint32_t length = 0;  // kBytes
    uint32_t offset = 0;
  };
  struct Switch {
    int32_t low = 0, high = 0;
    std::vector<int32_t> keys;
    std::vector<int> targets;
  };
  // Where a label was marked: `delta` bytes into items_[item] (item == items_.size(): the end).
  struct Place {
    uint32_t item = 0;
    uint32_t delta = 0;
  };
  uint32_t size_at(const Item& item, uint32_t offset) const;
  Item& bytes_item();

  std::vector<Item> items_;
  std::vector<uint8_t> bytes_;
  std::vector<Switch> switches_;
  std::vector<Place> label_places_;
  std::vector<uint32_t> label_positions_;  // by layout()
  uint8_t region_ = 0;
};

}  // namespace bci
