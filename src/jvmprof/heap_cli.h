// SPDX-License-Identifier: Apache-2.0
// Shared argument handling and output helpers of the heap-analysis subcommands.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "analysis.h"

namespace jvmprof {

using Json = nlohmann::ordered_json;

struct HeapArgs {
  std::vector<std::string> positional;
  bool json = false;
  bool use_index = true;
  std::string index_dir;  // --index-dir: where the index file goes ("" beside the dump)
  bool help = false;
  bool flat = false;  // dominators --flat: every object its own entry, no chains
  uint64_t top = 20;
  uint64_t paths = 3;
  double threshold = 0.10;
};

// The options a subcommand accepts besides --json, --no-index and --help.
enum HeapOption : unsigned { kTop = 1, kPaths = 2, kThreshold = 4, kFlat = 8 };

struct HeapCommand {
  const char* name;      // "summary"
  const char* usage;     // "DUMP"
  const char* describe;  // what it prints, for --help
  unsigned options;      // HeapOption bits
  size_t positional;     // number of positional arguments
};

// Parses args; prints usage and returns false (with *exit_code set) on --help or bad arguments.
bool parse_heap_args(const HeapCommand& command, std::span<char* const> args, HeapArgs& out,
                     int* exit_code);

// Opens a dump, printing one error line and returning null on failure.
std::unique_ptr<analysis::HeapDump> open_dump(const HeapCommand& command, const std::string& path,
                                              const HeapArgs& args);

// Parses the arguments, then runs `body` and turns an analysis::Error into one line and exit 1.
int run_heap_command(const HeapCommand& command, std::span<char* const> args,
                     const std::function<int(const HeapArgs&)>& body);

Json object_json(const analysis::ObjectInfo& o);
Json path_json(const analysis::RootPath& path);
std::string hex_id(uint64_t id);
void print_path(const analysis::RootPath& path, const char* indent);

}  // namespace jvmprof
