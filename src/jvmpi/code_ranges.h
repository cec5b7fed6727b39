// SPDX-License-Identifier: Apache-2.0
// Where the VM's generated code lies, for the CPU-time sampler's signal handler: the stubs and the
// interpreter (JVMTI DynamicCodeGenerated), the code cache (from hotspot_vm_structs.h: the rest of
// it is compiled Java code) and, when the agent enabled CompiledMethodLoad/Unload, each compiled
// method. AsyncGetCallTrace cannot walk a thread stopped inside a stub (an intrinsic such as
// Math.sin, System.arraycopy or CRC32), because stubs have no frame it knows; with these ranges the
// handler can tell such a PC apart and check that a candidate return address leads back into Java
// code before it asks AsyncGetCallTrace again from there.
//
// Writers (the VM's event threads) take a lock; readers never do: the tables are fixed arrays of
// atomics, so a lookup is async-signal-safe. A lookup racing an update may see a stale range; the
// ranges only choose what to try, and AsyncGetCallTrace still validates every frame it walks.
#pragma once

#include <jni.h>
#include <jvmti.h>

#include <cstdint>

namespace jvmpi::code_ranges {

enum class Kind : uint8_t {
  kUnknown,      // not generated code the VM told us about (the VM's C++ code, a library, ...)
  kStub,         // a stub or other generated code that is not Java
  kInterpreter,  // the template interpreter
  kCompiled,     // a compiled Java method (its jmethodID only if CompiledMethodLoad named it)
};

struct Lookup {
  Kind kind = Kind::kUnknown;
  jmethodID method = nullptr;  // for kCompiled
};

// Async-signal-safe.
Lookup find(uintptr_t pc);
// Whether `pc` is in the interpreter or a compiled method: a return address worth a walk.
inline bool is_java_code(uintptr_t pc) {
  const Kind k = find(pc).kind;
  return k == Kind::kInterpreter || k == Kind::kCompiled;
}

// Starts recording (enables DynamicCodeGenerated, asks the VM to replay what it generated before,
// and reads the code cache's bounds). Call in the live phase. Idempotent; recording never stops.
void start_recording();

// JVMTI callbacks (CompiledMethodLoad/Unload come through compiled_method_events).
void JNICALL on_dynamic_code_generated(jvmtiEnv*, const char* name, const void* address,
                                       jint length);
void on_compiled_method_load(jmethodID method, const void* address, jint length);
void on_compiled_method_unload(const void* address);

}  // namespace jvmpi::code_ranges
