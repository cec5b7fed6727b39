// SPDX-License-Identifier: Apache-2.0
// The Code attribute and the attributes inside it that refer to code offsets: instruction
// decoding, exception table, LineNumberTable, LocalVariable(Type)Table and StackMapTable.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "class_file.h"

namespace bci {

namespace op {
enum : uint8_t {
  kNop = 0,
  kAconstNull = 1,
  kIconstM1 = 2,
  kIconst0 = 3,
  kIconst1 = 4,
  kIconst5 = 8,
  kBipush = 16,
  kSipush = 17,
  kLdc = 18,
  kLdcW = 19,
  kLdc2W = 20,
  kIload = 21,
  kIload0 = 26,
  kAload = 25,
  kAload0 = 42,
  kIstore = 54,
  kAstore = 58,
  kPop = 87,
  kIadd = 96,
  kIshl = 120,
  kDup = 89,
  kIinc = 132,
  kIfeq = 153,
  kIfne = 154,
  kIfle = 158,
  kIfIcmpeq = 159,
  kIfAcmpne = 166,
  kGoto = 167,
  kJsr = 168,
  kRet = 169,
  kTableswitch = 170,
  kLookupswitch = 171,
  kIreturn = 172,
  kReturn = 177,
  kGetstatic = 178,
  kPutstatic = 179,
  kGetfield = 180,
  kPutfield = 181,
  kInvokevirtual = 182,
  kInvokespecial = 183,
  kInvokestatic = 184,
  kInvokeinterface = 185,
  kInvokedynamic = 186,
  kNew = 187,
  kNewarray = 188,
  kAnewarray = 189,
  kArraylength = 190,
  kAthrow = 191,
  kCheckcast = 192,
  kInstanceof = 193,
  kMonitorenter = 194,
  kMonitorexit = 195,
  kWide = 196,
  kMultianewarray = 197,
  kIfnull = 198,
  kIfnonnull = 199,
  kGotoW = 200,
  kJsrW = 201,
};
}  // namespace op

inline bool is_conditional_branch(uint8_t opcode) {
  return (opcode >= op::kIfeq && opcode <= op::kIfAcmpne) || opcode == op::kIfnull ||
         opcode == op::kIfnonnull;
}
inline bool is_branch(uint8_t opcode) {
  return is_conditional_branch(opcode) || opcode == op::kGoto || opcode == op::kJsr ||
         opcode == op::kGotoW || opcode == op::kJsrW;
}
inline bool is_return(uint8_t opcode) {
  return opcode >= op::kIreturn && opcode <= op::kReturn;
}
// The opcode of the branch taken exactly when `opcode`'s branch is not.
uint8_t inverted_branch(uint8_t opcode);

struct SwitchOperands {
  int32_t low = 0;  // tableswitch
  int32_t high = 0;
  std::vector<int32_t> keys;     // lookupswitch
  std::vector<int32_t> targets;  // absolute targets
};

// Kept small (a large method has tens of thousands): a switch's operands are held apart.
struct Instruction {
  uint32_t offset = 0;
  uint32_t length = 0;
  uint8_t opcode = 0;
  bool wide = false;
  uint16_t index = 0;   // constant-pool index, or local variable index
  uint8_t operand = 0;  // newarray type, multianewarray dimensions
  int32_t target = -1;  // branches: absolute target; switches: default target
  std::shared_ptr<const SwitchOperands> switch_operands;  // tableswitch and lookupswitch
};

struct ExceptionEntry {
  uint16_t start_pc = 0;
  uint16_t end_pc = 0;
  uint16_t handler_pc = 0;
  uint16_t catch_type = 0;
};

struct CodeAttribute {
  uint16_t max_stack = 0;
  uint16_t max_locals = 0;
  std::vector<uint8_t> code;
  size_t code_file_offset = 0;
  std::vector<ExceptionEntry> exceptions;
  std::vector<Attribute> attributes;
};

CodeAttribute parse_code(const Attribute& attribute, const ConstantPool& cp, bool legacy_layout);
std::vector<uint8_t> write_code(const CodeAttribute& code, bool legacy_layout);

// Decodes every instruction and checks operands, constant-pool references and that branch and
// exception-table targets are instruction starts. Throws ClassFormatError.
std::vector<Instruction> decode_instructions(const CodeAttribute& code, const ConstantPool& cp);

struct LineNumber {
  uint16_t start_pc = 0;
  uint16_t line = 0;
};
std::vector<LineNumber> parse_line_numbers(const Attribute& a);
std::vector<uint8_t> write_line_numbers(const std::vector<LineNumber>& lines);

struct LocalVariable {
  uint16_t start_pc = 0;
  uint16_t length = 0;
  uint16_t name_index = 0;
  uint16_t descriptor_index = 0;  // signature for LocalVariableTypeTable
  uint16_t index = 0;
};
std::vector<LocalVariable> parse_local_variables(const Attribute& a);
std::vector<uint8_t> write_local_variables(const std::vector<LocalVariable>& vars);

// Verification types of the StackMapTable.
enum VTag : uint8_t {
  kTop = 0,
  kInteger = 1,
  kFloat = 2,
  kDouble = 3,
  kLong = 4,
  kNull = 5,
  kUninitializedThis = 6,
  kObject = 7,
  kUninitialized = 8,
};

struct VType {
  uint8_t tag = kTop;
  uint16_t data = 0;  // Object: Class constant index; Uninitialized: offset of the `new`

  bool operator==(const VType&) const = default;
  bool wide() const { return tag == kLong || tag == kDouble; }
};

// One stack map frame with the full state it describes. locals and stack use the class-file
// representation: a long or double is a single entry.
struct Frame {
  uint8_t frame_type = 255;  // as read; write_stack_map can reuse it for an exact copy
  uint32_t offset = 0;
  std::vector<VType> locals;
  std::vector<VType> stack;
};

// The implicit frame at offset 0, derived from the method descriptor.
std::vector<VType> initial_locals(ConstantPool& cp, uint16_t this_class, bool is_static,
                                  bool is_init, const std::string& descriptor);

std::vector<Frame> parse_stack_map(const Attribute& a, const ConstantPool& cp,
                                   const std::vector<VType>& initial, uint32_t code_length);
// Encodes frames (sorted by offset, unique). keep_frame_types: reuse each frame's frame_type
// (round trip); otherwise the most compact encoding is chosen.
std::vector<uint8_t> write_stack_map(const std::vector<Frame>& frames,
                                     const std::vector<VType>& initial, const ConstantPool& cp,
                                     bool keep_frame_types);

// Type names equal even when the pool holds duplicate Class constants.
bool same_vtype(const VType& a, const VType& b, const ConstantPool& cp);

}  // namespace bci
