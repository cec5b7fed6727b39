// SPDX-License-Identifier: Apache-2.0
// `jvmprof install-agent`: links the installed HPROF agent into JDKs' lib/ directories.
#pragma once

#include <span>

namespace jvmprof {

int run_install_agent(std::span<char* const> args);

}  // namespace jvmprof
