// SPDX-License-Identifier: Apache-2.0
// jvmprof summary DUMP: counts, sizes and the class histogram.
#include <cstdio>
#include <ctime>

#include "heap_cli.h"
#include "heap_commands.h"

namespace jvmprof {

namespace {

const HeapCommand kCommand{
    "summary", "DUMP",
    "Counts and sizes of a heap dump and its class histogram: instances, shallow bytes and\n"
    "retained bytes per class (the class's instances that no other instance of it dominates).",
    kTop, 1};

std::string date(uint64_t ms) {
  std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  char buf[40];
  if (!gmtime_r(&t, &tm) || !std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm))
    return "?";
  return buf;
}

Json offset_json(uint64_t offset) {
  return offset == analysis::DumpSummary::kNoOffset ? Json() : Json(offset);
}

std::string at(uint64_t offset) {
  return offset == analysis::DumpSummary::kNoOffset
             ? ""
             : " (the first in the object record at byte " + std::to_string(offset) + ")";
}

int run(const HeapArgs& args) {
  auto dump = open_dump(kCommand, args.positional[0], args);
  if (!dump) return 1;
  const analysis::DumpSummary s = dump->summary();
  auto histogram = dump->class_histogram();
  const size_t shown = std::min<size_t>(histogram.size(), args.top);
  if (args.json) {
    Json classes = Json::array();
    for (size_t i = 0; i < shown; ++i)
      classes.push_back({{"class", histogram[i].name},
                         {"instances", histogram[i].instances},
                         {"shallow_bytes", histogram[i].shallow_bytes},
                         {"retained_bytes", histogram[i].retained_bytes}});
    Json j{{"dump", args.positional[0]},
           {"format", s.format},
           {"id_size", s.id_size},
           {"timestamp_ms", s.timestamp_ms},
           {"file_bytes", s.file_bytes},
           {"gzip", s.gzip},
           {"index_reused", s.index_reused},
           {"objects", s.objects},
           {"instances", s.instances},
           {"object_arrays", s.object_arrays},
           {"primitive_arrays", s.primitive_arrays},
           {"classes", s.classes},
           {"gc_roots", s.gc_roots},
           {"shallow_bytes", s.shallow_bytes},
           {"reachable_objects", s.reachable_objects},
           {"reachable_bytes", s.reachable_bytes},
           {"weakly_reachable_objects", s.weakly_reachable_objects},
           {"unreachable_objects", s.unreachable_objects},
           {"unreachable_bytes", s.unreachable_bytes},
           {"dangling_references", s.dangling_references},
           {"first_dangling_offset", offset_json(s.first_dangling_offset)},
           {"unresolved_roots", s.unresolved_roots},
           {"unknown_class_objects", s.unknown_class_objects},
           {"unknown_classes", s.unknown_classes},
           {"first_unknown_class_offset", offset_json(s.first_unknown_class_offset)},
           {"damage_warning", s.damage_warning.empty() ? Json() : Json(s.damage_warning)},
           {"filler_objects", s.filler_objects},
           {"filler_bytes", s.filler_bytes},
           {"class_count", histogram.size()},
           {"histogram", std::move(classes)}};
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("dump:        %s (%s, %u-byte ids%s, %llu bytes, taken %s)\n",
              args.positional[0].c_str(), s.format.c_str(), s.id_size, s.gzip ? ", gzip" : "",
              static_cast<unsigned long long>(s.file_bytes), date(s.timestamp_ms).c_str());
  std::printf(
      "objects:     %llu (%llu instances, %llu object arrays, %llu primitive arrays, "
      "%llu classes), %llu bytes\n",
      static_cast<unsigned long long>(s.objects), static_cast<unsigned long long>(s.instances),
      static_cast<unsigned long long>(s.object_arrays),
      static_cast<unsigned long long>(s.primitive_arrays),
      static_cast<unsigned long long>(s.classes), static_cast<unsigned long long>(s.shallow_bytes));
  std::printf("gc roots:    %llu objects\n", static_cast<unsigned long long>(s.gc_roots));
  std::printf(
      "reachable:   %llu objects, %llu bytes (%llu only through weak/soft/phantom "
      "references)\n",
      static_cast<unsigned long long>(s.reachable_objects),
      static_cast<unsigned long long>(s.reachable_bytes),
      static_cast<unsigned long long>(s.weakly_reachable_objects));
  std::printf("unreachable: %llu objects, %llu bytes (left out of retained sizes)\n",
              static_cast<unsigned long long>(s.unreachable_objects),
              static_cast<unsigned long long>(s.unreachable_bytes));
  std::printf(
      "damage:      %llu references to objects not in the dump%s, %llu root records "
      "naming none, %llu objects of %llu classes the dump never defined%s\n",
      static_cast<unsigned long long>(s.dangling_references), at(s.first_dangling_offset).c_str(),
      static_cast<unsigned long long>(s.unresolved_roots),
      static_cast<unsigned long long>(s.unknown_class_objects),
      static_cast<unsigned long long>(s.unknown_classes), at(s.first_unknown_class_offset).c_str());
  if (!s.damage_warning.empty()) std::printf("warning:     %s\n", s.damage_warning.c_str());
  if (s.filler_objects > 0)
    std::printf(
        "G1 filler:   %llu unreachable int[] at G1's filler layout, %llu bytes (dead space the "
        "dump wrote as int[]): their own histogram row, not int[]\n",
        static_cast<unsigned long long>(s.filler_objects),
        static_cast<unsigned long long>(s.filler_bytes));
  std::printf("index:       %s\n\n", s.index_reused ? "reused" : "built");
  std::printf("class histogram (%zu of %zu classes, by shallow bytes):\n", shown, histogram.size());
  std::printf("%12s %14s %14s  %s\n", "instances", "shallow", "retained", "class");
  for (size_t i = 0; i < shown; ++i)
    std::printf(
        "%12llu %14llu %14llu  %s\n", static_cast<unsigned long long>(histogram[i].instances),
        static_cast<unsigned long long>(histogram[i].shallow_bytes),
        static_cast<unsigned long long>(histogram[i].retained_bytes), histogram[i].name.c_str());
  return 0;
}

}  // namespace

int run_summary(std::span<char* const> args) {
  return run_heap_command(kCommand, args, run);
}

}  // namespace jvmprof
