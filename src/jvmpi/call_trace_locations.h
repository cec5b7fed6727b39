// SPDX-License-Identifier: Apache-2.0
// The calling thread's stack with bytecode indexes where GetCallTrace puts source lines, and the
// line of an index on demand (jvmpi_ext.h: GetCallTraceLocations, LineOfLocation). An agent that
// only tells stacks apart, once per allocation, keys on indexes and asks for lines once per
// distinct stack instead of a line-table lookup per frame per allocation.
#pragma once

#include <jvmpi.h>

namespace jvmpi::call_trace_locations {

void JNICALL get_call_trace_locations(JVMPI_CallTrace* trace, jint depth);
jint JNICALL line_of_location(jmethodID method, jint location);

}  // namespace jvmpi::call_trace_locations
