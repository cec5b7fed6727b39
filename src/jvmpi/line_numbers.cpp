#include "line_numbers.h"

#include <algorithm>
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

std::shared_mutex g_mutex;
// jmethodIDs are never reused by HotSpot, so entries cannot go stale; the cache holds one small
// table per method that was ever asked about, bounded by the methods the program loads.
std::unordered_map<jmethodID, std::shared_ptr<const LineTable>> g_tables;

std::shared_ptr<const LineTable> table_of(jmethodID method) {
  {
    std::shared_lock lock(g_mutex);
    auto it = g_tables.find(method);
    if (it != g_tables.end()) return it->second;
  }
  auto table = std::make_shared<LineTable>();
  jint count = 0;
  JvmtiPtr<jvmtiLineNumberEntry> entries;
  jvmtiError err = jvmti()->GetLineNumberTable(method, &count, entries.out());
  if (err == JVMTI_ERROR_NONE) {
    table->entries.assign(entries.get(), entries.get() + count);
    std::sort(table->entries.begin(), table->entries.end(),
              [](const auto& a, const auto& b) { return a.start_location < b.start_location; });
  } else if (err != JVMTI_ERROR_ABSENT_INFORMATION && err != JVMTI_ERROR_NATIVE_METHOD) {
    return table;  // transient (e.g. wrong phase): answer without caching
  }
  std::unique_lock lock(g_mutex);
  return g_tables.emplace(method, std::move(table)).first->second;
}

}  // namespace

jint line_of(jmethodID method, jlocation location) {
  if (location < 0) return kNativeMethod;
  auto table = table_of(method);
  const auto& e = table->entries;
  if (e.empty()) return kUnknownLine;
  auto it = std::upper_bound(e.begin(), e.end(), location, [](jlocation loc, const auto& entry) {
    return loc < entry.start_location;
  });
  if (it == e.begin()) return e.front().line_number;
  return std::prev(it)->line_number;
}

void line_range(jmethodID method, jint* first, jint* last) {
  auto table = table_of(method);
  *first = *last = kUnknownLine;
  for (const auto& entry : table->entries) {
    if (*first == kUnknownLine || entry.line_number < *first) *first = entry.line_number;
    if (*last == kUnknownLine || entry.line_number > *last) *last = entry.line_number;
  }
}

}  // namespace jvmpi::line_numbers
