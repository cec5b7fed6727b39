// SPDX-License-Identifier: Apache-2.0
// Behavioural tests: programs from java/bci-tests are instrumented with bcitest.RecordingTracker,
// run on JDK 17 (and 25 when installed), and must
//  - print exactly what the uninstrumented program prints,
//  - produce the expected method entry/exit sequence (each entry matched by exactly one exit),
//  - report instruction events that follow the original control flow: every instructionIf
//    outcome, switch key and fall-through agrees with the next instruction reported.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>

#include "bci_tree.h"
#include "class_file.h"
#include "code.h"
#include "test_support.h"

namespace bcitest {
namespace {

const fs::path kSourceDir = BCI_TEST_SOURCE_DIR;
constexpr const char* kTracker = "bcitest/RecordingTracker";

struct MethodKey {
  int cls;
  int method;
  auto operator<=>(const MethodKey&) const = default;
};

// The index written by instrument_tree: names and original code of every method.
struct ProgramIndex {
  std::map<int, std::string> class_names;  // binary names
  std::map<MethodKey, std::string> method_names;
  std::map<MethodKey, std::vector<bci::Instruction>> code;
  std::map<MethodKey, std::vector<uint16_t>> handlers;

  std::string name(MethodKey k) const {
    auto it = method_names.find(k);
    return it == method_names.end() ? "?" : it->second;
  }
};

ProgramIndex read_index(const fs::path& index_file, const fs::path& original_dir) {
  ProgramIndex index;
  std::ifstream in(index_file);
  std::string kind;
  while (in >> kind) {
    if (kind == "C") {
      int cls;
      std::string first, binary;
      in >> cls >> first >> binary;
      index.class_names[cls] = binary;
      std::string path = binary;
      std::replace(path.begin(), path.end(), '.', '/');
      bci::ClassFile cf = bci::parse_class(read_file(original_dir / (path + ".class")));
      for (size_t i = 0; i < cf.methods.size(); ++i) {
        bci::Attribute* a = cf.find_attribute(cf.methods[i], "Code");
        if (!a) continue;
        bci::CodeAttribute code = bci::parse_code(*a, cf.cp, false);
        MethodKey key{cls, static_cast<int>(i)};
        index.code[key] = bci::decode_instructions(code, cf.cp);
        for (const auto& e : code.exceptions) index.handlers[key].push_back(e.handler_pc);
      }
    } else {
      int cls, method, instrumented;
      std::string name, descriptor;
      in >> cls >> method >> name >> descriptor >> instrumented;
      std::string simple = index.class_names[cls];
      simple = simple.substr(simple.find('.') + 1);
      index.method_names[{cls, method}] =
          simple + "." + name + (name == "<init>" ? descriptor : "");
    }
  }
  return index;
}

struct Event {
  char kind;
  MethodKey method{0, 0};
  int offset = -1;
  std::vector<int64_t> args;  // F: taken; T: key low high; L: key pairs
  std::string rest;           // > : receiver; A: array type and length
};

std::vector<Event> read_events(const fs::path& file) {
  std::vector<Event> events;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    Event e;
    s >> e.kind;
    if (e.kind == 'A' || e.kind == 'M') {
      std::getline(s >> std::ws, e.rest);
    } else {
      s >> e.method.cls >> e.method.method;
      if (e.kind == '>') {
        std::getline(s >> std::ws, e.rest);
      } else if (e.kind != '<') {
        s >> e.offset;
        int64_t v;
        while (s >> v) e.args.push_back(v);
      }
    }
    events.push_back(std::move(e));
  }
  return events;
}

// Entry/exit (and array) events with method names: the expected-sequence text.
std::string call_trace(const std::vector<Event>& events, const ProgramIndex& index) {
  std::string out;
  int depth = 0;
  for (const Event& e : events) {
    if (e.kind == '>') {
      // Lambda proxy classes have generated names.
      static const std::regex lambda("\\$\\$Lambda\\S*");
      std::string receiver = std::regex_replace(e.rest, lambda, "$$$$Lambda");
      out += std::string(2 * depth, ' ') + "> " + index.name(e.method) +
             (receiver.empty() ? "" : " " + receiver) + "\n";
      ++depth;
    } else if (e.kind == '<') {
      depth = std::max(depth - 1, 0);
      out += std::string(2 * depth, ' ') + "< " + index.name(e.method) + "\n";
    } else if (e.kind == 'A') {
      out += std::string(2 * depth, ' ') + "new array " + e.rest + "\n";
    } else if (e.kind == 'M') {
      out += std::string(2 * depth, ' ') + "monitor exit " + e.rest + "\n";
    }
  }
  return out;
}

// The monitor hook runs before the release: the thread must still hold the monitor each time.
size_t expect_monitors_held(const std::vector<Event>& events) {
  size_t count = 0;
  for (const Event& e : events) {
    if (e.kind != 'M') continue;
    ++count;
    EXPECT_EQ(e.rest.rfind("held ", 0), 0u) << "monitorExit of a monitor not held: " << e.rest;
  }
  return count;
}

// Each entry must be matched by exactly one exit of the same method, in stack order.
void expect_balanced(const std::vector<Event>& events, const ProgramIndex& index) {
  std::vector<MethodKey> stack;
  size_t entries = 0;
  for (const Event& e : events) {
    if (e.kind == '>') {
      stack.push_back(e.method);
      ++entries;
    } else if (e.kind == '<') {
      ASSERT_FALSE(stack.empty()) << "exit of " << index.name(e.method) << " without entry";
      ASSERT_EQ(stack.back(), e.method)
          << "exit of " << index.name(e.method) << " while in " << index.name(stack.back());
      stack.pop_back();
    }
  }
  EXPECT_TRUE(stack.empty()) << stack.size() << " entries without exit";
  EXPECT_GT(entries, 0u);
}

// Checks that consecutive instruction events of one activation follow the original code.
void expect_consistent_instructions(const std::vector<Event>& events, const ProgramIndex& index) {
  struct Activation {
    MethodKey method;
    bool entered;  // constructors run code before reporting entry
    const Event* last = nullptr;
  };
  std::vector<Activation> stack;
  size_t checked = 0, branches = 0, switches = 0;
  auto find = [&](MethodKey k, int offset) -> const bci::Instruction* {
    const auto& code = index.code.at(k);
    auto it = std::lower_bound(
        code.begin(), code.end(), offset,
        [](const bci::Instruction& in, int o) { return static_cast<int>(in.offset) < o; });
    return it != code.end() && static_cast<int>(it->offset) == offset ? &*it : nullptr;
  };
  for (const Event& e : events) {
    if (e.kind == 'A' || e.kind == 'M') continue;
    if (e.kind == '>') {
      if (!stack.empty() && !stack.back().entered && stack.back().method == e.method) {
        stack.back().entered = true;
      } else {
        stack.push_back({e.method, true});
      }
      continue;
    }
    if (e.kind == '<') {
      ASSERT_FALSE(stack.empty());
      stack.pop_back();
      continue;
    }
    if (stack.empty() || stack.back().method != e.method) {
      stack.push_back({e.method, false});  // constructor code before super()
    }
    Activation& a = stack.back();
    const bci::Instruction* now = find(e.method, e.offset);
    ASSERT_NE(now, nullptr) << index.name(e.method) << ": no instruction at " << e.offset;
    if (a.last) {
      const Event& p = *a.last;
      const bci::Instruction* prev = find(e.method, p.offset);
      const auto& handlers =
          index.handlers.count(e.method) ? index.handlers.at(e.method) : std::vector<uint16_t>{};
      bool to_handler = std::find(handlers.begin(), handlers.end(), e.offset) != handlers.end();
      int fallthrough = static_cast<int>(prev->offset + prev->length);
      int expected = -1;
      if (p.kind == 'F') {
        expected = p.args.at(0) ? prev->target : fallthrough;
        ++branches;
      } else if (p.kind == 'T') {
        int64_t key = p.args.at(0);
        const bci::SwitchOperands& sw = *prev->switch_operands;
        EXPECT_EQ(p.args.at(1), sw.low);
        EXPECT_EQ(p.args.at(2), sw.high);
        expected = key >= sw.low && key <= sw.high ? sw.targets[key - sw.low] : prev->target;
        ++switches;
      } else if (p.kind == 'L') {
        const bci::SwitchOperands& sw = *prev->switch_operands;
        auto it = std::find(sw.keys.begin(), sw.keys.end(), p.args.at(0));
        EXPECT_EQ(p.args.at(1), static_cast<int64_t>(sw.keys.size()));
        expected = it == sw.keys.end() ? prev->target : sw.targets[it - sw.keys.begin()];
        ++switches;
      } else if (prev->opcode == bci::op::kGoto || prev->opcode == bci::op::kGotoW ||
                 prev->opcode == bci::op::kJsr || prev->opcode == bci::op::kJsrW) {
        expected = prev->target;
      } else if (prev->opcode == bci::op::kRet) {
        expected = e.offset;  // the return address is not tracked here
      } else if (prev->opcode == bci::op::kAthrow) {
        EXPECT_TRUE(to_handler) << index.name(e.method) << ": athrow at " << prev->offset
                                << " continued at " << e.offset;
        expected = e.offset;
      } else {
        EXPECT_FALSE(bci::is_return(prev->opcode))
            << index.name(e.method) << ": code after return at " << prev->offset;
        expected = to_handler ? e.offset : fallthrough;  // an exception may leave anything
      }
      EXPECT_EQ(e.offset, expected)
          << index.name(e.method) << ": after " << p.kind << " at " << p.offset;
      ++checked;
    }
    a.last = &e;
  }
  std::cout << "instruction events checked: " << checked << " (" << branches
            << " conditional branches, " << switches << " switches)\n";
  EXPECT_GT(checked, 200u);
}

struct ProgramRun {
  std::string output;
  std::vector<Event> events;
  ProgramIndex index;
};

class Behaviour : public ::testing::Test {
 protected:
  // Instruments the classes of `package` from in_dir and runs main_class on jdk.
  ProgramRun run(const Jdk& jdk, const fs::path& in_dir, const std::string& main_class,
                 const bci::InjectionOptions& options, const std::string& tag) {
    ProgramRun r;
    const fs::path work = build_dir() / "tests/bci/behaviour" / (jdk.name + "-" + tag);
    fs::remove_all(work);
    InstrumentStats stats = instrument_tree(in_dir, work / "classes", options, work / "index");
    EXPECT_EQ(stats.errors, 0u);
    for (const auto& m : stats.messages) ADD_FAILURE() << m;
    r.index = read_index(work / "index", in_dir);
    CommandResult c = run_command(
        jdk.java() + " -XX:+UnlockDiagnosticVMOptions -XX:+BytecodeVerificationRemote -cp " +
            java_classes_dir().string() + " bcitest.BehaviourRunner " +
            (work / "classes").string() + " " + main_class + " " + (work / "events").string(),
        90);
    EXPECT_EQ(c.exit_code, 0) << c.output;
    r.output = c.output;
    r.events = read_events(work / "events");
    return r;
  }

  std::string uninstrumented(const Jdk& jdk, const fs::path& classes,
                             const std::string& main_class) {
    CommandResult c = run_command(jdk.java() + " -cp " + java_classes_dir().string() +
                                      " bcitest.BehaviourRunner " + classes.string() + " " +
                                      main_class + " /dev/null",
                                  90);
    EXPECT_EQ(c.exit_code, 0) << c.output;
    return c.output;
  }

  void expect_trace(const ProgramRun& r, const std::string& expected_file) {
    std::string trace = call_trace(r.events, r.index);
    if (std::getenv("BCI_UPDATE_EXPECTED")) {  // regenerate after a reviewed change
      std::ofstream(kSourceDir / expected_file) << trace;
    }
    std::string expected = read_text(kSourceDir / expected_file);
    EXPECT_TRUE(trace == expected) << "expected " << expected_file << ", got:\n" << trace;
  }
};

std::vector<Jdk> jdks() {
  return {jdk17(), jdk25()};
}

bci::InjectionOptions entry_exit_only() {
  bci::InjectionOptions o;
  o.tracker_class = kTracker;
  o.method_entry_exit = true;
  o.new_arrays = true;
  return o;
}

TEST_F(Behaviour, CallSequence) {
  const fs::path in = build_dir() / "tests/bci/behaviour/call-sequence-in";
  fs::remove_all(in);
  fs::create_directories(in);
  fs::copy(java_classes_dir() / "bciprog", in / "bciprog", fs::copy_options::recursive);
  for (const Jdk& jdk : jdks()) {
    if (!jdk.present()) {
      std::cout << jdk.name << " not installed at " << jdk.home << ": skipped\n";
      continue;
    }
    SCOPED_TRACE(jdk.name);
    std::string plain = uninstrumented(jdk, in, "bciprog.CallSequence");
    ProgramRun all = run(jdk, in, "bciprog.CallSequence", all_hooks(kTracker, 0), "all-hooks");
    EXPECT_EQ(all.output, plain);
    expect_balanced(all.events, all.index);
    expect_trace(all, "call_sequence_receiver.expected");
    expect_consistent_instructions(all.events, all.index);
    // syncAdd, syncStatic, syncBlock and syncThrows: each release seen once.
    EXPECT_EQ(expect_monitors_held(all.events), 4u);

    ProgramRun simple = run(jdk, in, "bciprog.CallSequence", entry_exit_only(), "entry-exit");
    EXPECT_EQ(simple.output, plain);
    expect_balanced(simple.events, simple.index);
    expect_trace(simple, "call_sequence.expected");
  }
}

// Version 49 classes: no StackMapTable, the old verifier, and jsr/ret.
TEST_F(Behaviour, OldClassFilesWithJsr) {
  const fs::path in = build_dir() / "tests/bci/behaviour/old-in";
  fs::remove_all(in);
  for (const auto& path : class_files(java_classes_dir() / "bciold")) {
    bci::ClassFile cf = bci::parse_class(read_file(path));
    cf.major_version = 49;
    cf.minor_version = 0;
    for (bci::Member& m : cf.methods) {
      bci::Attribute* a = cf.find_attribute(m, "Code");
      if (!a) continue;
      bci::CodeAttribute code = bci::parse_code(*a, cf.cp, false);
      std::erase_if(code.attributes, [&](const bci::Attribute& x) {
        return cf.cp.utf8(x.name_index) == "StackMapTable";
      });
      if (cf.member_name(m) == "jsrDemo") {
        code.max_stack = 2;
        code.max_locals = 2;
        code.code = {
            0x1a,              //  0: iload_0
            0x9c, 0x00, 0x08,  //  1: ifge 9
            0xa8, 0x00, 0x0c,  //  4: jsr 16
            0x02,              //  7: iconst_m1
            0xac,              //  8: ireturn
            0xa8, 0x00, 0x07,  //  9: jsr 16
            0x1a,              // 12: iload_0
            0x05,              // 13: iconst_2
            0x68,              // 14: imul
            0xac,              // 15: ireturn
            0x4c,              // 16: astore_1
            0x00,              // 17: nop
            0xa9, 0x01,        // 18: ret 1
        };
        code.exceptions.clear();
        std::erase_if(code.attributes, [](const bci::Attribute&) { return true; });
      }
      a->data = bci::write_code(code, false);
    }
    write_file(in / "bciold" / path.filename(), bci::write_class(cf));
  }
  for (const Jdk& jdk : jdks()) {
    if (!jdk.present()) {
      std::cout << jdk.name << " not installed at " << jdk.home << ": skipped\n";
      continue;
    }
    SCOPED_TRACE(jdk.name);
    std::string plain = uninstrumented(jdk, in, "bciold.OldStyle");
    EXPECT_EQ(plain,
              "10 -1\njava.lang.IllegalArgumentException\n49\n"
              "java.lang.IllegalStateException\ncounter 2\n99\n2\n");
    ProgramRun all = run(jdk, in, "bciold.OldStyle", all_hooks(kTracker, 0), "old-all-hooks");
    EXPECT_EQ(all.output, plain);
    expect_balanced(all.events, all.index);
    expect_trace(all, "old_style.expected");
    expect_consistent_instructions(all.events, all.index);
    expect_monitors_held(all.events);
  }
}

}  // namespace
}  // namespace bcitest
