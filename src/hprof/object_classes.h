// SPDX-License-Identifier: Apache-2.0
// The class of an object HPROF meets only by ID (a monitor), found with RequestEvent(OBJECT_ALLOC).
#pragma once

#include <jvmpi.h>

#include <string>

namespace hprof::agent {

// "java.lang.Object" style name, or "<Unknown Class>".
std::string class_name_of_object(jobjectID object);

}  // namespace hprof::agent
