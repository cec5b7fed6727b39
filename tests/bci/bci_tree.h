// SPDX-License-Identifier: Apache-2.0
// Whole-directory operations over class trees (a jimage extraction or javac output).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "bci.h"

namespace bcitest {

struct RoundTripStats {
  size_t classes = 0;
  size_t methods_with_code = 0;
  size_t stack_maps = 0;
  size_t mismatches = 0;
  size_t errors = 0;
  std::vector<std::string> messages;  // the first few problems
};

// Reads and writes every class and, inside each Code attribute, the exception table,
// instructions, LineNumberTable, LocalVariable(Type)Table and StackMapTable; all must reproduce
// their input bytes.
RoundTripStats round_trip_tree(const std::string& dir);

struct InstrumentStats {
  size_t classes = 0;
  size_t changed = 0;
  size_t methods_instrumented = 0;
  size_t methods_without_instruction_hooks = 0;
  size_t errors = 0;
  std::vector<std::string> messages;
};

// Instruments every class below in_dir into out_dir (same relative paths; module-info skipped).
// Class numbers count up from 1 in path order. index_file (optional) gets one line per class,
// "C <class_number> <first path component> <binary name>", and per method
// "M <class_number> <method_index> <name> <descriptor> <instrumented 0/1>".
InstrumentStats instrument_tree(const std::string& in_dir, const std::string& out_dir,
                                const bci::InjectionOptions& options,
                                const std::string& index_file);

}  // namespace bcitest
