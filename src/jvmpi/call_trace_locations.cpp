#include "call_trace_locations.h"

#include <jvmti.h>

#include <vector>

#include "jvmti_access.h"
#include "line_numbers.h"

namespace jvmpi::call_trace_locations {

void JNICALL get_call_trace_locations(JVMPI_CallTrace* trace, jint depth) {
  if (trace == nullptr) return;
  trace->num_frames = 0;
  // Only the calling thread: the use it is for (a stack per allocation) never asks for another.
  if (depth <= 0 || trace->frames == nullptr || trace->env_id != current_jni_env()) return;
  constexpr jint kOnStack = 64;
  jvmtiFrameInfo on_stack[kOnStack];
  std::vector<jvmtiFrameInfo> on_heap;
  jvmtiFrameInfo* frames = on_stack;
  if (depth > kOnStack) {
    on_heap.resize(static_cast<size_t>(depth));
    frames = on_heap.data();
  }
  jint count = 0;
  if (jvmti()->GetStackTrace(nullptr, 0, depth, frames, &count) != JVMTI_ERROR_NONE) return;
  for (jint i = 0; i < count; ++i) {
    trace->frames[i].method_id = frames[i].method;
    // HotSpot's locations are bytecode indexes (< 65536); a native frame's is -1.
    trace->frames[i].lineno = static_cast<jint>(frames[i].location);
  }
  trace->num_frames = count;
}

jint JNICALL line_of_location(jmethodID method, jint location) {
  if (method == nullptr) return line_numbers::kUnknownLine;
  return line_numbers::line_of(method, location);
}

}  // namespace jvmpi::call_trace_locations
