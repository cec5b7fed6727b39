// SPDX-License-Identifier: Apache-2.0
// `jvmprof jps`: the JVMs on this machine (containers included), like `jps -l`, with their Java
// version and whether jvmprof can attach to them.
#include <cstdio>
#include <string>

#include "attach.h"
#include "attach_commands.h"

namespace jvmprof {

int run_jps(std::span<char* const> args) {
  bool header = true;
  for (const char* a : args) {
    const std::string arg = a;
    if (arg == "--help" || arg == "-h") {
      std::printf(
          "usage: jvmprof jps [--no-header]\n\n"
          "Lists the Java VMs this user can see: pid, main class or jar, Java version and\n"
          "whether `jvmprof attach` can attach (\"no: <reason>\" when not). Read from\n"
          "HotSpot's performance-data files (/tmp/hsperfdata_*, also in containers) and /proc;\n"
          "no JDK tools needed.\n");
      return 0;
    }
    if (arg == "--no-header") {
      header = false;
      continue;
    }
    std::fprintf(stderr, "jvmprof jps: unexpected argument '%s' (see --help)\n", a);
    return 2;
  }
  const auto jvms = attach::local_jvms();
  if (header) std::printf("%-8s %-10s %-6s %s\n", "PID", "JAVA", "ATTACH", "MAIN");
  for (const auto& j : jvms) {
    const std::string attach = j.attachable ? "yes" : "no";
    std::printf("%-8d %-10s %-6s %s%s\n", static_cast<int>(j.pid),
                j.java_version.empty() ? "?" : j.java_version.c_str(), attach.c_str(),
                j.main.empty() ? "?" : j.main.c_str(),
                j.attachable ? "" : ("  (" + j.why_not + ")").c_str());
  }
  return 0;
}

}  // namespace jvmprof
