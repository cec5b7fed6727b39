// The table of jvmprof's subcommands. A new subcommand adds its declaration and one row here.
#include <cstdio>

#include "subcommand.h"

namespace jvmprof {

std::span<const Subcommand> subcommands() {
  static const Subcommand table[] = {
      {"version", "print jvmprof's version",
       [](std::span<char* const>) -> int {
         std::printf("jvmprof %s\n", JVMPROF_VERSION);
         return 0;
       }},
  };
  return table;
}

}  // namespace jvmprof
