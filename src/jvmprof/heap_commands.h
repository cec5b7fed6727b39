// SPDX-License-Identifier: Apache-2.0
// The heap-analysis subcommands (src/analysis behind them), one file each.
#pragma once

#include <span>

namespace jvmprof {

int run_summary(std::span<char* const> args);
int run_dominators(std::span<char* const> args);
int run_path(std::span<char* const> args);
int run_strings(std::span<char* const> args);
int run_diff(std::span<char* const> args);
int run_suspects(std::span<char* const> args);

}  // namespace jvmprof
