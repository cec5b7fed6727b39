// SPDX-License-Identifier: Apache-2.0
#include "compiled_method_events.h"

#include <jvmpi.h>

#include <vector>

#include "code_ranges.h"
#include "event_gate.h"
#include "known_methods.h"
#include "line_numbers.h"

namespace jvmpi::compiled_method_events {

// The VM posts these from its own service thread, which JVMPI never announces: env_id is NULL.

void JNICALL on_load(jvmtiEnv*, jmethodID method, jint code_size, const void* code_addr,
                     jint map_length, const jvmtiAddrLocationMap* map, const void*) {
  code_ranges::on_compiled_method_load(method, code_addr, code_size);
  if (!gate::wants(JVMPI_EVENT_COMPILED_METHOD_LOAD)) return;
  std::vector<JVMPI_Lineno> lines;
  lines.reserve(static_cast<size_t>(map_length));
  const auto* base = static_cast<const char*>(code_addr);
  for (jint i = 0; i < map_length; ++i) {
    const jint line = line_numbers::line_of(method, map[i].location);
    if (line < 0) continue;
    const auto offset = static_cast<const char*>(map[i].start_address) - base;
    if (!lines.empty() && lines.back().lineno == line) continue;  // same line, later address
    lines.push_back(JVMPI_Lineno{static_cast<jint>(offset), line});
  }
  JVMPI_Event event{};
  event.event_type = JVMPI_EVENT_COMPILED_METHOD_LOAD;
  auto& e = event.u.compiled_method_load;
  e.method_id = known_methods::known_id(method);  // code compiled for an obsolete version too
  e.code_addr = const_cast<void*>(code_addr);
  e.code_size = code_size;
  e.lineno_table_size = static_cast<jint>(lines.size());
  e.lineno_table = lines.data();
  gate::deliver(&event);
}

void JNICALL on_unload(jvmtiEnv*, jmethodID method, const void* code_addr) {
  code_ranges::on_compiled_method_unload(code_addr);
  if (!gate::wants(JVMPI_EVENT_COMPILED_METHOD_UNLOAD)) return;
  JVMPI_Event event{};
  event.event_type = JVMPI_EVENT_COMPILED_METHOD_UNLOAD;
  event.u.compiled_method_unload.method_id = known_methods::known_id(method);
  gate::deliver(&event);
}

}  // namespace jvmpi::compiled_method_events
