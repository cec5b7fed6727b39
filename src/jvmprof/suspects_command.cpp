// jvmprof suspects DUMP: leak suspects.
#include <cstdio>

#include "heap_cli.h"
#include "heap_commands.h"

namespace jvmprof {

namespace {

const HeapCommand kCommand{
    "suspects", "DUMP",
    "Leak suspects: the deepest objects of the dominator tree that still retain the threshold\n"
    "share of the reachable heap (where the bytes accumulate), and classes whose instances\n"
    "together retain it while no single instance does; what they retain, and the shortest path\n"
    "from a GC root.",
    kThreshold, 1};

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
      Json content = Json::array();
      for (const auto& c : s.content)
        content.push_back(
            {{"class", c.name}, {"objects", c.instances}, {"bytes", c.shallow_bytes}});
      Json j{{"kind", kind(s)}, {"heap_share", s.heap_share}};
      if (s.kind == analysis::Suspect::Kind::kObject) {
        j["object"] = object_json(s.object);
      } else {
        j["class"] = s.object.class_name;
        j["instances"] = s.instances;
        j["retained_bytes"] = s.object.retained_bytes;
      }
      j["accumulation_point"] = object_json(s.accumulation_point);
      j["content"] = std::move(content);
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
    std::printf("suspect %d: ", ++number);
    if (s.kind == analysis::Suspect::Kind::kObject) {
      const auto& p = s.accumulation_point;
      std::printf("%s %s retains %llu bytes (%.1f%% of the heap)\n", p.class_name.c_str(),
                  hex_id(p.id).c_str(), static_cast<unsigned long long>(p.retained_bytes),
                  100 * s.heap_share);
      if (s.object.id != p.id)
        std::printf("  held by %s %s (retains %llu bytes), directly below the GC roots\n",
                    s.object.class_name.c_str(), hex_id(s.object.id).c_str(),
                    static_cast<unsigned long long>(s.object.retained_bytes));
      std::printf("  what it retains:\n");
    } else {
      std::printf("%llu instances of %s retain %llu bytes (%.1f%% of the heap)\n",
                  static_cast<unsigned long long>(s.instances), s.object.class_name.c_str(),
                  static_cast<unsigned long long>(s.object.retained_bytes), 100 * s.heap_share);
      std::printf("  the biggest, %s %s, retains %llu bytes:\n",
                  s.accumulation_point.class_name.c_str(), hex_id(s.accumulation_point.id).c_str(),
                  static_cast<unsigned long long>(s.accumulation_point.retained_bytes));
    }
    for (const auto& c : s.content)
      std::printf("    %llu bytes in %llu %s\n", static_cast<unsigned long long>(c.shallow_bytes),
                  static_cast<unsigned long long>(c.instances), c.name.c_str());
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
