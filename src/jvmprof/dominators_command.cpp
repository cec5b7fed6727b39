// SPDX-License-Identifier: Apache-2.0
// jvmprof dominators DUMP: the objects retaining the most, with what they retain.
#include <cstdio>

#include "heap_cli.h"
#include "heap_commands.h"

namespace jvmprof {

namespace {

const HeapCommand kCommand{
    "dominators", "DUMP",
    "The objects with the largest retained sizes (dominator tree by Lengauer-Tarjan), each with\n"
    "its retained set by class. Weak, soft and phantom referents and the finalizer queue do not\n"
    "retain; unreachable objects are left out. An object and the chain of single-child\n"
    "dominators below it (each the only object its predecessor dominates: the same bytes)\n"
    "are one entry, headed by the top of the chain; --flat lists each apart.",
    kTop | kFlat, 1};

int run(const HeapArgs& args) {
  auto dump = open_dump(kCommand, args.positional[0], args);
  if (!dump) return 1;
  auto objects = dump->biggest_objects(args.top, 5, !args.flat);
  const auto s = dump->summary();
  if (args.json) {
    Json list = Json::array();
    for (const auto& b : objects) {
      Json j = object_json(b.object);
      j["retained_objects"] = b.retained_objects;
      Json classes = Json::array();
      for (const auto& c : b.retained_by_class)
        classes.push_back(
            {{"class", c.name}, {"objects", c.instances}, {"bytes", c.shallow_bytes}});
      j["retained_by_class"] = std::move(classes);
      if (!args.flat) {
        Json chain = Json::array();
        for (const auto& c : b.chain) chain.push_back(object_json(c));
        j["chain"] = std::move(chain);
        j["chain_length"] = b.chain_length;
      }
      list.push_back(std::move(j));
    }
    Json j{{"dump", args.positional[0]},
           {"reachable_bytes", s.reachable_bytes},
           {"unreachable_objects", s.unreachable_objects},
           {"grouped", !args.flat},
           {"objects", std::move(list)}};
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("reachable heap: %llu bytes; %llu unreachable objects left out\n\n",
              static_cast<unsigned long long>(s.reachable_bytes),
              static_cast<unsigned long long>(s.unreachable_objects));
  std::printf("%14s %8s %10s  %s\n", "retained", "%heap", "shallow", "object");
  for (const auto& b : objects) {
    double share = s.reachable_bytes ? 100.0 * static_cast<double>(b.object.retained_bytes) /
                                           static_cast<double>(s.reachable_bytes)
                                     : 0;
    std::printf("%14llu %7.2f%% %10llu  %s %s (%llu objects)\n",
                static_cast<unsigned long long>(b.object.retained_bytes), share,
                static_cast<unsigned long long>(b.object.shallow_bytes),
                b.object.class_name.c_str(), hex_id(b.object.id).c_str(),
                static_cast<unsigned long long>(b.retained_objects));
    for (const auto& c : b.chain)
      std::printf("%14s %8s %10llu    -> %s %s (retained %llu)\n", "", "",
                  static_cast<unsigned long long>(c.shallow_bytes), c.class_name.c_str(),
                  hex_id(c.id).c_str(), static_cast<unsigned long long>(c.retained_bytes));
    if (b.chain_length > b.chain.size())
      std::printf("%14s %8s %10s    -> ... %llu more single-child dominators\n", "", "", "",
                  static_cast<unsigned long long>(b.chain_length - b.chain.size()));
    for (const auto& c : b.retained_by_class)
      std::printf("%14s %8s %10s    %llu bytes in %llu %s\n", "", "", "",
                  static_cast<unsigned long long>(c.shallow_bytes),
                  static_cast<unsigned long long>(c.instances), c.name.c_str());
  }
  return 0;
}

}  // namespace

int run_dominators(std::span<char* const> args) {
  return run_heap_command(kCommand, args, run);
}

}  // namespace jvmprof
