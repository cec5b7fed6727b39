// SPDX-License-Identifier: Apache-2.0
#include "code.h"

#include "byte_io.h"

namespace bci {

namespace {

// Instruction lengths; 0 marks an invalid opcode, -1 a variable-length one.
constexpr int8_t kLengths[256] = {
    1, 1, 1, 1, 1,  1, 1, 1, 1, 1, 1,  1,  1, 1, 1, 1,  // 0-15
    2, 3, 2, 3, 3,  2, 2, 2, 2, 2, 1,  1,  1, 1, 1, 1,  // 16-31
    1, 1, 1, 1, 1,  1, 1, 1, 1, 1, 1,  1,  1, 1, 1, 1,  // 32-47
    1, 1, 1, 1, 1,  1, 2, 2, 2, 2, 2,  1,  1, 1, 1, 1,  // 48-63
    1, 1, 1, 1, 1,  1, 1, 1, 1, 1, 1,  1,  1, 1, 1, 1,  // 64-79
    1, 1, 1, 1, 1,  1, 1, 1, 1, 1, 1,  1,  1, 1, 1, 1,  // 80-95
    1, 1, 1, 1, 1,  1, 1, 1, 1, 1, 1,  1,  1, 1, 1, 1,  // 96-111
    1, 1, 1, 1, 1,  1, 1, 1, 1, 1, 1,  1,  1, 1, 1, 1,  // 112-127
    1, 1, 1, 1, 3,  1, 1, 1, 1, 1, 1,  1,  1, 1, 1, 1,  // 128-143
    1, 1, 1, 1, 1,  1, 1, 1, 1, 3, 3,  3,  3, 3, 3, 3,  // 144-159
    3, 3, 3, 3, 3,  3, 3, 3, 3, 2, -1, -1, 1, 1, 1, 1,  // 160-175
    1, 1, 3, 3, 3,  3, 3, 3, 3, 5, 5,  3,  2, 3, 1, 1,  // 176-191
    3, 3, 1, 1, -1, 4, 3, 3, 5, 5,                      // 192-201
};

int32_t s4(const std::vector<uint8_t>& c, size_t at) {
  return static_cast<int32_t>(static_cast<uint32_t>(c[at]) << 24 |
                              static_cast<uint32_t>(c[at + 1]) << 16 |
                              static_cast<uint32_t>(c[at + 2]) << 8 | c[at + 3]);
}

uint16_t u2at(const std::vector<uint8_t>& c, size_t at) {
  return static_cast<uint16_t>(c[at] << 8 | c[at + 1]);
}

bool is_class_ref(const ConstantPool& cp, uint16_t i) {
  return cp.valid(i, kCpClass);
}

void check_cp_operand(const Instruction& in, const ConstantPool& cp, size_t base) {
  auto fail = [&](const char* what) {
    throw ClassFormatError(
        std::string("bad constant pool index ") + std::to_string(in.index) + " for " + what,
        base + in.offset);
  };
  switch (in.opcode) {
    case op::kLdc:
    case op::kLdcW: {
      if (in.index == 0 || in.index >= cp.size()) fail("ldc");
      uint8_t t = cp.entries[in.index].tag;
      if (t != kCpInteger && t != kCpFloat && t != kCpString && t != kCpClass &&
          t != kCpMethodHandle && t != kCpMethodType && t != kCpDynamic) {
        fail("ldc");
      }
      break;
    }
    case op::kLdc2W: {
      if (in.index == 0 || in.index >= cp.size()) fail("ldc2_w");
      uint8_t t = cp.entries[in.index].tag;
      if (t != kCpLong && t != kCpDouble && t != kCpDynamic) fail("ldc2_w");
      break;
    }
    case op::kGetstatic:
    case op::kPutstatic:
    case op::kGetfield:
    case op::kPutfield:
      if (!cp.valid(in.index, kCpFieldref)) fail("field access");
      break;
    case op::kInvokevirtual:
      if (!cp.valid(in.index, kCpMethodref)) fail("invokevirtual");
      break;
    case op::kInvokespecial:
    case op::kInvokestatic:
      if (!cp.valid(in.index, kCpMethodref) && !cp.valid(in.index, kCpInterfaceMethodref)) {
        fail("invoke");
      }
      break;
    case op::kInvokeinterface:
      if (!cp.valid(in.index, kCpInterfaceMethodref)) fail("invokeinterface");
      break;
    case op::kInvokedynamic:
      if (!cp.valid(in.index, kCpInvokeDynamic)) fail("invokedynamic");
      break;
    case op::kNew:
    case op::kAnewarray:
    case op::kCheckcast:
    case op::kInstanceof:
    case op::kMultianewarray:
      if (!is_class_ref(cp, in.index)) fail("class operand");
      break;
    default:
      break;
  }
}

}  // namespace

uint8_t inverted_branch(uint8_t opcode) {
  if (opcode == op::kIfnull) return op::kIfnonnull;
  if (opcode == op::kIfnonnull) return op::kIfnull;
  // ifeq/ifne, iflt/ifge, ifgt/ifle, if_icmp*, if_acmp* pair up as (odd, even) from 153.
  return ((opcode - op::kIfeq) % 2 == 0) ? opcode + 1 : opcode - 1;
}

CodeAttribute parse_code(const Attribute& attribute, const ConstantPool& cp, bool legacy) {
  ByteReader r(attribute.data, attribute.file_offset);
  CodeAttribute c;
  uint32_t code_length;
  if (legacy) {
    c.max_stack = r.u1("max_stack");
    c.max_locals = r.u1("max_locals");
    code_length = r.u2("code_length");
  } else {
    c.max_stack = r.u2("max_stack");
    c.max_locals = r.u2("max_locals");
    code_length = r.u4("code_length");
  }
  if (code_length == 0 || code_length > 0xFFFF) {
    r.fail("bad code_length " + std::to_string(code_length));
  }
  c.code_file_offset = r.file_offset();
  auto code = r.bytes(code_length, "code");
  c.code.assign(code.begin(), code.end());
  uint16_t exceptions = r.u2("exception_table_length");
  c.exceptions.resize(exceptions);
  for (auto& e : c.exceptions) {
    size_t at = r.file_offset();
    e.start_pc = r.u2("exception start_pc");
    e.end_pc = r.u2("exception end_pc");
    e.handler_pc = r.u2("exception handler_pc");
    e.catch_type = r.u2("exception catch_type");
    if (e.start_pc >= e.end_pc || e.end_pc > code_length || e.handler_pc >= code_length) {
      throw ClassFormatError("bad exception table range", at);
    }
    if (e.catch_type != 0 && !cp.valid(e.catch_type, kCpClass)) {
      throw ClassFormatError("bad exception catch_type " + std::to_string(e.catch_type), at + 6);
    }
  }
  uint16_t count = r.u2("code attributes_count");
  c.attributes.resize(count);
  for (auto& a : c.attributes) {
    size_t at = r.file_offset();
    a.name_index = r.u2("attribute name");
    if (!cp.valid(a.name_index, kCpUtf8)) {
      throw ClassFormatError("bad constant pool index for attribute name", at);
    }
    uint32_t length = r.u4("attribute length");
    a.file_offset = r.file_offset();
    auto data = r.bytes(length, "attribute data");
    a.data.assign(data.begin(), data.end());
  }
  if (!r.at_end()) r.fail("extra bytes in Code attribute");
  return c;
}

std::vector<uint8_t> write_code(const CodeAttribute& c, bool legacy) {
  ByteWriter w;
  if (legacy) {
    w.u1(c.max_stack);
    w.u1(c.max_locals);
    w.u2(static_cast<uint32_t>(c.code.size()));
  } else {
    w.u2(c.max_stack);
    w.u2(c.max_locals);
    w.u4(static_cast<uint32_t>(c.code.size()));
  }
  w.bytes(c.code);
  w.u2(static_cast<uint32_t>(c.exceptions.size()));
  for (const auto& e : c.exceptions) {
    w.u2(e.start_pc);
    w.u2(e.end_pc);
    w.u2(e.handler_pc);
    w.u2(e.catch_type);
  }
  w.u2(static_cast<uint32_t>(c.attributes.size()));
  for (const auto& a : c.attributes) {
    w.u2(a.name_index);
    w.u4(static_cast<uint32_t>(a.data.size()));
    w.bytes(a.data);
  }
  return w.take();
}

std::vector<Instruction> decode_instructions(const CodeAttribute& code, const ConstantPool& cp) {
  const std::vector<uint8_t>& c = code.code;
  const size_t base = code.code_file_offset;
  const size_t n = c.size();
  std::vector<Instruction> out;
  std::vector<bool> starts(n + 1, false);
  size_t pc = 0;
  auto fail = [&](const std::string& problem, size_t at) {
    throw ClassFormatError(problem, base + at);
  };
  while (pc < n) {
    Instruction in;
    in.offset = static_cast<uint32_t>(pc);
    in.opcode = c[pc];
    int len = kLengths[in.opcode];
    if (len == 0) fail("bad opcode " + std::to_string(in.opcode), pc);
    if (in.opcode == op::kWide) {
      if (pc + 1 >= n) fail("truncated wide instruction", pc);
      uint8_t inner = c[pc + 1];
      in.wide = true;
      in.opcode = inner;
      if (inner == op::kIinc) {
        len = 6;
      } else if ((inner >= op::kIload && inner <= op::kAload) ||
                 (inner >= op::kIstore && inner <= op::kAstore) || inner == op::kRet) {
        len = 4;
      } else {
        fail("bad opcode " + std::to_string(inner) + " after wide", pc + 1);
      }
      if (pc + len > n) fail("truncated instruction", pc);
      in.index = u2at(c, pc + 2);
    } else if (len < 0) {
      size_t aligned = (pc + 4) & ~static_cast<size_t>(3);
      if (aligned + (in.opcode == op::kTableswitch ? 12 : 8) > n) fail("truncated switch", pc);
      in.target = static_cast<int32_t>(pc) + s4(c, aligned);
      auto sw = std::make_shared<SwitchOperands>();
      if (in.opcode == op::kTableswitch) {
        sw->low = s4(c, aligned + 4);  // bounds checked above
        sw->high = s4(c, aligned + 8);
        if (sw->low > sw->high) fail("tableswitch low > high", pc);
        int64_t count = static_cast<int64_t>(sw->high) - sw->low + 1;
        if (aligned + 12 + count * 4 > n) fail("truncated tableswitch", pc);
        for (int64_t i = 0; i < count; ++i) {
          sw->targets.push_back(static_cast<int32_t>(pc) + s4(c, aligned + 12 + i * 4));
        }
        len = static_cast<int>(aligned + 12 + count * 4 - pc);
      } else {
        int32_t pairs = s4(c, aligned + 4);
        if (pairs < 0) fail("negative lookupswitch pair count", pc);
        if (aligned + 8 + static_cast<int64_t>(pairs) * 8 > n) fail("truncated lookupswitch", pc);
        for (int32_t i = 0; i < pairs; ++i) {
          int32_t key = s4(c, aligned + 8 + i * 8);
          if (i > 0 && key <= sw->keys.back()) fail("unsorted lookupswitch keys", pc);
          sw->keys.push_back(key);
          sw->targets.push_back(static_cast<int32_t>(pc) + s4(c, aligned + 12 + i * 8));
        }
        len = static_cast<int>(aligned + 8 + static_cast<size_t>(pairs) * 8 - pc);
      }
      in.switch_operands = std::move(sw);
    } else {
      if (pc + len > n) fail("truncated instruction", pc);
      uint8_t o = in.opcode;
      if (o == op::kGotoW || o == op::kJsrW) {
        in.target = static_cast<int32_t>(pc) + s4(c, pc + 1);
      } else if (is_branch(o)) {
        in.target = static_cast<int32_t>(pc) + static_cast<int16_t>(u2at(c, pc + 1));
      } else if (o == op::kLdc) {
        in.index = c[pc + 1];
      } else if (len >= 3 && o != op::kSipush && o != op::kIinc) {
        in.index = u2at(c, pc + 1);
      } else if ((o >= op::kIload && o <= op::kAload) || (o >= op::kIstore && o <= op::kAstore) ||
                 o == op::kRet || o == op::kIinc) {
        in.index = c[pc + 1];
      }
      if (o == op::kNewarray) {
        in.operand = c[pc + 1];
        if (in.operand < 4 || in.operand > 11) fail("bad newarray type", pc);
      }
      if (o == op::kMultianewarray) {
        in.operand = c[pc + 3];
        if (in.operand == 0) fail("multianewarray with zero dimensions", pc);
      }
      if (o == op::kInvokeinterface && c[pc + 3] == 0) fail("invokeinterface count zero", pc);
      check_cp_operand(in, cp, base);
    }
    in.length = static_cast<uint32_t>(len);
    starts[pc] = true;
    pc += len;
    out.push_back(std::move(in));
  }
  starts[n] = false;
  auto check_target = [&](int64_t t, size_t at) {
    if (t < 0 || t >= static_cast<int64_t>(n) || !starts[t]) {
      fail("branch target " + std::to_string(t) + " is not an instruction", at);
    }
  };
  for (const auto& in : out) {
    if (is_branch(in.opcode) || in.opcode == op::kTableswitch || in.opcode == op::kLookupswitch) {
      check_target(in.target, in.offset);
      if (in.switch_operands) {
        for (int32_t t : in.switch_operands->targets) check_target(t, in.offset);
      }
    }
  }
  starts[n] = true;  // end_pc may be the code length
  for (const auto& e : code.exceptions) {
    if (!starts[e.start_pc] || !starts[e.end_pc] || e.handler_pc >= n || !starts[e.handler_pc]) {
      fail("exception table entry not on instruction boundaries", 0);
    }
  }
  return out;
}

std::vector<LineNumber> parse_line_numbers(const Attribute& a) {
  ByteReader r(a.data, a.file_offset);
  std::vector<LineNumber> lines(r.u2("line_number_table_length"));
  for (auto& l : lines) {
    l.start_pc = r.u2("line start_pc");
    l.line = r.u2("line_number");
  }
  if (!r.at_end()) r.fail("extra bytes in LineNumberTable");
  return lines;
}

std::vector<uint8_t> write_line_numbers(const std::vector<LineNumber>& lines) {
  ByteWriter w;
  w.u2(static_cast<uint32_t>(lines.size()));
  for (const auto& l : lines) {
    w.u2(l.start_pc);
    w.u2(l.line);
  }
  return w.take();
}

std::vector<LocalVariable> parse_local_variables(const Attribute& a) {
  ByteReader r(a.data, a.file_offset);
  std::vector<LocalVariable> vars(r.u2("local_variable_table_length"));
  for (auto& v : vars) {
    v.start_pc = r.u2("local variable start_pc");
    v.length = r.u2("local variable length");
    v.name_index = r.u2("local variable name");
    v.descriptor_index = r.u2("local variable descriptor");
    v.index = r.u2("local variable index");
  }
  if (!r.at_end()) r.fail("extra bytes in local variable table");
  return vars;
}

std::vector<uint8_t> write_local_variables(const std::vector<LocalVariable>& vars) {
  ByteWriter w;
  w.u2(static_cast<uint32_t>(vars.size()));
  for (const auto& v : vars) {
    w.u2(v.start_pc);
    w.u2(v.length);
    w.u2(v.name_index);
    w.u2(v.descriptor_index);
    w.u2(v.index);
  }
  return w.take();
}

bool same_vtype(const VType& a, const VType& b, const ConstantPool& cp) {
  if (a.tag != b.tag) return false;
  if (a.tag == kObject) return a.data == b.data || cp.class_name(a.data) == cp.class_name(b.data);
  if (a.tag == kUninitialized) return a.data == b.data;
  return true;
}

namespace {

bool same_list(const std::vector<VType>& a, const std::vector<VType>& b, size_t n,
               const ConstantPool& cp) {
  for (size_t i = 0; i < n; ++i) {
    if (!same_vtype(a[i], b[i], cp)) return false;
  }
  return true;
}

VType read_vtype(ByteReader& r, const ConstantPool& cp, uint32_t code_length) {
  size_t at = r.file_offset();
  VType t;
  t.tag = r.u1("verification type");
  if (t.tag > kUninitialized) throw ClassFormatError("bad verification type tag", at);
  if (t.tag == kObject) {
    t.data = r.u2("verification type class");
    if (!cp.valid(t.data, kCpClass)) {
      throw ClassFormatError(
          "bad constant pool index " + std::to_string(t.data) + " in verification type", at);
    }
  } else if (t.tag == kUninitialized) {
    t.data = r.u2("verification type offset");
    if (t.data >= code_length) throw ClassFormatError("bad uninitialized offset", at);
  }
  return t;
}

void write_vtype(ByteWriter& w, const VType& t) {
  w.u1(t.tag);
  if (t.tag == kObject || t.tag == kUninitialized) w.u2(t.data);
}

}  // namespace

std::vector<VType> initial_locals(ConstantPool& cp, uint16_t this_class, bool is_static,
                                  bool is_init, const std::string& d) {
  std::vector<VType> locals;
  if (!is_static) {
    bool object = cp.class_name(this_class) == "java/lang/Object";
    locals.push_back(is_init && !object ? VType{kUninitializedThis, 0}
                                        : VType{kObject, this_class});
  }
  size_t i = 1;
  while (i < d.size() && d[i] != ')') {
    size_t start = i;
    while (d[i] == '[') ++i;
    if (d[i] == 'L') i = d.find(';', i);
    ++i;
    std::string_view t(d.data() + start, i - start);
    if (t.size() > 1) {
      std::string name = t[0] == 'L' ? std::string(t.substr(1, t.size() - 2)) : std::string(t);
      locals.push_back({kObject, cp.add_class(name)});
    } else if (t == "J") {
      locals.push_back({kLong, 0});
    } else if (t == "D") {
      locals.push_back({kDouble, 0});
    } else if (t == "F") {
      locals.push_back({kFloat, 0});
    } else {
      locals.push_back({kInteger, 0});
    }
  }
  return locals;
}

std::vector<Frame> parse_stack_map(const Attribute& a, const ConstantPool& cp,
                                   const std::vector<VType>& initial, uint32_t code_length) {
  ByteReader r(a.data, a.file_offset);
  uint16_t count = r.u2("number_of_entries");
  std::vector<Frame> frames;
  frames.reserve(count);
  const std::vector<VType>* prev_locals = &initial;
  int64_t prev_offset = -1;
  for (uint16_t i = 0; i < count; ++i) {
    size_t at = r.file_offset();
    Frame f;
    f.frame_type = r.u1("frame type");
    uint32_t delta;
    uint8_t t = f.frame_type;
    f.locals = *prev_locals;
    if (t < 64) {
      delta = t;
    } else if (t < 128) {
      delta = t - 64;
      f.stack.push_back(read_vtype(r, cp, code_length));
    } else if (t < 247) {
      throw ClassFormatError("reserved stack map frame type " + std::to_string(t), at);
    } else if (t == 247) {
      delta = r.u2("offset_delta");
      f.stack.push_back(read_vtype(r, cp, code_length));
    } else if (t < 251) {
      delta = r.u2("offset_delta");
      size_t chop = 251 - t;
      if (chop > f.locals.size()) throw ClassFormatError("chop_frame removes too many locals", at);
      f.locals.resize(f.locals.size() - chop);
    } else if (t == 251) {
      delta = r.u2("offset_delta");
    } else if (t < 255) {
      delta = r.u2("offset_delta");
      for (int k = 0; k < t - 251; ++k) f.locals.push_back(read_vtype(r, cp, code_length));
    } else {
      delta = r.u2("offset_delta");
      f.locals.clear();
      uint16_t nlocals = r.u2("number_of_locals");
      for (uint16_t k = 0; k < nlocals; ++k) f.locals.push_back(read_vtype(r, cp, code_length));
      uint16_t nstack = r.u2("number_of_stack_items");
      for (uint16_t k = 0; k < nstack; ++k) f.stack.push_back(read_vtype(r, cp, code_length));
    }
    int64_t offset = prev_offset + 1 + delta;
    if (i == 0) offset = delta;
    if (offset >= code_length) throw ClassFormatError("stack map frame beyond code", at);
    f.offset = static_cast<uint32_t>(offset);
    prev_offset = offset;
    frames.push_back(std::move(f));
    prev_locals = &frames.back().locals;
  }
  if (!r.at_end()) r.fail("extra bytes in StackMapTable");
  return frames;
}

std::vector<uint8_t> write_stack_map(const std::vector<Frame>& frames,
                                     const std::vector<VType>& initial, const ConstantPool& cp,
                                     bool keep_frame_types) {
  ByteWriter w;
  w.u2(static_cast<uint32_t>(frames.size()));
  const std::vector<VType>* prev = &initial;
  int64_t prev_offset = -1;
  for (const Frame& f : frames) {
    uint32_t delta = static_cast<uint32_t>(f.offset - prev_offset - 1);
    const auto& pl = *prev;
    uint8_t type = f.frame_type;
    if (!keep_frame_types) {
      bool same_locals = f.locals.size() == pl.size() && same_list(f.locals, pl, pl.size(), cp);
      if (same_locals && f.stack.empty()) {
        type = delta < 64 ? static_cast<uint8_t>(delta) : 251;
      } else if (same_locals && f.stack.size() == 1) {
        type = delta < 64 ? static_cast<uint8_t>(64 + delta) : 247;
      } else if (f.stack.empty() && f.locals.size() < pl.size() &&
                 pl.size() - f.locals.size() <= 3 && same_list(f.locals, pl, f.locals.size(), cp)) {
        type = static_cast<uint8_t>(251 - (pl.size() - f.locals.size()));
      } else if (f.stack.empty() && f.locals.size() > pl.size() &&
                 f.locals.size() - pl.size() <= 3 && same_list(f.locals, pl, pl.size(), cp)) {
        type = static_cast<uint8_t>(251 + (f.locals.size() - pl.size()));
      } else {
        type = 255;
      }
    }
    w.u1(type);
    if (type < 64) {
    } else if (type < 128) {
      write_vtype(w, f.stack[0]);
    } else if (type == 247) {
      w.u2(delta);
      write_vtype(w, f.stack[0]);
    } else if (type <= 251) {
      w.u2(delta);
    } else if (type < 255) {
      w.u2(delta);
      for (size_t k = pl.size(); k < f.locals.size(); ++k) write_vtype(w, f.locals[k]);
    } else {
      w.u2(delta);
      w.u2(static_cast<uint32_t>(f.locals.size()));
      for (const auto& v : f.locals) write_vtype(w, v);
      w.u2(static_cast<uint32_t>(f.stack.size()));
      for (const auto& v : f.stack) write_vtype(w, v);
    }
    prev = &f.locals;
    prev_offset = f.offset;
  }
  return w.take();
}

}  // namespace bci
