// SPDX-License-Identifier: Apache-2.0
// jvmprof query: merged profiles of a time range from a profile store.
#pragma once

#include <span>

namespace jvmprof {

int run_query(std::span<char* const> args);

}  // namespace jvmprof
