// SPDX-License-Identifier: Apache-2.0
// Object-view lookups per second: opens a dump (no saved index), takes object ids from the
// histogram's biggest classes, then times, for the same ids in the same order, the three
// requests the web UI's object view makes: object(id), object_detail(id) (a page of fields or
// 100 elements, with each reference's target) and referrers(id) (a page of 100).
// Uses only analysis.h, so bench/analysis/lookups.py builds it against an older library too.
//   analysis_lookup_bench DUMP [SECONDS_PER_KIND] [IDS]
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "analysis.h"

namespace {

double cpu_seconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

double wall_seconds() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Runs `f` on ids in order (wrapping) until `budget` CPU seconds have passed or every id was
// done once and at least `budget` seconds went by; prints calls per CPU-second and per second.
template <typename F>
void measure(const char* kind, const std::vector<uint64_t>& ids, double budget, F&& f) {
  const double cpu0 = cpu_seconds(), wall0 = wall_seconds();
  uint64_t calls = 0, found = 0;
  double cpu = 0;
  do {
    found += f(ids[calls % ids.size()]) ? 1 : 0;
    ++calls;
    cpu = cpu_seconds() - cpu0;
  } while (cpu < budget);
  const double wall = wall_seconds() - wall0;
  std::printf("%s calls %llu found %llu cpu_s %.4f wall_s %.4f per_cpu_s %.1f per_s %.1f\n", kind,
              static_cast<unsigned long long>(calls), static_cast<unsigned long long>(found), cpu,
              wall, static_cast<double>(calls) / cpu, static_cast<double>(calls) / wall);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4 || std::strcmp(argv[1], "--help") == 0) {
    std::fprintf(stderr, "usage: analysis_lookup_bench DUMP [SECONDS_PER_KIND] [IDS]\n");
    return argc >= 2 && std::strcmp(argv[1], "--help") == 0 ? 0 : 2;
  }
  const double budget = argc > 2 ? std::atof(argv[2]) : 3.0;
  const size_t wanted = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 2000;
  if (budget <= 0 || wanted == 0) {
    std::fprintf(stderr, "SECONDS_PER_KIND and IDS must be positive\n");
    return 2;
  }
  try {
    const double open0 = wall_seconds();
    auto dump = analysis::HeapDump::open(argv[1], {.use_index_file = false});
    std::printf("open_s %.2f objects %llu\n", wall_seconds() - open0,
                static_cast<unsigned long long>(dump->summary().objects));
    // Ids spread over the dump: instances of the ten biggest classes, interleaved.
    std::vector<std::vector<uint64_t>> per_class;
    for (const auto& c : dump->class_histogram()) {
      if (per_class.size() == 10) break;
      std::vector<uint64_t> ids;
      for (const auto& o : dump->instances_of(c.name, wanted)) ids.push_back(o.id);
      per_class.push_back(std::move(ids));
    }
    std::vector<uint64_t> ids;
    for (size_t i = 0; ids.size() < wanted; ++i) {
      bool any = false;
      for (const auto& list : per_class)
        if (i < list.size() && ids.size() < wanted) ids.push_back(list[i]), any = true;
      if (!any) break;
    }
    if (ids.empty()) {
      std::fprintf(stderr, "no objects in the dump\n");
      return 1;
    }
    std::printf("ids %zu\n", ids.size());
    // The referrers' reverse index is built on the first request: timed apart, once.
    const double reverse0 = wall_seconds();
    dump->referrers(ids[0], 0, 1);
    std::printf("first_referrers_s %.3f\n", wall_seconds() - reverse0);
    measure("object", ids, budget, [&](uint64_t id) { return dump->object(id).has_value(); });
    measure("object_detail", ids, budget,
            [&](uint64_t id) { return dump->object_detail(id, 0, 100).has_value(); });
    measure("referrers", ids, budget,
            [&](uint64_t id) { return dump->referrers(id, 0, 100).total > 0; });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
