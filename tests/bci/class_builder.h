// SPDX-License-Identifier: Apache-2.0
// Builds small class files for unit tests: one class with static methods given as raw code.
#pragma once

#include <string>
#include <vector>

#include "class_file.h"
#include "code.h"

namespace bcitest {

struct TestMethod {
  std::string name = "run";
  std::string descriptor = "(I)I";
  uint16_t access = 0x0009;  // public static
  uint16_t max_stack = 4;
  uint16_t max_locals = 2;
  std::vector<uint8_t> code;
  std::vector<bci::ExceptionEntry> exceptions;
  std::vector<bci::Frame> frames;  // written as a StackMapTable when not empty
};

inline bci::ClassFile make_class(const std::vector<TestMethod>& methods, uint16_t major = 52,
                                 const std::string& name = "Test") {
  bci::ClassFile cf;
  cf.major_version = major;
  cf.cp.entries.resize(1);
  cf.access_flags = 0x0021;
  cf.this_class = cf.cp.add_class(name);
  cf.super_class = cf.cp.add_class("java/lang/Object");
  for (const TestMethod& t : methods) {
    bci::Member m;
    m.access_flags = t.access;
    m.name_index = cf.cp.add_utf8(t.name);
    m.descriptor_index = cf.cp.add_utf8(t.descriptor);
    if (!t.code.empty()) {
      bci::CodeAttribute code;
      code.max_stack = t.max_stack;
      code.max_locals = t.max_locals;
      code.code = t.code;
      code.exceptions = t.exceptions;
      if (!t.frames.empty()) {
        auto initial = bci::initial_locals(cf.cp, cf.this_class, t.access & 0x0008,
                                           t.name == "<init>", t.descriptor);
        bci::Attribute smt;
        smt.name_index = cf.cp.add_utf8("StackMapTable");
        smt.data = bci::write_stack_map(t.frames, initial, cf.cp, false);
        code.attributes.push_back(smt);
      }
      bci::Attribute a;
      a.name_index = cf.cp.add_utf8("Code");
      a.data = bci::write_code(code, false);
      m.attributes.push_back(a);
    }
    cf.methods.push_back(m);
  }
  return cf;
}

}  // namespace bcitest
