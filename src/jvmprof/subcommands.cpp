// SPDX-License-Identifier: Apache-2.0
// The table of jvmprof's subcommands. A new subcommand adds its declaration and one row here.
#include <cstdio>

#include "attach_commands.h"
#include "convert_command.h"
#include "heap_commands.h"
#include "install_agent.h"
#include "query_command.h"
#include "serve_command.h"
#include "subcommand.h"

namespace jvmprof {

std::span<const Subcommand> subcommands() {
  static const Subcommand table[] = {
      {"version", "print jvmprof's version",
       [](std::span<char* const>) -> int {
         std::printf("jvmprof %s\n", JVMPROF_VERSION);
         return 0;
       }},
      {"summary", "counts, sizes and class histogram of a heap dump", run_summary},
      {"dominators", "biggest objects by retained size, with what they retain", run_dominators},
      {"path", "shortest paths from GC roots to an object", run_path},
      {"strings", "duplicate strings and who holds them", run_strings},
      {"diff", "per-class growth between two heap dumps", run_diff},
      {"suspects", "leak suspects with their paths to GC roots", run_suspects},
      {"convert", "CPU/allocation profile to collapsed, pprof, speedscope or HTML", run_convert},
      {"serve", "live profiles from HPROF agents (net=) and saved files in a web UI", run_serve},
      {"jps", "the local JVMs: pid, main class, Java version, attachable", run_jps},
      {"attach", "load HPROF into a running JVM (HPROF's option string)", run_attach},
      {"stop", "final report from an attached HPROF, which then detaches", run_stop},
      {"record", "attach, profile for a while, stop, write txt/html/collapsed/pprof/json",
       run_record},
      {"dump", "heap dump of a running JVM with HotSpot's dumper (.hprof, .hprof.gz)", run_dump},
      {"query", "merged profiles of a time range from a profile store (serve --store)", run_query},
      {"install-agent", "link the HPROF agent into JDKs for -agentlib:hprof", run_install_agent},
  };
  return table;
}

}  // namespace jvmprof
