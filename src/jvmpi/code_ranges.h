// Where the VM's generated code lies, for the CPU-time sampler's signal handler: the stubs and the
// interpreter (JVMTI DynamicCodeGenerated) and the compiled methods (CompiledMethodLoad/Unload).
// AsyncGetCallTrace cannot walk a thread stopped inside a stub (an intrinsic such as Math.sin,
// System.arraycopy or CRC32), because stubs have no frame it knows; with these ranges the handler
// can tell such a PC apart and check that a candidate return address leads back into Java code
// before it asks AsyncGetCallTrace again from there.
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
  kCompiled,     // a compiled Java method
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

// Starts recording (enables the events and asks the VM to replay what it generated before).
// Call in the live phase. Idempotent; recording never stops once started.
void start_recording();
// Whether CompiledMethodLoad must stay enabled for the ranges' sake (event_control asks).
bool wants_compiled_method_events();

// JVMTI callbacks (CompiledMethodLoad/Unload come through compiled_method_events).
void JNICALL on_dynamic_code_generated(jvmtiEnv*, const char* name, const void* address,
                                       jint length);
void on_compiled_method_load(jmethodID method, const void* address, jint length);
void on_compiled_method_unload(const void* address);

}  // namespace jvmpi::code_ranges
