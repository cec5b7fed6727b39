// SPDX-License-Identifier: Apache-2.0
// The HEAP DUMP section of java.hprof.txt, from JVMPI's level-2 heap dump.
#pragma once

#include <jvmpi.h>

#include <functional>
#include <memory>
#include <string>

#include "allocation_sites.h"
#include "tables.h"

namespace hprof::agent {

// The section written as the dump's records arrive (streamed in chunks of whole records, or from
// one buffer): add_class before the records that name a class as an instance's class, records in
// order, then finish (the class records, kept until then, and the end line).
class TextHeapDump {
 public:
  TextHeapDump(int level, const ClassTable& classes, const ThreadTable& threads,
               const AllocationSites& sites, std::function<void(const std::string&)> write);
  ~TextHeapDump();
  void add_class(jobjectID id, jobjectID super, uint32_t instance_size);
  void records(const char* begin, const char* end);
  void finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Writes the section through `write`, in pieces of about a megabyte, so a large heap is never
// held as text in memory. Objects HPROF tracked carry their allocation trace and size.
void heap_dump_text(const JVMPI_Event& dump, const ClassTable& classes, const ThreadTable& threads,
                    const AllocationSites& sites,
                    const std::function<void(const std::string&)>& write);

}  // namespace hprof::agent
