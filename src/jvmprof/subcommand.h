// SPDX-License-Identifier: Apache-2.0
// A jvmprof subcommand: a name, a one-line summary for `jvmprof --help`, and its entry point,
// which gets the arguments after the subcommand's name and returns the process exit status.
#pragma once

#include <span>
#include <string_view>

namespace jvmprof {

struct Subcommand {
  std::string_view name;
  std::string_view summary;
  int (*run)(std::span<char* const> args);
};

// Every subcommand, in the order `jvmprof --help` lists them.
std::span<const Subcommand> subcommands();

}  // namespace jvmprof
