// SPDX-License-Identifier: Apache-2.0
// Command-line driver used by the tests and for debugging:
//   bci_tool roundtrip <dir>                     read+write every class, compare bytes
//   bci_tool instrument <in> <out> <tracker> [hooks [index]]   instrument a class tree
//   bci_tool stub <tracker> <file>               write an empty tracker class
// hooks: a string of letters e (entry/exit), r (receiver), o (object init), a (arrays),
// i (instructions); default "eroai".
#include <cstdio>
#include <cstring>
#include <string>

#include "bci.h"
#include "bci_tree.h"
#include "test_support.h"

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "roundtrip") == 0) {
    auto stats = bcitest::round_trip_tree(argv[2]);
    std::printf("classes=%zu mismatches=%zu errors=%zu\n", stats.classes, stats.mismatches,
                stats.errors);
    for (const auto& m : stats.messages) std::printf("%s\n", m.c_str());
    return stats.mismatches + stats.errors == 0 ? 0 : 1;
  }
  if (argc >= 5 && std::strcmp(argv[1], "instrument") == 0) {
    std::string hooks = argc >= 6 ? argv[5] : "eroai";
    bci::InjectionOptions o;
    o.tracker_class = argv[4];
    o.method_entry_exit = hooks.find('e') != std::string::npos;
    o.entry_with_receiver = hooks.find('r') != std::string::npos;
    o.object_init = hooks.find('o') != std::string::npos;
    o.new_arrays = hooks.find('a') != std::string::npos;
    o.instructions = hooks.find('i') != std::string::npos;
    auto stats = bcitest::instrument_tree(argv[2], argv[3], o, argc >= 7 ? argv[6] : "");
    std::printf("classes=%zu changed=%zu methods=%zu without_instruction_hooks=%zu errors=%zu\n",
                stats.classes, stats.changed, stats.methods_instrumented,
                stats.methods_without_instruction_hooks, stats.errors);
    for (const auto& m : stats.messages) std::printf("%s\n", m.c_str());
    return stats.errors == 0 ? 0 : 1;
  }
  if (argc == 4 && std::strcmp(argv[1], "stub") == 0) {
    bcitest::write_file(argv[3], bcitest::stub_tracker_class(argv[2]));
    return 0;
  }
  std::fprintf(stderr,
               "usage: bci_tool roundtrip <dir> | instrument <in> <out> <tracker> [hooks]\n");
  return 2;
}
