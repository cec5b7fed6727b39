// SPDX-License-Identifier: Apache-2.0
#include "alloc_report.h"

#include <jvmpi.h>

#include <fstream>
#include <sstream>

namespace jvmpiheap {

std::string allocated_class_name(int is_array, const std::string& class_name) {
  switch (is_array) {
    case JVMPI_NORMAL_OBJECT:
      return class_name;
    case JVMPI_CLASS:
      // CLASS_LOAD names array classes by their descriptor ("[I"), others by dotted name.
      return !class_name.empty() && class_name[0] == '[' ? "[" + class_name
                                                         : "[L" + class_name + ";";
    case JVMPI_BOOLEAN:
      return "[Z";
    case JVMPI_BYTE:
      return "[B";
    case JVMPI_CHAR:
      return "[C";
    case JVMPI_SHORT:
      return "[S";
    case JVMPI_INT:
      return "[I";
    case JVMPI_LONG:
      return "[J";
    case JVMPI_FLOAT:
      return "[F";
    case JVMPI_DOUBLE:
      return "[D";
    default:
      return "?type" + std::to_string(is_array);
  }
}

AllocReport read_alloc_report(const std::string& path) {
  AllocReport report;
  std::ifstream in(path);
  if (!in) return report;
  report.present = true;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string first;
    s >> first;
    if (first == "stat") {
      std::string label, name;
      int is_array = 0;
      AllocStat stat;
      s >> label >> is_array >> name >> stat.total >> stat.freed >> stat.min_size >> stat.max_size;
      const std::string key = allocated_class_name(is_array, name == "-" ? "" : name);
      auto& slot = report.stats[{label, key}];
      // Two class IDs with the same name (should not happen for our classes) are summed.
      slot.total += stat.total;
      slot.freed += stat.freed;
      slot.min_size = slot.min_size == 0 ? stat.min_size : std::min(slot.min_size, stat.min_size);
      slot.max_size = std::max(slot.max_size, stat.max_size);
    } else if (!first.empty()) {
      long v = 0;
      s >> v;
      report.counters[first] = v;
    }
  }
  return report;
}

}  // namespace jvmpiheap
