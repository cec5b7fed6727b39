// SPDX-License-Identifier: Apache-2.0
// METHOD_ENTRY, METHOD_ENTRY2, METHOD_EXIT and INSTRUCTION_START through bytecode insertion.
//
// JVMTI's own MethodEntry/MethodExit force every thread into the interpreter. Instead, while one of
// these events is enabled, classes are instrumented (libbci) to call the natives of the tracker
// class jvmpi/Tracker, which the runtime registers and which deliver the events. Classes loaded
// earlier are retransformed when the events are enabled, and again (back to their original code)
// when they are all disabled; only those whose code changes: classes with no method the hooks
// could go into keep their bytes and are not passed to RetransformClasses.
#pragma once

#include <jni.h>
#include <jvmti.h>

#include <string>
#include <vector>

namespace jvmpi::method_events {

// OnLoad: puts the tracker jar (beside libjvmpi.so) on the boot class path.
bool prepare(std::string& error);

// VM init: registers the tracker natives and instruments what is already loaded if needed.
void start(JNIEnv* jni);

// The instrumentation step of the class-file load hook: returns true and the new bytes if the
// class was instrumented. `bytes` are the class as the VM (and the agent's CLASS_LOAD_HOOK) left
// it.
bool instrument(JNIEnv* jni, jobject loader, const unsigned char* bytes, jint length,
                std::vector<unsigned char>& out);

// The runtime was attached to a running VM: from now on in this process, classes with a Float or
// Double NaN constant are neither instrumented nor retransformed. HotSpot appends a copy of each
// NaN constant to the class's constant pool at every retransformation (NaN equals nothing when
// the pools are merged), so attach and detach cycles would grow those pools without bound; the
// classes lose method events while attached instead (docs/attach.md).
void keep_nan_classes_out();

// The enabled method or instruction events changed: re-instrument loaded classes to match.
void events_changed();

// The VM is dying (VMDeath): from now on hooks are put in but no longer taken out.
void vm_dying();

// At a detach, once every class has its original code back: frees what the hooks of the
// instrumented classes needed (deferred by one session, see method_events.cpp).
void release_instrumented_classes();

}  // namespace jvmpi::method_events
