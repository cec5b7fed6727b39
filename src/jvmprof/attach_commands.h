// SPDX-License-Identifier: Apache-2.0
// The subcommands that work on a running JVM: jps, attach, stop, record, dump.
#pragma once

#include <span>

namespace jvmprof {

int run_jps(std::span<char* const> args);
int run_attach(std::span<char* const> args);
int run_stop(std::span<char* const> args);
int run_record(std::span<char* const> args);
int run_dump(std::span<char* const> args);

}  // namespace jvmprof
