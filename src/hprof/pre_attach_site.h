// SPDX-License-Identifier: Apache-2.0
// heap=sites in a running VM: the objects that were live when HPROF was attached, counted per
// class under one site whose trace is a single pseudo frame, "<allocated before profiling>".
// Where they were allocated nobody saw, so the report says so instead of dropping or guessing.
#pragma once

#include <string>

#include "profile.h"

namespace hprof::agent {

// The class and method names of the pseudo frame (text report:
// "<allocated before profiling>.live_at_attach(<Unknown Source>:Unknown line)").
inline constexpr const char* kBeforeProfilingClass = "<allocated before profiling>";
inline constexpr const char* kBeforeProfilingMethod = "live_at_attach";

// Counts the live objects of every class (the runtime's ClassHistogram: a full collection and a
// heap walk) into `p.sites` under the pre-attach site. Call before allocation events are enabled,
// so that no object is counted twice. False, with `error` saying why, when the runtime cannot.
bool count_objects_allocated_before(Profile& p, std::string& error);

}  // namespace hprof::agent
