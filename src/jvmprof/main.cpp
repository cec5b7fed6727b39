// SPDX-License-Identifier: Apache-2.0
// jvmprof: dispatches `jvmprof SUBCOMMAND [ARGS...]` to the subcommand's entry point.
#include <cstdio>
#include <cstring>
#include <string_view>

#include "subcommand.h"

namespace {

void print_usage(std::FILE* out) {
  std::fprintf(out,
               "usage: jvmprof SUBCOMMAND [ARGS...]\n       jvmprof --help | --version\n\n"
               "subcommands:\n");
  for (const auto& command : jvmprof::subcommands())
    std::fprintf(out, "  %-16.*s %.*s\n", static_cast<int>(command.name.size()),
                 command.name.data(), static_cast<int>(command.summary.size()),
                 command.summary.data());
  std::fprintf(out, "\n`jvmprof SUBCOMMAND --help` describes a subcommand's arguments.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(stderr);
    return 2;
  }
  std::string_view name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    print_usage(stdout);
    return 0;
  }
  if (name == "--version") name = "version";
  for (const auto& command : jvmprof::subcommands())
    if (command.name == name) return command.run(std::span<char* const>(argv + 2, argc - 2));
  std::fprintf(stderr, "jvmprof: unknown subcommand '%s' (see jvmprof --help)\n", argv[1]);
  return 2;
}
