// SPDX-License-Identifier: Apache-2.0
// MONITOR_DUMP: every Java monitor in use (owned, or waited for) and every JVMPI raw monitor in
// use, with owner, entry count and waiting threads, plus the trace and status of every thread.
#pragma once

#include <jni.h>
#include <jvmpi.h>

namespace jvmpi::monitor_dump {

jint request_monitor_dump(JNIEnv* jni);

}  // namespace jvmpi::monitor_dump
