// The HEAP DUMP section of java.hprof.txt, from JVMPI's level-2 heap dump.
#pragma once

#include <jvmpi.h>

#include <functional>
#include <string>

#include "allocation_sites.h"
#include "tables.h"

namespace hprof::agent {

// Writes the section through `write`, in pieces of about a megabyte, so a large heap is never
// held as text in memory. Objects HPROF tracked carry their allocation trace and size.
void heap_dump_text(const JVMPI_Event& dump, const ClassTable& classes, const ThreadTable& threads,
                    const AllocationSites& sites,
                    const std::function<void(const std::string&)>& write);

}  // namespace hprof::agent
