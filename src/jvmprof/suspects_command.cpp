// SPDX-License-Identifier: Apache-2.0
// jvmprof suspects DUMP: leak suspects.
#include <cstdio>

#include "heap_cli.h"
#include "heap_commands.h"

namespace jvmprof {

namespace {

const HeapCommand kCommand{
    "suspects", "DUMP",
    "Leak suspects: the deepest objects of the dominator tree that still retain the threshold\n"
    "share of the reachable heap (where the bytes accumulate), shown as the top of their chain\n"
    "of single-child dominators (the map, not its table), and classes whose instances outside\n"
    "them together retain it; a class that is mostly the same memory is merged into them.\n"
    "Ranked by the bytes each alone accounts for; each starts with its holder (the field or\n"
    "root referring to it), then what it retains and the shortest path from a GC root.",
    kThreshold, 1};

Json classes_json(const std::vector<analysis::ClassStats>& classes) {
  Json out = Json::array();
  for (const auto& c : classes)
    out.push_back({{"class", c.name}, {"objects", c.instances}, {"bytes", c.shallow_bytes}});
  return out;
}

int run(const HeapArgs& args) {
  auto dump = open_dump(kCommand, args.positional[0], args);
  if (!dump) return 1;
  auto suspects = dump->suspects(args.threshold);
  auto kind = [](const analysis::Suspect& s) {
    return s.kind == analysis::Suspect::Kind::kObject ? "object" : "class";
  };
  if (args.json) {
    Json list = Json::array();
    for (const auto& s : suspects) {
      Json j{{"kind", kind(s)},
             {"held_by", s.held_by},
             {"holder", s.holder ? object_json(*s.holder) : Json()},
             {"holder_via", s.holder_via},
             {"distinct_bytes", s.distinct_bytes},
             {"heap_share", s.heap_share}};
      if (s.kind == analysis::Suspect::Kind::kObject) {
        j["object"] = object_json(s.object);
      } else {
        j["class"] = s.object.class_name;
        j["instances"] = s.instances;
        j["retained_bytes"] = s.object.retained_bytes;
      }
      j["accumulation_point"] = object_json(s.accumulation_point);
      j["content"] = classes_json(s.content);
      j["merged_classes"] = classes_json(s.merged_classes);
      j["path"] = path_json(s.path);
      list.push_back(std::move(j));
    }
    Json j{
        {"dump", args.positional[0]}, {"threshold", args.threshold}, {"suspects", std::move(list)}};
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  if (suspects.empty()) {
    std::printf("no object or class retains %.1f%% of the heap\n", args.threshold * 100);
    return 0;
  }
  int number = 0;
  for (const auto& s : suspects) {
    // The holder first: what to look for in the code (for a class, its biggest instance's).
    const auto& p = s.accumulation_point;
    if (s.kind == analysis::Suspect::Kind::kObject) {
      std::printf("suspect %d: %s holds %llu bytes (%.1f%% of the heap)\n", ++number,
                  s.held_by.c_str(), static_cast<unsigned long long>(s.distinct_bytes),
                  100 * s.heap_share);
      std::printf("  in %s %s (retains %llu bytes)", s.object.class_name.c_str(),
                  hex_id(s.object.id).c_str(),
                  static_cast<unsigned long long>(s.object.retained_bytes));
      if (s.object.id != p.id)
        std::printf(", accumulating in %s %s", p.class_name.c_str(), hex_id(p.id).c_str());
      std::printf("\n  what it retains:\n");
    } else {
      std::printf(
          "suspect %d: %llu instances of %s hold %llu bytes (%.1f%% of the heap) outside the "
          "suspects above (%llu in all)\n",
          ++number, static_cast<unsigned long long>(s.instances), s.object.class_name.c_str(),
          static_cast<unsigned long long>(s.distinct_bytes), 100 * s.heap_share,
          static_cast<unsigned long long>(s.object.retained_bytes));
      std::printf("  the biggest, %s %s, held by %s, retains %llu bytes:\n", p.class_name.c_str(),
                  hex_id(p.id).c_str(), s.held_by.c_str(),
                  static_cast<unsigned long long>(p.retained_bytes));
    }
    for (const auto& c : s.content)
      std::printf("    %llu bytes in %llu %s\n", static_cast<unsigned long long>(c.shallow_bytes),
                  static_cast<unsigned long long>(c.instances), c.name.c_str());
    for (const auto& c : s.merged_classes)
      std::printf("  also the suspect class %s: %llu of its instances (%llu bytes) are here\n",
                  c.name.c_str(), static_cast<unsigned long long>(c.instances),
                  static_cast<unsigned long long>(c.shallow_bytes));
    if (s.path.empty()) {
      std::printf("  no strong path from a GC root (reachable only through weak references)\n");
    } else {
      std::printf("  path from a GC root:\n");
      print_path(s.path, "    ");
    }
    std::printf("\n");
  }
  return 0;
}

}  // namespace

int run_suspects(std::span<char* const> args) {
  return run_heap_command(kCommand, args, run);
}

}  // namespace jvmprof
