// SPDX-License-Identifier: Apache-2.0
// The injection engine: rebuilds each method's code with the hooks of InjectionOptions.
#include <algorithm>
#include <map>
#include <optional>

#include "bci.h"
#include "class_file.h"
#include "code.h"
#include "code_builder.h"
#include "simulator.h"

namespace bci {

int LookupSwitch::pair_index(int32_t key) const {
  auto it = std::lower_bound(keys.begin(), keys.end(), key);
  return (it != keys.end() && *it == key) ? static_cast<int>(it - keys.begin()) : -1;
}

namespace {

// A method that cannot be instrumented safely is left as it is.
struct CannotInstrument : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Instructions that cannot throw (linkage errors aside), so a method made only of them needs no
// exceptional-exit handler. This also keeps a handler out of java/lang/Object.<init>, where C2
// (JDK 17) crashes parsing one.
bool cannot_throw(uint8_t o) {
  if (o <= 17) return true;                               // nop, constants, bipush, sipush
  if (o >= 21 && o <= 45) return true;                    // loads
  if (o >= 54 && o <= 95) return o <= 78 || o >= 87;      // stores, stack ops (not array stores)
  if (o >= 96 && o <= 107) return true;                   // add, sub, mul
  if (o >= 112 && o <= 115) return o == 114 || o == 115;  // frem, drem only
  if (o >= 116 && o <= 168) return true;  // neg, shifts, logic, iinc, casts, cmp, if
  return o == op::kGotoW || is_return(o);
}

struct Hooks {
  bool entry = false;
  bool receiver = false;  // entry passes `this`
  bool exit = false;
  bool exit_handler = false;  // catch-all reporting exceptional exits
  bool object_init = false;
  bool new_arrays = false;
  bool instructions = false;
  bool monitor_exit = false;  // before every monitorexit
  bool sync_exit = false;     // the method is synchronized: report its monitor at every exit

  bool any() const {
    return entry || exit || object_init || new_arrays || instructions || monitor_exit || sync_exit;
  }
};

// Whether `in` writes local variable 0 (the receiver of an instance method).
bool writes_local_zero(const Instruction& in) {
  const uint8_t o = in.opcode;
  if (o >= op::kIstore && o <= op::kAstore) return in.index == 0;  // istore .. astore, also wide
  if (o >= 59 && o <= 78) return (o - 59) % 4 == 0;                // istore_0 .. astore_0
  return o == op::kIinc && in.index == 0;
}

constexpr uint8_t kNotCovered = 0;
constexpr uint8_t kCovered = 1;

class MethodInstrumenter {
 public:
  MethodInstrumenter(ClassFile& cf, const InjectionOptions& options, uint16_t method_index,
                     Member& method, Attribute& code_attribute)
      : cf_(cf),
        cp_(cf.cp),
        options_(options),
        method_index_(method_index),
        method_(method),
        name_(cf.member_name(method)),
        descriptor_(cf.member_descriptor(method)),
        code_(parse_code(code_attribute, cf.cp, cf.legacy_code_layout())),
        instructions_(decode_instructions(code_, cf.cp)),
        typed_(cf.major_version >= 50) {
    if (descriptor_argument_slots(descriptor_) < 0) {
      throw ClassFormatError("bad method descriptor " + descriptor_, code_attribute.file_offset);
    }
    index_of_offset_.assign(code_.code.size() + 1, -1);
    containing_.assign(code_.code.size(), 0);
    for (size_t i = 0; i < instructions_.size(); ++i) {
      const Instruction& in = instructions_[i];
      index_of_offset_[in.offset] = static_cast<int32_t>(i);
      std::fill_n(containing_.begin() + in.offset, in.length, static_cast<int32_t>(i));
    }
  }

  const std::vector<Instruction>& instructions() const { return instructions_; }

  // New Code attribute bytes, or nullopt when the result would exceed the 64 KiB code limit.
  std::optional<std::vector<uint8_t>> build(const Hooks& hooks);

  // Whether the monitor of this synchronized method can be pushed at each of its exits: `this`
  // must stay in local 0 (and in every frame's local 0), and a static method's class needs
  // `ldc` of a class constant (class files from version 49).
  bool sync_monitor_reachable();

 private:
  bool is_static() const { return method_.access_flags & kAccStatic; }
  bool is_init() const { return name_ == "<init>"; }
  Simulator& simulator();
  uint16_t methodref(const char* name, const char* descriptor) {
    return cp_.add_methodref(options_.tracker_class, name, descriptor);
  }
  void push_int(CodeBuilder& b, int32_t v);
  void push_sync_monitor(CodeBuilder& b);
  void prepare_frames();
  Attribute* find_stack_map();
  void invokestatic(CodeBuilder& b, uint16_t ref) {
    b.u1(op::kInvokestatic);
    b.u2(ref);
  }
  void push_ids(CodeBuilder& b) {
    push_int(b, static_cast<int32_t>(options_.class_number));
    push_int(b, method_index_);
  }
  int instruction_at(int64_t offset, size_t file_offset) const {
    if (offset < 0 || offset >= static_cast<int64_t>(code_.code.size()) ||
        index_of_offset_[offset] < 0) {
      throw ClassFormatError("offset " + std::to_string(offset) + " is not an instruction",
                             file_offset);
    }
    return index_of_offset_[offset];
  }

  ClassFile& cf_;
  ConstantPool& cp_;
  const InjectionOptions& options_;
  int32_t method_index_;
  bool wide_push_ = false;  // push_int built a value from two halves: one stack slot more
  Member& method_;
  std::string name_;
  std::string descriptor_;
  CodeAttribute code_;
  std::vector<Instruction> instructions_;
  bool typed_;
  std::vector<int32_t> index_of_offset_;
  std::vector<int32_t> containing_;
  std::optional<std::vector<Frame>> frames_;
  std::vector<VType> initial_;
  std::optional<Simulator> simulator_;
};

bool MethodInstrumenter::sync_monitor_reachable() {
  // The VM ignores the flag on these (and constructors must not carry it).
  if (is_init() || name_ == "<clinit>") return false;
  if (is_static()) return cf_.major_version >= 49;
  for (const Instruction& in : instructions_) {
    if (writes_local_zero(in)) return false;
  }
  if (!typed_) return true;
  prepare_frames();
  const std::string this_name = cp_.class_name(cf_.this_class);
  for (const Frame& f : *frames_) {
    if (f.locals.empty() || f.locals[0].tag != kObject ||
        cp_.class_name(f.locals[0].data) != this_name) {
      return false;
    }
  }
  return true;
}

void MethodInstrumenter::push_sync_monitor(CodeBuilder& b) {
  if (!is_static()) {
    b.u1(op::kAload0);
    return;
  }
  b.u1(op::kLdcW);
  b.u2(cf_.this_class);
}

void MethodInstrumenter::push_int(CodeBuilder& b, int32_t v) {
  if (v >= -1 && v <= 5) {
    b.u1(static_cast<uint8_t>(op::kIconst0 + v));
  } else if (v >= -128 && v <= 127) {
    b.u1(op::kBipush);
    b.u1(static_cast<uint8_t>(v));
  } else if (v >= -32768 && v <= 32767) {
    b.u1(op::kSipush);
    b.u2(static_cast<uint16_t>(v));
  } else if (const int32_t low = static_cast<int16_t>(v & 0xFFFF),
             high = static_cast<int32_t>((static_cast<int64_t>(v) - low) >> 16);
             high >= -32768 && high <= 32767) {
    // (high << 16) + low rather than an Integer constant: a class number differs every time a
    // class is instrumented again, and HotSpot's RedefineClasses keeps every constant of the
    // version it replaces, so one new constant per retransformation grows the class's constant
    // pool without end (on JDK 25 past 65535 entries after some twenty attach cycles, and then
    // the retransformation fails). Needs one stack slot more than the value (wide_push_).
    b.u1(op::kSipush);
    b.u2(static_cast<uint16_t>(high));
    b.u1(op::kBipush);
    b.u1(16);
    b.u1(op::kIshl);
    b.u1(op::kSipush);
    b.u2(static_cast<uint16_t>(low));
    b.u1(op::kIadd);
    wide_push_ = true;
  } else {
    uint16_t index = cp_.add_integer(v);
    if (index < 256) {
      b.u1(op::kLdc);
      b.u1(static_cast<uint8_t>(index));
    } else {
      b.u1(op::kLdcW);
      b.u2(index);
    }
  }
}

Simulator& MethodInstrumenter::simulator() {
  if (!simulator_) {
    simulator_.emplace(cp_, cf_.this_class, code_, instructions_, *frames_, initial_);
    simulator_->run();
  }
  return *simulator_;
}

Attribute* MethodInstrumenter::find_stack_map() {
  Attribute* stack_map = nullptr;
  for (auto& a : code_.attributes) {
    if (cp_.utf8(a.name_index) == "StackMapTable") stack_map = &a;
  }
  return stack_map;
}

void MethodInstrumenter::prepare_frames() {
  if (!typed_ || frames_) return;
  const uint32_t code_length = static_cast<uint32_t>(code_.code.size());
  Attribute* stack_map = find_stack_map();
  initial_ = initial_locals(cp_, cf_.this_class, is_static(), is_init(), descriptor_);
  frames_ =
      stack_map ? parse_stack_map(*stack_map, cp_, initial_, code_length) : std::vector<Frame>{};
  for (const Frame& f : *frames_) {
    instruction_at(f.offset, stack_map->file_offset);
    for (const auto* list : {&f.locals, &f.stack}) {
      for (const VType& t : *list) {
        if (t.tag == kUninitialized &&
            instructions_[instruction_at(t.data, stack_map->file_offset)].opcode != op::kNew) {
          throw ClassFormatError("uninitialized type does not name a new instruction",
                                 stack_map->file_offset);
        }
      }
    }
  }
}

std::optional<std::vector<uint8_t>> MethodInstrumenter::build(const Hooks& hooks) {
  const uint32_t code_length = static_cast<uint32_t>(code_.code.size());
  Attribute* stack_map = find_stack_map();
  prepare_frames();
  // No exception handler can cover the super()/this() call of a constructor (HotSpot rejects
  // every frame for it), so under the type checker a constructor reports its entry right after
  // that call, and code before it (argument evaluation) belongs to the caller.
  const bool entry_after_init =
      typed_ && hooks.entry && !initial_.empty() && initial_[0].tag == kUninitializedThis;
  const bool exit_after_init =
      typed_ && hooks.exit_handler && !initial_.empty() && initial_[0].tag == kUninitializedThis;
  if (entry_after_init || exit_after_init) simulator();

  CodeBuilder b;
  const size_t n = instructions_.size();
  b.reserve(2 * n + 2, code_.code.size() + 64);
  std::vector<int> prefix(n), start(n);
  for (size_t i = 0; i < n; ++i) {
    prefix[i] = b.new_label();
    start[i] = b.new_label();
  }
  const int body_end = b.new_label();
  const int handler = b.new_label();

  uint16_t entry_ref = 0, exit_ref = 0, object_init_ref = 0, new_array_ref = 0;
  uint16_t instruction_ref = 0, if_ref = 0, table_ref = 0, lookup_ref = 0, monitor_ref = 0;
  if (hooks.monitor_exit || hooks.sync_exit) {
    monitor_ref = methodref("monitorExit", "(Ljava/lang/Object;)V");
  }
  if (hooks.entry) {
    entry_ref = hooks.receiver ? methodref("methodEntryWithReceiver", "(IILjava/lang/Object;)V")
                               : methodref("methodEntry", "(II)V");
  }
  if (hooks.exit) exit_ref = methodref("methodExit", "(II)V");
  if (hooks.object_init) object_init_ref = methodref("objectInit", "(Ljava/lang/Object;)V");
  if (hooks.new_arrays) new_array_ref = methodref("newArray", "(Ljava/lang/Object;)V");
  if (hooks.instructions) {
    instruction_ref = methodref("instruction", "(III)V");
    if_ref = methodref("instructionIf", "(IIIZ)V");
    table_ref = methodref("instructionTableswitch", "(IIIIII)V");
    lookup_ref = methodref("instructionLookupswitch", "(IIIII)V");
  }
  int extra_stack = 0;

  b.set_region(kNotCovered);
  auto emit_entry = [&] {
    push_ids(b);
    if (hooks.receiver) b.u1(op::kAload0);
    invokestatic(b, entry_ref);
    extra_stack = std::max(extra_stack, hooks.receiver ? 3 : 2);
  };
  bool entry_emitted = false;
  if (hooks.entry && !entry_after_init) {
    emit_entry();
    entry_emitted = true;
  }
  if (hooks.object_init) {
    b.u1(op::kAload0);
    invokestatic(b, object_init_ref);
    extra_stack = std::max(extra_stack, 1);
  }

  struct Stub {
    int label;
    size_t instruction;
    int target;
    uint8_t region;
  };
  std::vector<Stub> stubs;
  auto target_label = [&](int32_t offset, const Instruction& in) {
    return prefix[instruction_at(offset, code_.code_file_offset + in.offset)];
  };

  for (size_t i = 0; i < n; ++i) {
    const Instruction& in = instructions_[i];
    uint8_t region = kNotCovered;
    if (hooks.exit_handler && !(exit_after_init && simulator().this_uninit_before(i)))
      region = kCovered;
    b.set_region(region);
    b.mark(prefix[i]);
    const int32_t offset = static_cast<int32_t>(in.offset);
    if (hooks.instructions) {
      if (in.opcode == op::kTableswitch) {
        b.u1(op::kDup);
        push_int(b, in.switch_operands->low);
        push_int(b, in.switch_operands->high);
        push_ids(b);
        push_int(b, offset);
        invokestatic(b, table_ref);
        extra_stack = std::max(extra_stack, 6);
      } else if (in.opcode == op::kLookupswitch) {
        b.u1(op::kDup);
        push_int(b, static_cast<int32_t>(in.switch_operands->keys.size()));
        push_ids(b);
        push_int(b, offset);
        invokestatic(b, lookup_ref);
        extra_stack = std::max(extra_stack, 5);
      } else if (!is_conditional_branch(in.opcode)) {
        push_ids(b);
        push_int(b, offset);
        invokestatic(b, instruction_ref);
        extra_stack = std::max(extra_stack, 3);
      }
    }
    if (hooks.monitor_exit && in.opcode == op::kMonitorexit) {
      b.u1(op::kDup);
      invokestatic(b, monitor_ref);
      extra_stack = std::max(extra_stack, 1);
    }
    if (hooks.sync_exit && is_return(in.opcode)) {
      // Like the exit hook: an exception from here on must not report the monitor again.
      b.set_region(kNotCovered);
      push_sync_monitor(b);
      invokestatic(b, monitor_ref);
      extra_stack = std::max(extra_stack, 1);
    }
    if (hooks.exit && is_return(in.opcode)) {
      // An exception from the exit hook or the return itself must not report a second exit.
      b.set_region(kNotCovered);
      push_ids(b);
      invokestatic(b, exit_ref);
      extra_stack = std::max(extra_stack, 2);
    }
    b.mark(start[i]);
    if (is_branch(in.opcode)) {
      uint8_t opcode = in.opcode;
      if (opcode == op::kGotoW) opcode = op::kGoto;
      if (opcode == op::kJsrW) opcode = op::kJsr;
      int target = target_label(in.target, in);
      if (is_conditional_branch(opcode) && hooks.instructions) {
        int stub = b.new_label();
        stubs.push_back({stub, i, target, region});
        b.branch(opcode, stub, static_cast<int>(i));
        push_ids(b);
        push_int(b, offset);
        b.u1(op::kIconst0);  // not taken
        invokestatic(b, if_ref);
        extra_stack = std::max(extra_stack, 4);
      } else {
        b.branch(opcode, target, is_conditional_branch(opcode) ? static_cast<int>(i) : -1);
      }
    } else if (in.opcode == op::kTableswitch || in.opcode == op::kLookupswitch) {
      const SwitchOperands& sw = *in.switch_operands;
      std::vector<int> targets;
      for (int32_t t : sw.targets) targets.push_back(target_label(t, in));
      if (in.opcode == op::kTableswitch) {
        b.tableswitch(target_label(in.target, in), sw.low, sw.high, std::move(targets));
      } else {
        b.lookupswitch(target_label(in.target, in), sw.keys, std::move(targets));
      }
    } else {
      b.bytes(std::span(code_.code).subspan(in.offset, in.length));
    }
    if (entry_after_init && simulator().initializes_this(i)) {
      b.set_region(kNotCovered);
      emit_entry();
      entry_emitted = true;
    }
    if (hooks.new_arrays && (in.opcode == op::kNewarray || in.opcode == op::kAnewarray ||
                             in.opcode == op::kMultianewarray)) {
      b.u1(op::kDup);
      invokestatic(b, new_array_ref);
      extra_stack = std::max(extra_stack, 1);
    }
  }
  b.set_region(kNotCovered);
  b.mark(body_end);
  for (const Stub& s : stubs) {
    // Reached only when the branch is taken; its frame is the one at the branch target.
    b.set_region(s.region);
    b.mark(s.label);
    push_ids(b);
    push_int(b, static_cast<int32_t>(instructions_[s.instruction].offset));
    b.u1(op::kIconst1);
    invokestatic(b, if_ref);
    b.branch(op::kGoto, s.target);
  }
  b.set_region(kNotCovered);
  if (hooks.entry && !entry_emitted) throw CannotInstrument("constructor never initializes this");
  if (hooks.exit_handler) {
    // Reports the monitor's release and the exit, and rethrows the same exception.
    b.mark(handler);
    if (hooks.sync_exit) {
      push_sync_monitor(b);
      invokestatic(b, monitor_ref);
    }
    if (hooks.exit) {
      push_ids(b);
      invokestatic(b, exit_ref);
    }
    b.u1(op::kAthrow);
  }

  const uint32_t new_length = b.layout();
  if (new_length > 0xFFFF) return std::nullopt;
  auto pos = [&](int label) { return static_cast<uint16_t>(b.position(label)); };
  // Maps an original offset (instruction start or end of code) to the new offset.
  auto map_offset = [&](uint32_t offset) -> uint16_t {
    if (offset >= code_length) return pos(body_end);
    return pos(prefix[containing_[offset]]);
  };

  CodeAttribute out;
  out.max_locals = code_.max_locals;
  int max_stack = code_.max_stack + extra_stack + (wide_push_ ? 1 : 0);
  if (hooks.exit_handler) max_stack = std::max(max_stack, wide_push_ ? 4 : 3);
  if (max_stack > (cf_.legacy_code_layout() ? 0xFF : 0xFFFF)) {
    throw CannotInstrument("max_stack overflow");
  }
  out.max_stack = static_cast<uint16_t>(max_stack);
  out.code = b.emit();
  for (const auto& e : code_.exceptions) {
    out.exceptions.push_back(
        {map_offset(e.start_pc), map_offset(e.end_pc), map_offset(e.handler_pc), e.catch_type});
  }
  // After the original entries, so the method's own handlers take precedence.
  if (hooks.exit_handler) {
    for (const auto& r : b.regions()) {
      out.exceptions.push_back(
          {static_cast<uint16_t>(r.start), static_cast<uint16_t>(r.end), pos(handler), 0});
    }
  }

  auto map_vtype = [&](VType t) {
    if (t.tag == kUninitialized) t.data = pos(start[index_of_offset_[t.data]]);
    return t;
  };
  auto map_frame = [&](Frame f, uint32_t offset) {
    f.offset = offset;
    for (auto& t : f.locals) t = map_vtype(t);
    for (auto& t : f.stack) t = map_vtype(t);
    return f;
  };

  for (const Attribute& a : code_.attributes) {
    const std::string& attribute_name = cp_.utf8(a.name_index);
    if (attribute_name == "StackMapTable") continue;  // rebuilt below
    if (attribute_name == "RuntimeVisibleTypeAnnotations" ||
        attribute_name == "RuntimeInvisibleTypeAnnotations") {
      continue;  // their code offsets would be stale
    }
    Attribute copy = a;
    if (attribute_name == "LineNumberTable") {
      auto lines = parse_line_numbers(a);
      for (auto& l : lines) {
        // Hooks at the start of the method belong to the method's first line.
        l.start_pc = l.start_pc == 0 ? 0 : map_offset(std::min<uint32_t>(l.start_pc, code_length));
      }
      copy.data = write_line_numbers(lines);
    } else if (attribute_name == "LocalVariableTable" ||
               attribute_name == "LocalVariableTypeTable") {
      auto vars = parse_local_variables(a);
      for (auto& v : vars) {
        uint32_t end = std::min<uint32_t>(v.start_pc + v.length, code_length);
        uint16_t new_start =
            v.start_pc == 0 ? 0 : map_offset(std::min<uint32_t>(v.start_pc, code_length));
        uint16_t new_end = map_offset(end);
        v.start_pc = new_start;
        v.length = static_cast<uint16_t>(new_end >= new_start ? new_end - new_start : 0);
      }
      copy.data = write_local_variables(vars);
    }
    out.attributes.push_back(std::move(copy));
  }

  if (typed_) {
    std::vector<Frame> frames;
    std::vector<bool> has_frame(new_length + 1, false);
    std::map<uint32_t, const Frame*> original_at;
    for (const Frame& f : *frames_) {
      original_at[f.offset] = &f;
      frames.push_back(map_frame(f, map_offset(f.offset)));
      has_frame[frames.back().offset] = true;
    }
    for (const Stub& s : stubs) {
      auto it = original_at.find(instructions_[s.instruction].target);
      if (it == original_at.end()) throw CannotInstrument("branch target without a frame");
      frames.push_back(map_frame(*it->second, pos(s.label)));
      has_frame[frames.back().offset] = true;
    }
    for (const auto& inverted : b.inverted_branches()) {
      if (has_frame[inverted.resume_offset]) continue;
      Frame f = simulator().fallthrough_frame(static_cast<size_t>(inverted.fallthrough_ref));
      frames.push_back(map_frame(std::move(f), inverted.resume_offset));
      has_frame[inverted.resume_offset] = true;
    }
    if (hooks.exit_handler) {
      VType throwable{kObject, cp_.add_class("java/lang/Throwable")};
      // A synchronized instance method's handler reads `this` (sync_monitor_reachable).
      std::vector<VType> locals;
      if (hooks.sync_exit && !is_static()) locals.push_back(initial_[0]);
      frames.push_back({255, pos(handler), std::move(locals), {throwable}});
    }
    std::sort(frames.begin(), frames.end(),
              [](const Frame& x, const Frame& y) { return x.offset < y.offset; });
    Attribute smt;
    smt.name_index = stack_map ? stack_map->name_index : cp_.add_utf8("StackMapTable");
    smt.data = write_stack_map(frames, initial_, cp_, false);
    out.attributes.push_back(std::move(smt));
  }
  return write_code(out, cf_.legacy_code_layout());
}

}  // namespace

InjectionResult instrument(std::span<const uint8_t> class_bytes, const InjectionOptions& options) {
  ClassFile cf = parse_class(class_bytes);
  InjectionResult result;
  result.class_name = cf.name();
  result.class_bytes.assign(class_bytes.begin(), class_bytes.end());
  for (const Member& m : cf.methods) {
    MethodInfo info;
    info.name = cf.member_name(m);
    info.descriptor = cf.member_descriptor(m);
    result.methods.push_back(std::move(info));
  }
  if (result.class_name == options.tracker_class) return result;
  const bool is_object = result.class_name == "java/lang/Object";
  bool any_changed = false;
  try {
    for (size_t i = 0; i < cf.methods.size(); ++i) {
      Member& m = cf.methods[i];
      MethodInfo& info = result.methods[i];
      if (m.access_flags & (kAccAbstract | kAccNative)) continue;
      Attribute* code = cf.find_attribute(m, "Code");
      if (!code) continue;
      Hooks hooks;
      hooks.entry = options.method_entry_exit;
      hooks.exit = options.method_entry_exit;
      bool may_throw = false;
      hooks.receiver = hooks.entry && options.entry_with_receiver &&
                       !(m.access_flags & kAccStatic) && info.name != "<init>";
      hooks.object_init = options.object_init && is_object && info.name == "<init>";
      hooks.new_arrays = options.new_arrays;
      hooks.instructions = options.instructions;
      if (!hooks.any() && !options.monitor_exits) continue;
      MethodInstrumenter mi(cf, options, static_cast<uint16_t>(i), m, *code);
      if (options.monitor_exits) {
        for (const auto& in : mi.instructions()) {
          hooks.monitor_exit |= in.opcode == op::kMonitorexit;
        }
        hooks.sync_exit = (m.access_flags & kAccSynchronized) && mi.sync_monitor_reachable();
      }
      if (!hooks.any()) continue;
      // HotSpot registers objects for finalization unless finalize() is just `return`; hooks in
      // an empty finalize() would make every object of every class finalizable.
      if (info.name == "finalize" && info.descriptor == "()V" && mi.instructions().size() == 1 &&
          mi.instructions()[0].opcode == op::kReturn) {
        continue;
      }
      for (const auto& in : mi.instructions()) may_throw |= !cannot_throw(in.opcode);
      // Without anything that can throw there is no exceptional exit to report.
      hooks.exit_handler = (hooks.exit || hooks.sync_exit) && may_throw;
      if (options.instructions) {
        for (const auto& in : mi.instructions()) {
          if (in.opcode == op::kLookupswitch) {
            info.lookup_switches.push_back({in.offset, in.switch_operands->keys});
          }
        }
      }
      // Instruction hooks roughly quadruple code size; drop them first when over 64 KiB.
      std::optional<std::vector<uint8_t>> built;
      try {
        built = mi.build(hooks);
        if (!built && hooks.instructions) {
          hooks.instructions = false;
          built = mi.build(hooks);
        }
      } catch (const SimulationError&) {
        built.reset();
      } catch (const CannotInstrument&) {
        built.reset();
      }
      if (!built) continue;
      code->data = std::move(*built);
      info.instrumented = true;
      info.instruction_hooks = hooks.instructions;
      info.monitor_hooks = hooks.monitor_exit || hooks.sync_exit;
      any_changed = true;
    }
  } catch (const std::length_error&) {
    // The constant pool is full: leave the class as it is.
    for (auto& info : result.methods) {
      info.instrumented = false;
      info.instruction_hooks = false;
      info.monitor_hooks = false;
    }
    return result;
  }
  if (any_changed) {
    result.class_bytes = write_class(cf);
    result.changed = true;
  }
  return result;
}

}  // namespace bci
