// SPDX-License-Identifier: Apache-2.0
// Source line numbers of bytecode locations, with a per-method cache of JVMTI line tables.
#pragma once

#include <jni.h>
#include <jvmti.h>

namespace jvmpi::line_numbers {

// Codes JVMPI agents print as "Unknown line" and "Native method".
constexpr jint kUnknownLine = -1;
constexpr jint kNativeMethod = -3;

// The source line of `location` in `method`; kNativeMethod for native methods (location -1),
// kUnknownLine when the class has no line table.
jint line_of(jmethodID method, jlocation location);

// Called after classes were retransformed, when methods keep their IDs but change their code: the
// tables read so far describe the old code and are no longer used.
void code_changed();

// The lowest and highest line in the method's table; both kUnknownLine when it has none.
void line_range(jmethodID method, jint* first, jint* last);

}  // namespace jvmpi::line_numbers
