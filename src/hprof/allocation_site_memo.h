// Finds the site of an allocation (heap=sites) from the allocating stack and the allocated class.
// Every allocation asks, and a program allocates at a few sites over and over: each thread keeps
// a memo of its recent (stack, class) -> site answers, so a repeated site costs one hash of the
// frames and one comparison, without interning the trace or taking the site table's lock.
#pragma once

#include <jvmpi.h>

#include <cstdint>

#include "allocation_sites.h"
#include "tables.h"

namespace hprof::agent {

// The index in `sites` of the site (type, class_id, trace of these frames and thread), created on
// first use. Same answer as sites.site_index({type, class_id, traces.intern(...)}).
uint32_t allocation_site(AllocationSites& sites, TraceTable& traces, const JVMPI_CallFrame* frames,
                         int count, unsigned thread_serial, jint type, jobjectID class_id);

}  // namespace hprof::agent
