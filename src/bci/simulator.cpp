// SPDX-License-Identifier: Apache-2.0
#include "simulator.h"

#include <algorithm>

namespace bci {

namespace {

VType type_of(char c) {
  switch (c) {
    case 'J':
      return {kLong, 0};
    case 'D':
      return {kDouble, 0};
    case 'F':
      return {kFloat, 0};
    default:
      return {kInteger, 0};
  }
}

bool has_uninit_this(const std::vector<VType>& v) {
  return std::any_of(v.begin(), v.end(),
                     [](const VType& t) { return t.tag == kUninitializedThis; });
}

}  // namespace

std::vector<VType> to_slots(const std::vector<VType>& entries) {
  std::vector<VType> slots;
  for (const auto& t : entries) {
    slots.push_back(t);
    if (t.wide()) slots.push_back({kTop, 0});
  }
  return slots;
}

std::vector<VType> to_entries(const std::vector<VType>& slots, bool trim_trailing_top) {
  std::vector<VType> entries;
  for (size_t i = 0; i < slots.size(); ++i) {
    entries.push_back(slots[i]);
    if (slots[i].wide()) ++i;
  }
  if (trim_trailing_top) {
    while (!entries.empty() && entries.back().tag == kTop) entries.pop_back();
  }
  return entries;
}

Simulator::Simulator(ConstantPool& cp, uint16_t this_class, const CodeAttribute& code,
                     const std::vector<Instruction>& instructions, const std::vector<Frame>& frames,
                     const std::vector<VType>& initial)
    : cp_(cp),
      this_class_(this_class),
      code_(code),
      instructions_(instructions),
      frames_(frames),
      initial_(initial),
      index_of_offset_(code.code.size(), -1),
      uninit_before_(instructions.size(), false),
      initializes_this_(instructions.size(), false),
      fallthrough_(instructions.size()) {
  for (size_t i = 0; i < instructions.size(); ++i) {
    index_of_offset_[instructions[i].offset] = static_cast<int32_t>(i);
  }
}

void Simulator::push(SlotState& s, VType t) {
  s.stack.push_back(t);
  if (t.wide()) s.stack.push_back({kTop, 0});
}

VType Simulator::object(std::string_view name) {
  return {kObject, cp_.add_class(name)};
}

void Simulator::push_type(SlotState& s, std::string_view d) {
  if (d.empty()) throw SimulationError("empty type descriptor");
  if (d[0] == 'V') return;
  if (d[0] == 'L') {
    if (d.size() < 3 || d.back() != ';') throw SimulationError("bad type descriptor");
    push(s, object(d.substr(1, d.size() - 2)));
  } else if (d[0] == '[') {
    push(s, object(d));
  } else {
    push(s, type_of(d[0]));
  }
}

VType Simulator::pop(SlotState& s) {
  if (s.stack.empty()) throw SimulationError("stack underflow");
  VType t = s.stack.back();
  s.stack.pop_back();
  return t;
}

void Simulator::pop_n(SlotState& s, size_t n) {
  if (s.stack.size() < n) throw SimulationError("stack underflow");
  s.stack.resize(s.stack.size() - n);
}

void Simulator::store(SlotState& s, uint16_t index, VType t) {
  size_t need = index + (t.wide() ? 2u : 1u);
  if (need > s.locals.size()) throw SimulationError("local index beyond max_locals");
  if (index > 0 && s.locals[index - 1].wide()) s.locals[index - 1] = {kTop, 0};
  s.locals[index] = t;
  if (t.wide()) {
    s.locals[index + 1] = {kTop, 0};
  } else if (index + 1u < s.locals.size() && s.locals[index].wide()) {
    s.locals[index + 1] = {kTop, 0};
  }
}

VType Simulator::load(const SlotState& s, uint16_t index, bool) {
  if (index >= s.locals.size()) throw SimulationError("local index beyond max_locals");
  return s.locals[index];
}

VType Simulator::array_component(VType array) {
  if (array.tag == kNull) return array;
  if (array.tag != kObject) throw SimulationError("aaload on a non-array");
  const std::string& name = cp_.class_name(array.data);
  if (name.size() < 2 || name[0] != '[') throw SimulationError("aaload on a non-array");
  std::string_view component(name.data() + 1, name.size() - 1);
  if (component[0] == 'L') return object(component.substr(1, component.size() - 2));
  if (component[0] == '[') return object(component);
  throw SimulationError("aaload on a primitive array");
}

void Simulator::step(const Instruction& in, SlotState& s) {
  const uint8_t o = in.opcode;
  auto member_descriptor = [&](uint16_t ref) -> const std::string& {
    const CpEntry& nat = cp_.entries[cp_.entries[ref].ref2];
    return cp_.utf8(nat.ref2);
  };
  if (o == op::kNop || o == op::kIinc || o == op::kGoto || o == op::kGotoW) return;
  if (o == op::kAconstNull) return push(s, {kNull, 0});
  if (o >= 2 && o <= 8) return push(s, {kInteger, 0});
  if (o == 9 || o == 10) return push(s, {kLong, 0});
  if (o >= 11 && o <= 13) return push(s, {kFloat, 0});
  if (o == 14 || o == 15) return push(s, {kDouble, 0});
  if (o == op::kBipush || o == op::kSipush) return push(s, {kInteger, 0});
  if (o == op::kLdc || o == op::kLdcW || o == op::kLdc2W) {
    const CpEntry& e = cp_.entries[in.index];
    switch (e.tag) {
      case kCpInteger:
        return push(s, {kInteger, 0});
      case kCpFloat:
        return push(s, {kFloat, 0});
      case kCpLong:
        return push(s, {kLong, 0});
      case kCpDouble:
        return push(s, {kDouble, 0});
      case kCpString:
        return push(s, object("java/lang/String"));
      case kCpClass:
        return push(s, object("java/lang/Class"));
      case kCpMethodType:
        return push(s, object("java/lang/invoke/MethodType"));
      case kCpMethodHandle:
        return push(s, object("java/lang/invoke/MethodHandle"));
      case kCpDynamic:
        return push_type(s, cp_.utf8(cp_.entries[e.ref2].ref2));
      default:
        throw SimulationError("bad ldc constant");
    }
  }
  if (o >= 21 && o <= 45) {
    uint16_t index;
    int kind;  // 0 int, 1 long, 2 float, 3 double, 4 reference
    if (o <= 25) {
      index = in.index;
      kind = o - 21;
    } else {
      index = static_cast<uint16_t>((o - 26) % 4);
      kind = (o - 26) / 4;
    }
    static constexpr VType kinds[] = {{kInteger, 0}, {kLong, 0}, {kFloat, 0}, {kDouble, 0}};
    if (kind < 4) return push(s, kinds[kind]);
    return push(s, load(s, index, false));
  }
  if (o >= 46 && o <= 53) {
    if (o == 50) {
      pop(s);
      VType array = pop(s);
      return push(s, array_component(array));
    }
    pop_n(s, 2);
    static constexpr VType results[] = {{kInteger, 0}, {kLong, 0},    {kFloat, 0},   {kDouble, 0},
                                        {kTop, 0},     {kInteger, 0}, {kInteger, 0}, {kInteger, 0}};
    return push(s, results[o - 46]);
  }
  if (o >= 54 && o <= 78) {
    uint16_t index;
    if (o <= 58) {
      index = in.index;
    } else {
      index = static_cast<uint16_t>((o - 59) % 4);
    }
    int kind = o <= 58 ? o - 54 : (o - 59) / 4;
    VType t;
    if (kind == 1 || kind == 3) {
      pop(s);
      t = pop(s);
    } else {
      t = pop(s);
    }
    if (kind == 4 && t.tag != kObject && t.tag != kNull && t.tag != kUninitialized &&
        t.tag != kUninitializedThis) {
      throw SimulationError("astore of a non-reference (returnAddress?)");
    }
    return store(s, index, t);
  }
  if (o >= 79 && o <= 86) return pop_n(s, (o == 80 || o == 82) ? 4 : 3);
  switch (o) {
    case 87:  // pop
      return pop_n(s, 1);
    case 88:  // pop2
      return pop_n(s, 2);
    case 89: {  // dup
      VType a = pop(s);
      s.stack.push_back(a);
      s.stack.push_back(a);
      return;
    }
    case 90: {  // dup_x1
      VType a = pop(s), b = pop(s);
      s.stack.insert(s.stack.end(), {a, b, a});
      return;
    }
    case 91: {  // dup_x2
      VType a = pop(s), b = pop(s), c = pop(s);
      s.stack.insert(s.stack.end(), {a, c, b, a});
      return;
    }
    case 92: {  // dup2
      VType a = pop(s), b = pop(s);
      s.stack.insert(s.stack.end(), {b, a, b, a});
      return;
    }
    case 93: {  // dup2_x1
      VType a = pop(s), b = pop(s), c = pop(s);
      s.stack.insert(s.stack.end(), {b, a, c, b, a});
      return;
    }
    case 94: {  // dup2_x2
      VType a = pop(s), b = pop(s), c = pop(s), d = pop(s);
      s.stack.insert(s.stack.end(), {b, a, d, c, b, a});
      return;
    }
    case 95: {  // swap
      VType a = pop(s), b = pop(s);
      s.stack.insert(s.stack.end(), {a, b});
      return;
    }
    default:
      break;
  }
  if (o >= 96 && o <= 115) {
    int kind = (o - 96) % 4;
    static constexpr VType results[] = {{kInteger, 0}, {kLong, 0}, {kFloat, 0}, {kDouble, 0}};
    pop_n(s, (kind == 1 || kind == 3) ? 4 : 2);
    return push(s, results[kind]);
  }
  if (o >= 116 && o <= 119) {
    int kind = o - 116;
    static constexpr VType results[] = {{kInteger, 0}, {kLong, 0}, {kFloat, 0}, {kDouble, 0}};
    pop_n(s, (kind == 1 || kind == 3) ? 2 : 1);
    return push(s, results[kind]);
  }
  if (o >= 120 && o <= 125) {  // shifts: value, int amount
    bool is_long = (o - 120) % 2 == 1;
    pop_n(s, is_long ? 3 : 2);
    return push(s, is_long ? VType{kLong, 0} : VType{kInteger, 0});
  }
  if (o >= 126 && o <= 131) {
    bool is_long = (o - 126) % 2 == 1;
    pop_n(s, is_long ? 4 : 2);
    return push(s, is_long ? VType{kLong, 0} : VType{kInteger, 0});
  }
  if (o >= 133 && o <= 147) {
    // Conversions: operand size and result type.
    static constexpr uint8_t operand[] = {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 1, 1, 1};
    static constexpr uint8_t result[] = {kLong,   kFloat,   kDouble,  kInteger, kFloat,
                                         kDouble, kInteger, kLong,    kDouble,  kInteger,
                                         kLong,   kFloat,   kInteger, kInteger, kInteger};
    pop_n(s, operand[o - 133]);
    return push(s, {result[o - 133], 0});
  }
  if (o >= 148 && o <= 152) {
    pop_n(s, (o == 148 || o == 151 || o == 152) ? 4 : 2);
    return push(s, {kInteger, 0});
  }
  if (o >= 153 && o <= 158) return pop_n(s, 1);
  if (o >= 159 && o <= 166) return pop_n(s, 2);
  switch (o) {
    case op::kJsr:
    case op::kJsrW:
    case op::kRet:
      throw SimulationError("jsr/ret cannot be typed with stack maps");
    case op::kTableswitch:
    case op::kLookupswitch:
    case op::kIfnull:
    case op::kIfnonnull:
    case op::kMonitorenter:
    case op::kMonitorexit:
      return pop_n(s, 1);
    case op::kGetstatic:
      return push_type(s, member_descriptor(in.index));
    case op::kPutstatic: {
      const std::string& d = member_descriptor(in.index);
      return pop_n(s, (d == "J" || d == "D") ? 2 : 1);
    }
    case op::kGetfield:
      pop(s);
      return push_type(s, member_descriptor(in.index));
    case op::kPutfield: {
      const std::string& d = member_descriptor(in.index);
      return pop_n(s, (d == "J" || d == "D") ? 3 : 2);
    }
    case op::kInvokevirtual:
    case op::kInvokespecial:
    case op::kInvokestatic:
    case op::kInvokeinterface:
    case op::kInvokedynamic: {
      const std::string& d = member_descriptor(in.index);
      int args = descriptor_argument_slots(d);
      if (args < 0) throw SimulationError("bad method descriptor");
      pop_n(s, static_cast<size_t>(args));
      if (o != op::kInvokestatic && o != op::kInvokedynamic) {
        VType receiver = pop(s);
        const CpEntry& nat = cp_.entries[cp_.entries[in.index].ref2];
        if (o == op::kInvokespecial && cp_.utf8(nat.ref1) == "<init>") {
          VType initialized;
          if (receiver.tag == kUninitializedThis) {
            initialized = {kObject, this_class_};
          } else if (receiver.tag == kUninitialized) {
            int32_t at = index_of_offset_[receiver.data];
            if (at < 0 || instructions_[at].opcode != op::kNew) {
              throw SimulationError("uninitialized type without new");
            }
            initialized = {kObject, instructions_[at].index};
          } else {
            throw SimulationError("<init> on an initialized object");
          }
          for (auto* v : {&s.locals, &s.stack}) {
            for (auto& t : *v) {
              if (t == receiver) t = initialized;
            }
          }
        }
      }
      return push_type(s, std::string_view(d).substr(d.find(')') + 1));
    }
    case op::kNew:
      return push(s, {kUninitialized, static_cast<uint16_t>(in.offset)});
    case op::kNewarray: {
      static constexpr const char* names[] = {"[Z", "[C", "[F", "[D", "[B", "[S", "[I", "[J"};
      pop(s);
      return push(s, object(names[in.operand - 4]));
    }
    case op::kAnewarray: {
      pop(s);
      const std::string& name = cp_.class_name(in.index);
      return push(s, object(name[0] == '[' ? "[" + name : "[L" + name + ";"));
    }
    case op::kArraylength:
    case op::kInstanceof:
      pop(s);
      return push(s, {kInteger, 0});
    case op::kCheckcast:
      pop(s);
      return push(s, {kObject, in.index});
    case op::kMultianewarray:
      pop_n(s, in.operand);
      return push(s, {kObject, in.index});
    case op::kAthrow:
    case op::kIreturn:
    case op::kIreturn + 1:
    case op::kIreturn + 2:
    case op::kIreturn + 3:
    case op::kIreturn + 4:
    case op::kReturn:
      return;
    default:
      throw SimulationError("unexpected opcode " + std::to_string(o));
  }
}

void Simulator::run() {
  SlotState s;
  s.locals = to_slots(initial_);
  if (s.locals.size() > code_.max_locals) throw SimulationError("arguments exceed max_locals");
  s.locals.resize(code_.max_locals, {kTop, 0});
  bool uninit = has_uninit_this(s.locals);
  bool known = true;
  size_t next_frame = 0;
  for (size_t i = 0; i < instructions_.size(); ++i) {
    const Instruction& in = instructions_[i];
    while (next_frame < frames_.size() && frames_[next_frame].offset < in.offset) ++next_frame;
    if (next_frame < frames_.size() && frames_[next_frame].offset == in.offset) {
      const Frame& f = frames_[next_frame];
      s.locals = to_slots(f.locals);
      if (s.locals.size() > code_.max_locals) throw SimulationError("frame exceeds max_locals");
      s.locals.resize(code_.max_locals, {kTop, 0});
      s.stack = to_slots(f.stack);
      uninit = has_uninit_this(s.locals);
      known = true;
    }
    uninit_before_[i] = known && uninit;
    if (!known) continue;  // dead code the verifier never reaches
    const CpEntry* invoked = nullptr;
    if (in.opcode == op::kInvokespecial) invoked = &cp_.entries[in.index];
    bool receiver_is_this = false;
    if (invoked) {
      const CpEntry& nat = cp_.entries[invoked->ref2];
      int args = descriptor_argument_slots(cp_.utf8(nat.ref2));
      if (cp_.utf8(nat.ref1) == "<init>" && args >= 0 &&
          s.stack.size() > static_cast<size_t>(args)) {
        receiver_is_this = s.stack[s.stack.size() - args - 1].tag == kUninitializedThis;
      }
    }
    step(in, s);
    if (receiver_is_this) {
      uninit = false;
      initializes_this_[i] = true;
    }
    if (is_conditional_branch(in.opcode)) fallthrough_[i] = s;
    uint8_t o = in.opcode;
    if (o == op::kGoto || o == op::kGotoW || o == op::kAthrow || is_return(o) ||
        o == op::kTableswitch || o == op::kLookupswitch) {
      known = false;
    }
  }
}

Frame Simulator::fallthrough_frame(size_t instruction) const {
  const auto& s = fallthrough_[instruction];
  if (!s) throw SimulationError("no simulated state after branch");
  Frame f;
  f.offset = instructions_[instruction].offset + instructions_[instruction].length;
  f.locals = to_entries(s->locals, true);
  f.stack = to_entries(s->stack, false);
  return f;
}

}  // namespace bci
