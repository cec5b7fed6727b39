// SPDX-License-Identifier: Apache-2.0
// jvmprof diff OLD NEW: per-class growth between two dumps.
#include <cstdio>

#include "heap_cli.h"
#include "heap_commands.h"

namespace jvmprof {

namespace {

const HeapCommand kCommand{
    "diff", "OLD-DUMP NEW-DUMP",
    "Per-class change from the first dump to the second in instances, shallow bytes and\n"
    "retained bytes, classes matched by name, largest change in shallow bytes first.",
    kTop, 2};

long long delta(int64_t before, int64_t after) {
  return static_cast<long long>(after - before);
}

int run(const HeapArgs& args) {
  auto before = open_dump(kCommand, args.positional[0], args);
  if (!before) return 1;
  auto after = open_dump(kCommand, args.positional[1], args);
  if (!after) return 1;
  auto diff = analysis::diff_classes(*before, *after);
  const size_t shown = std::min<size_t>(diff.size(), args.top);
  if (args.json) {
    Json list = Json::array();
    for (size_t i = 0; i < shown; ++i) {
      const auto& d = diff[i];
      list.push_back({{"class", d.name},
                      {"instances_before", d.instances_before},
                      {"instances_after", d.instances_after},
                      {"shallow_before", d.shallow_before},
                      {"shallow_after", d.shallow_after},
                      {"retained_before", d.retained_before},
                      {"retained_after", d.retained_after}});
    }
    Json j{{"before", args.positional[0]},
           {"after", args.positional[1]},
           {"changed_classes", diff.size()},
           {"classes", std::move(list)}};
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("%zu classes changed (%zu shown)\n", diff.size(), shown);
  std::printf("%12s %14s %14s  %s\n", "+instances", "+shallow", "+retained", "class");
  for (size_t i = 0; i < shown; ++i) {
    const auto& d = diff[i];
    std::printf("%+12lld %+14lld %+14lld  %s\n", delta(d.instances_before, d.instances_after),
                delta(d.shallow_before, d.shallow_after),
                delta(d.retained_before, d.retained_after), d.name.c_str());
  }
  return 0;
}

}  // namespace

int run_diff(std::span<char* const> args) {
  return run_heap_command(kCommand, args, run);
}

}  // namespace jvmprof
