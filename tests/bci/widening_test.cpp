// SPDX-License-Identifier: Apache-2.0
// Branch widening: CodeBuilder layout, and instrumented methods whose branches grow out of range.
#include <gtest/gtest.h>

#include "bci.h"
#include "class_builder.h"
#include "code_builder.h"
#include "simulator.h"
#include "test_support.h"

namespace bcitest {
namespace {

using namespace bci;

int32_t s4(const std::vector<uint8_t>& c, size_t at) {
  return static_cast<int32_t>(uint32_t{c[at]} << 24 | uint32_t{c[at + 1]} << 16 |
                              uint32_t{c[at + 2]} << 8 | c[at + 3]);
}
int16_t s2(const std::vector<uint8_t>& c, size_t at) {
  return static_cast<int16_t>(c[at] << 8 | c[at + 1]);
}

TEST(CodeBuilder, ShortBranchesStayShort) {
  CodeBuilder b;
  int l = b.new_label();
  b.branch(op::kGoto, l);
  b.bytes(std::vector<uint8_t>(32764, op::kNop));
  b.mark(l);
  b.u1(op::kReturn);
  EXPECT_EQ(b.layout(), 3u + 32764 + 1);
  auto code = b.emit();
  EXPECT_EQ(code[0], op::kGoto);
  EXPECT_EQ(s2(code, 1), 32767);
}

TEST(CodeBuilder, GotoAndJsrWiden) {
  CodeBuilder b;
  int l = b.new_label();
  b.branch(op::kGoto, l);
  b.branch(op::kJsr, l);
  b.bytes(std::vector<uint8_t>(40000, op::kNop));
  b.mark(l);
  b.u1(op::kReturn);
  EXPECT_EQ(b.layout(), 5u + 5 + 40000 + 1);
  auto code = b.emit();
  EXPECT_EQ(code[0], op::kGotoW);
  EXPECT_EQ(s4(code, 1), 40010);
  EXPECT_EQ(code[5], op::kJsrW);
  EXPECT_EQ(s4(code, 6), 40005);
  EXPECT_TRUE(b.inverted_branches().empty());
}

TEST(CodeBuilder, ConditionalBranchBecomesInvertedBranchOverGotoW) {
  CodeBuilder b;
  int forward = b.new_label(), back = b.new_label();
  b.mark(back);
  b.u1(op::kIload0);
  b.branch(op::kIfeq, forward, 7);
  b.bytes(std::vector<uint8_t>(33000, op::kNop));
  b.u1(op::kIload0);
  b.branch(op::kIfnonnull, back, 9);
  b.mark(forward);
  b.u1(op::kReturn);
  uint32_t length = b.layout();
  EXPECT_EQ(length, 1u + 8 + 33000 + 1 + 8 + 1);
  auto code = b.emit();
  EXPECT_EQ(code[1], op::kIfne);
  EXPECT_EQ(s2(code, 2), 8);
  EXPECT_EQ(code[4], op::kGotoW);
  EXPECT_EQ(4 + s4(code, 5), static_cast<int32_t>(length - 1));
  size_t second = 1 + 8 + 33000 + 1;
  EXPECT_EQ(code[second], op::kIfnull);
  EXPECT_EQ(s2(code, second + 1), 8);
  EXPECT_EQ(code[second + 3], op::kGotoW);
  EXPECT_EQ(static_cast<int32_t>(second + 3) + s4(code, second + 4), 0);
  auto inverted = b.inverted_branches();
  ASSERT_EQ(inverted.size(), 2u);
  EXPECT_EQ(inverted[0].resume_offset, 9u);
  EXPECT_EQ(inverted[0].fallthrough_ref, 7);
  EXPECT_EQ(inverted[1].resume_offset, second + 8);
  EXPECT_EQ(inverted[1].fallthrough_ref, 9);
}

TEST(CodeBuilder, SwitchPaddingFollowsPosition) {
  for (uint32_t before = 0; before < 4; ++before) {
    CodeBuilder b;
    int l = b.new_label();
    b.bytes(std::vector<uint8_t>(before, op::kNop));
    b.u1(op::kIload0);
    b.tableswitch(l, 1, 2, {l, l});
    b.mark(l);
    b.u1(op::kReturn);
    uint32_t at = before + 1;
    uint32_t padding = (4 - (at + 1) % 4) % 4;
    EXPECT_EQ(b.layout(), at + 1 + padding + 12 + 8 + 1);
    auto code = b.emit();
    EXPECT_EQ(code[at], op::kTableswitch);
    EXPECT_EQ(s4(code, at + 1 + padding), static_cast<int32_t>(1 + padding + 20));
  }
}

// iload_0; ifeq END; n x iinc 0 1; END: iload_0; ireturn - with a frame at END. Instruction hooks
// push the ifeq past 32 KiB, so it becomes ifne +8; goto_w with a new frame after the goto_w.
TEST(Widening, InstrumentedConditionalBranchGetsFrame) {
  const size_t n = 3000;
  TestMethod m;
  m.code = {op::kIload0, op::kIfeq, 0, 0};
  for (size_t i = 0; i < n; ++i) m.code.insert(m.code.end(), {op::kIinc, 0, 1});
  uint16_t end = static_cast<uint16_t>(m.code.size());
  m.code[2] = static_cast<uint8_t>((end - 1) >> 8);
  m.code[3] = static_cast<uint8_t>(end - 1);
  m.code.insert(m.code.end(), {op::kIload0, op::kIreturn});
  m.frames = {{0, end, {{kInteger, 0}}, {}}};
  ClassFile original = make_class({m});
  InjectionOptions o = all_hooks("T", 3);
  o.entry_with_receiver = false;
  InjectionResult r = instrument(write_class(original), o);
  ASSERT_TRUE(r.changed);
  ASSERT_TRUE(r.methods[0].instruction_hooks);

  ClassFile cf = parse_class(r.class_bytes);
  CodeAttribute code = parse_code(*cf.find_attribute(cf.methods[0], "Code"), cf.cp, false);
  auto instructions = decode_instructions(code, cf.cp);
  EXPECT_GT(code.code.size(), 32768u);
  // The original ifeq jumps to an instructionIf stub after the body: far away.
  const Instruction* inverted = nullptr;
  for (size_t i = 0; i + 1 < instructions.size(); ++i) {
    if (instructions[i].opcode == op::kIfne && instructions[i + 1].opcode == op::kGotoW) {
      inverted = &instructions[i];
    }
  }
  ASSERT_NE(inverted, nullptr);
  EXPECT_EQ(inverted->target, static_cast<int32_t>(inverted->offset + 8));
  const Instruction& goto_w = *(inverted + 1);
  EXPECT_GT(goto_w.target, static_cast<int32_t>(code.code.size() / 2));

  Attribute* smt = nullptr;
  for (auto& a : code.attributes) {
    if (cf.cp.utf8(a.name_index) == "StackMapTable") smt = &a;
  }
  ASSERT_NE(smt, nullptr);
  auto initial = initial_locals(cf.cp, cf.this_class, true, false, "(I)I");
  auto frames = parse_stack_map(*smt, cf.cp, initial, static_cast<uint32_t>(code.code.size()));
  bool frame_after_goto_w = false, frame_at_stub = false;
  for (const Frame& f : frames) {
    if (f.offset == inverted->offset + 8) {
      frame_after_goto_w = true;
      EXPECT_EQ(f.locals, (std::vector<VType>{{kInteger, 0}}));
      EXPECT_TRUE(f.stack.empty());
    }
    if (static_cast<int32_t>(f.offset) == goto_w.target) frame_at_stub = true;
  }
  EXPECT_TRUE(frame_after_goto_w);
  EXPECT_TRUE(frame_at_stub);
  // Nothing in the original body can throw, so there is no exceptional-exit handler.
  EXPECT_TRUE(code.exceptions.empty());
}

TEST(Widening, TestProgramMethodsNearTheLimit) {
  auto bytes = read_file(java_classes_dir() / "bciprog/BigMethods.class");
  ASSERT_FALSE(bytes.empty());
  InjectionResult r = instrument(bytes, all_hooks("T", 1));
  for (const auto& m : r.methods) {
    if (m.name == "medium") {
      EXPECT_TRUE(m.instruction_hooks);  // grows past 32 KiB, stays under 64 KiB
    } else if (m.name == "big") {
      EXPECT_TRUE(m.instrumented);
      EXPECT_FALSE(m.instruction_hooks);  // would exceed 64 KiB
    }
  }
  ClassFile cf = parse_class(r.class_bytes);
  for (Member& m : cf.methods) {
    CodeAttribute code = parse_code(*cf.find_attribute(m, "Code"), cf.cp, false);
    EXPECT_LE(code.code.size(), 65535u);
    if (cf.member_name(m) == "medium") {
      EXPECT_GT(code.code.size(), 32768u);
      size_t goto_w = 0;
      for (const auto& in : decode_instructions(code, cf.cp)) goto_w += in.opcode == op::kGotoW;
      EXPECT_GT(goto_w, 0u);
    }
  }
}

}  // namespace
}  // namespace bcitest
