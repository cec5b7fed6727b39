// SPDX-License-Identifier: Apache-2.0
#include "call_trace_locations.h"

#include <jvmti.h>

#include "jvmti_access.h"
#include "line_numbers.h"
#include "thread_control.h"

namespace jvmpi::call_trace_locations {

void JNICALL get_call_trace_locations(JVMPI_CallTrace* trace, jint depth) {
  if (trace == nullptr) return;
  trace->num_frames = 0;
  // Only the calling thread: the use it is for (a stack per allocation) never asks for another.
  if (depth <= 0 || trace->frames == nullptr || trace->env_id != current_jni_env()) return;
  thread_control::fill_call_trace(nullptr, depth, /*bytecode_indexes=*/true, trace);
}

jint JNICALL line_of_location(jmethodID method, jint location) {
  if (method == nullptr) return line_numbers::kUnknownLine;
  return line_numbers::line_of(method, location);
}

}  // namespace jvmpi::call_trace_locations
