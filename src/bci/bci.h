// SPDX-License-Identifier: Apache-2.0
// Bytecode instrumenter: injects calls to a tracker class into Java class files.
//
// instrument() parses a class file (versions up to 69), inserts the requested hooks into every
// method with code, adjusts all code offsets, branches, exception tables, debug tables and
// StackMapTable frames, and writes the class back. See docs/bci.md for the tracker contract.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace bci {

// Malformed or unsupported class file. offset() is the byte offset in the input where the problem
// was found; what() names the problem and the offset.
class ClassFormatError : public std::runtime_error {
 public:
  ClassFormatError(const std::string& problem, size_t offset);
  size_t offset() const { return offset_; }

 private:
  size_t offset_;
};

struct InjectionOptions {
  std::string tracker_class = "jvmpi/Tracker";  // internal name; must be visible to every class
  uint32_t class_number = 0;                    // first int argument of every hook
  bool method_entry_exit = false;               // methodEntry + methodExit (normal and exceptional)
  bool entry_with_receiver = false;  // methodEntryWithReceiver for non-static methods but <init>
  bool object_init = false;          // objectInit at the start of java/lang/Object.<init>
  bool new_arrays = false;           // newArray after newarray/anewarray/multianewarray
  bool instructions = false;         // instruction* before every original instruction
  // monitorExit(monitor) before every monitorexit, and before every return and exceptional exit
  // of a synchronized method (with `this`, or the class for static methods; see docs/bci.md).
  bool monitor_exits = false;
};

// A lookupswitch of the original code: the runtime maps the key passed to
// instructionLookupswitch to the chosen pair index with it (-1: default).
struct LookupSwitch {
  uint32_t offset = 0;        // original bytecode offset of the instruction
  std::vector<int32_t> keys;  // match keys in class-file order (sorted ascending)

  int pair_index(int32_t key) const;
};

struct MethodInfo {
  std::string name;
  std::string descriptor;
  bool instrumented = false;       // any hook was injected into this method
  bool instruction_hooks = false;  // instruction hooks were injected (dropped if over 64 KiB)
  bool monitor_hooks = false;      // monitorExit hooks were injected into this method
  std::vector<LookupSwitch> lookup_switches;
};

struct InjectionResult {
  std::vector<uint8_t> class_bytes;  // the input unchanged when !changed
  bool changed = false;
  std::string class_name;           // internal name, e.g. "java/lang/String"
  std::vector<MethodInfo> methods;  // indexed by method index (position in the methods array)
};

// Throws ClassFormatError on malformed input.
InjectionResult instrument(std::span<const uint8_t> class_bytes, const InjectionOptions& options);

}  // namespace bci
