// SPDX-License-Identifier: Apache-2.0
#include "bci_tree.h"

#include <algorithm>
#include <fstream>
#include <thread>

#include "class_file.h"
#include "code.h"
#include "test_support.h"

namespace bcitest {

namespace {

constexpr uint32_t kFirstClassNumber = 0x10000 + 12345;

void note(std::vector<std::string>& messages, const std::string& m) {
  if (messages.size() < 20) messages.push_back(m);
}

// Returns a description of the first difference, or "" when every part round-trips.
std::string deep_round_trip(bci::ClassFile& cf, RoundTripStats& stats) {
  using namespace bci;
  for (Member& m : cf.methods) {
    Attribute* code_attribute = cf.find_attribute(m, "Code");
    if (!code_attribute) continue;
    ++stats.methods_with_code;
    std::string where = cf.member_name(m) + cf.member_descriptor(m);
    CodeAttribute code = parse_code(*code_attribute, cf.cp, cf.legacy_code_layout());
    if (write_code(code, cf.legacy_code_layout()) != code_attribute->data) {
      return "Code attribute differs in " + where;
    }
    auto instructions = decode_instructions(code, cf.cp);
    size_t length = 0;
    for (const auto& in : instructions) length += in.length;
    if (length != code.code.size()) return "instruction lengths differ in " + where;
    for (const Attribute& a : code.attributes) {
      const std::string& name = cf.cp.utf8(a.name_index);
      std::vector<uint8_t> again;
      if (name == "LineNumberTable") {
        again = write_line_numbers(parse_line_numbers(a));
      } else if (name == "LocalVariableTable" || name == "LocalVariableTypeTable") {
        again = write_local_variables(parse_local_variables(a));
      } else if (name == "StackMapTable") {
        ++stats.stack_maps;
        ConstantPool scratch = cf.cp;  // initial_locals may add Class constants
        auto initial = initial_locals(scratch, cf.this_class, m.access_flags & kAccStatic,
                                      cf.member_name(m) == "<init>", cf.member_descriptor(m));
        auto frames = parse_stack_map(a, scratch, initial, static_cast<uint32_t>(code.code.size()));
        again = write_stack_map(frames, initial, scratch, true);
      } else {
        continue;
      }
      if (again != a.data) return name + " differs in " + where;
    }
  }
  return "";
}

}  // namespace

RoundTripStats round_trip_tree(const std::string& dir) {
  RoundTripStats stats;
  for (const auto& path : class_files(dir)) {
    ++stats.classes;
    auto bytes = read_file(path);
    try {
      bci::ClassFile cf = bci::parse_class(bytes);
      if (bci::write_class(cf) != bytes) {
        ++stats.mismatches;
        note(stats.messages, "class bytes differ: " + path.string());
        continue;
      }
      std::string problem = deep_round_trip(cf, stats);
      if (!problem.empty()) {
        ++stats.mismatches;
        note(stats.messages, path.string() + ": " + problem);
      }
    } catch (const bci::ClassFormatError& e) {
      ++stats.errors;
      note(stats.messages, path.string() + ": " + e.what());
    }
  }
  return stats;
}

InstrumentStats instrument_tree(const std::string& in_dir, const std::string& out_dir,
                                const bci::InjectionOptions& options,
                                const std::string& index_file) {
  std::vector<fs::path> paths;
  for (const auto& path : class_files(in_dir)) {
    if (path.filename() != "module-info.class") paths.push_back(path);
  }
  struct Outcome {
    std::string index_lines;
    std::string error;
    bool changed = false;
    size_t methods = 0;
    size_t without_instruction_hooks = 0;
  };
  std::vector<Outcome> outcomes(paths.size());
  // Class i gets class number kFirstClassNumber + i, above what sipush holds, so that every
  // instrumented class of a sweep passes its number the way the runtime's numbers (which keep
  // growing with every retransformation) eventually are; the work is split over threads by index.
  auto work = [&](size_t first, size_t step) {
    bci::InjectionOptions o = options;
    for (size_t i = first; i < paths.size(); i += step) {
      Outcome& out = outcomes[i];
      fs::path relative = fs::relative(paths[i], in_dir);
      const uint32_t number = kFirstClassNumber + static_cast<uint32_t>(i);
      o.class_number = number;
      try {
        bci::InjectionResult r = bci::instrument(read_file(paths[i]), o);
        out.changed = r.changed;
        std::string binary = r.class_name;
        for (char& c : binary) c = c == '/' ? '.' : c;
        out.index_lines =
            "C " + std::to_string(number) + " " + relative.begin()->string() + " " + binary + "\n";
        for (size_t m = 0; m < r.methods.size(); ++m) {
          const bci::MethodInfo& info = r.methods[m];
          if (info.instrumented) {
            ++out.methods;
            if (options.instructions && !info.instruction_hooks) ++out.without_instruction_hooks;
          }
          out.index_lines += "M " + std::to_string(number) + " " + std::to_string(m) + " " +
                             info.name + " " + info.descriptor + " " +
                             (info.instrumented ? "1" : "0") + "\n";
        }
        write_file(fs::path(out_dir) / relative, r.class_bytes);
      } catch (const bci::ClassFormatError& e) {
        out.error = paths[i].string() + ": " + e.what();
      }
    }
  };
  const size_t threads = std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work, t, threads);
  work(0, threads);
  for (auto& t : pool) t.join();

  InstrumentStats stats;
  std::ofstream index;
  if (!index_file.empty()) {
    if (fs::path(index_file).has_parent_path()) {
      fs::create_directories(fs::path(index_file).parent_path());
    }
    index.open(index_file);
  }
  for (const Outcome& out : outcomes) {
    ++stats.classes;
    if (!out.error.empty()) {
      ++stats.errors;
      note(stats.messages, out.error);
      continue;
    }
    stats.changed += out.changed;
    stats.methods_instrumented += out.methods;
    stats.methods_without_instruction_hooks += out.without_instruction_hooks;
    if (index.is_open()) index << out.index_lines;
  }
  return stats;
}

}  // namespace bcitest
