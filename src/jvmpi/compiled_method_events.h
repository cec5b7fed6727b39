// SPDX-License-Identifier: Apache-2.0
// COMPILED_METHOD_LOAD (with the code-offset to source-line table) and COMPILED_METHOD_UNLOAD.
#pragma once

#include <jvmti.h>

namespace jvmpi::compiled_method_events {

void JNICALL on_load(jvmtiEnv*, jmethodID method, jint code_size, const void* code_addr,
                     jint map_length, const jvmtiAddrLocationMap* map, const void* compile_info);
void JNICALL on_unload(jvmtiEnv*, jmethodID method, const void* code_addr);

}  // namespace jvmpi::compiled_method_events
