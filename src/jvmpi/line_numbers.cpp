// SPDX-License-Identifier: Apache-2.0
#include "line_numbers.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "jvmti_access.h"

namespace jvmpi::line_numbers {
namespace {

struct LineTable {
  // Sorted by start location.
  std::vector<jvmtiLineNumberEntry> entries;
};

using Tables = std::unordered_map<jmethodID, std::unique_ptr<const LineTable>>;

std::shared_mutex g_mutex;
// One small table per method that was asked about, bounded by the methods the program loads.
// A retransformed method keeps its jmethodID but gets new code, whose locations the old table
// does not describe (the instrumenter moves every line but the first): each retransformation
// starts a new generation and retires the tables, which stay allocated until the next one, so
// that a caller still reading a table it was handed never reads freed memory.
Tables g_tables;
std::vector<std::unique_ptr<const LineTable>> g_retired;
std::atomic<uint64_t> g_generation{0};
const LineTable g_no_table;

// The method's table; `cached` tells whether it came from (or went into) the cache.
const LineTable* table_of(jmethodID method, bool* cached) {
  *cached = true;
  const uint64_t generation = g_generation.load();
  {
    std::shared_lock lock(g_mutex);
    auto it = g_tables.find(method);
    if (it != g_tables.end()) return it->second.get();
  }
  auto table = std::make_unique<LineTable>();
  jint count = 0;
  JvmtiPtr<jvmtiLineNumberEntry> entries;
  jvmtiError err = jvmti()->GetLineNumberTable(method, &count, entries.out());
  if (err == JVMTI_ERROR_NONE) {
    table->entries.assign(entries.get(), entries.get() + count);
    std::sort(table->entries.begin(), table->entries.end(),
              [](const auto& a, const auto& b) { return a.start_location < b.start_location; });
  } else if (err != JVMTI_ERROR_ABSENT_INFORMATION && err != JVMTI_ERROR_NATIVE_METHOD) {
    *cached = false;  // transient (e.g. wrong phase): answer without caching
    return &g_no_table;
  }
  std::unique_lock lock(g_mutex);
  if (g_generation.load() != generation) {
    // Read while the method's code changed: answered from, and kept only as long as, the retired
    // tables; the next reader reads the new code's table.
    *cached = false;
    g_retired.push_back(std::move(table));
    return g_retired.back().get();
  }
  return g_tables.emplace(method, std::move(table)).first->second.get();
}

jint line_in(const LineTable& table, jlocation location) {
  const auto& e = table.entries;
  if (e.empty()) return kUnknownLine;
  auto it = std::upper_bound(e.begin(), e.end(), location, [](jlocation loc, const auto& entry) {
    return loc < entry.start_location;
  });
  if (it == e.begin()) return e.front().line_number;
  return std::prev(it)->line_number;
}

// Stack traces ask for the same few locations over and over (every allocation asks for its
// frames' lines), so each thread remembers recent answers without taking the cache's lock.
struct RecentLine {
  jmethodID method = nullptr;
  jlocation location = 0;
  jint line = 0;
  uint64_t generation = 0;
};
constexpr int kRecentBits = 10;
constexpr size_t kRecentLines = size_t{1} << kRecentBits;
using RecentLines = std::array<RecentLine, kRecentLines>;
thread_local std::unique_ptr<RecentLines> t_recent;

}  // namespace

jint line_of(jmethodID method, jlocation location) {
  if (location < 0) return kNativeMethod;
  if (t_recent == nullptr) t_recent = std::make_unique<RecentLines>();
  const auto key = reinterpret_cast<uintptr_t>(method) ^ (static_cast<uintptr_t>(location) << 20);
  RecentLine& recent = (*t_recent)[(key * 0x9e3779b97f4a7c15ULL) >> (64 - kRecentBits)];
  const uint64_t generation = g_generation.load(std::memory_order_relaxed);
  if (recent.method == method && recent.location == location && recent.generation == generation) {
    return recent.line;
  }
  bool cached = false;
  const jint line = line_in(*table_of(method, &cached), location);
  if (cached) recent = {method, location, line, generation};
  return line;
}

void code_changed() {
  std::unique_lock lock(g_mutex);
  g_generation.fetch_add(1);
  g_retired.clear();  // retired a retransformation ago: no reader still holds one
  g_retired.reserve(g_tables.size());
  for (auto& entry : g_tables) g_retired.push_back(std::move(entry.second));
  g_tables = Tables();
}

void line_range(jmethodID method, jint* first, jint* last) {
  *first = *last = kUnknownLine;
  // Asked for every method of every class at CLASS_LOAD; most never appear in a trace, so their
  // tables are read here without being sorted and kept.
  jint count = 0;
  JvmtiPtr<jvmtiLineNumberEntry> entries;
  if (jvmti()->GetLineNumberTable(method, &count, entries.out()) != JVMTI_ERROR_NONE) return;
  for (jint i = 0; i < count; ++i) {
    const jint line = entries.get()[i].line_number;
    if (*first == kUnknownLine || line < *first) *first = line;
    if (*last == kUnknownLine || line > *last) *last = line;
  }
}

}  // namespace jvmpi::line_numbers
