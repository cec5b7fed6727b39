// SPDX-License-Identifier: Apache-2.0
// jvmprof serve: the live front end (agents' net= streams, saved profiles, web UI).
#pragma once

#include <span>

namespace jvmprof {

int run_serve(std::span<char* const> args);

}  // namespace jvmprof
