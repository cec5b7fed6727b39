// SPDX-License-Identifier: Apache-2.0
// jvmprof convert: profile exports (collapsed, pprof, speedscope, HTML).
#pragma once

#include <span>

namespace jvmprof {

int run_convert(std::span<char* const> args);

}  // namespace jvmprof
