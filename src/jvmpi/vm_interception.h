// SPDX-License-Identifier: Apache-2.0
// Makes JavaVM->GetEnv answer the JVMPI interface versions. Today's VMs refuse them (JNI_EVERSION
// and a message on stdout), so the VM's invocation table is replaced by a copy whose GetEnv
// answers JVMPI versions itself and passes every other request on. The VM's JavaVM structure is
// patched in place, so agents that reach GetEnv later (JNIEnv->GetJavaVM, JNI_OnLoad of their
// native libraries) get the same answer.
#pragma once

#include <jni.h>

namespace jvmpi::vm_interception {

// Returns the JavaVM to hand to the agent's JVM_OnLoad (the VM's own, once patched).
// `patched_in_place` tells whether later GetEnv calls are covered too.
JavaVM* install(JavaVM* vm, bool* patched_in_place);

}  // namespace jvmpi::vm_interception
