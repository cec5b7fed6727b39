// SPDX-License-Identifier: Apache-2.0
// jvmprof strings DUMP: duplicate strings.
#include <cstdio>

#include "heap_cli.h"
#include "heap_commands.h"

namespace jvmprof {

namespace {

const HeapCommand kCommand{
    "strings", "DUMP",
    "Duplicate java.lang.String values: how many copies, the bytes the extra copies waste\n"
    "(their String objects and value arrays), and the classes that refer to them.",
    kTop, 1};

int run(const HeapArgs& args) {
  auto dump = open_dump(kCommand, args.positional[0], args);
  if (!dump) return 1;
  auto r = dump->duplicate_strings(args.top, 3);
  if (args.json) {
    Json top = Json::array();
    for (const auto& d : r.top) {
      Json holders = Json::array();
      for (const auto& [name, count] : d.holders)
        holders.push_back({{"class", name}, {"references", count}});
      top.push_back({{"value", d.value},
                     {"count", d.count},
                     {"wasted_bytes", d.wasted_bytes},
                     {"holders", std::move(holders)}});
    }
    Json j{{"dump", args.positional[0]},
           {"strings", r.strings},
           {"unreachable_strings", r.unreachable_strings},
           {"distinct_values", r.distinct_values},
           {"duplicated_strings", r.duplicated_strings},
           {"wasted_bytes", r.wasted_bytes},
           {"top", std::move(top)}};
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf(
      "%llu strings (%llu of them unreachable: every String in the dump is counted, as jcmd's "
      "histogram counts them), %llu distinct values; %llu strings are duplicates wasting %llu "
      "bytes\n\n",
      static_cast<unsigned long long>(r.strings),
      static_cast<unsigned long long>(r.unreachable_strings),
      static_cast<unsigned long long>(r.distinct_values),
      static_cast<unsigned long long>(r.duplicated_strings),
      static_cast<unsigned long long>(r.wasted_bytes));
  std::printf("%10s %8s  %s\n", "wasted", "copies", "value / held by");
  for (const auto& d : r.top) {
    std::string shown = Json(d.value).dump();  // quoted and escaped
    if (shown.size() > 80) shown = shown.substr(0, 77) + "...";
    std::printf("%10llu %8llu  %s\n", static_cast<unsigned long long>(d.wasted_bytes),
                static_cast<unsigned long long>(d.count), shown.c_str());
    for (const auto& [name, count] : d.holders)
      std::printf("%10s %8s    %llu from %s\n", "", "", static_cast<unsigned long long>(count),
                  name.c_str());
  }
  return 0;
}

}  // namespace

int run_strings(std::span<char* const> args) {
  return run_heap_command(kCommand, args, run);
}

}  // namespace jvmprof
