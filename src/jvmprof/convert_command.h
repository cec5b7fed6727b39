// SPDX-License-Identifier: Apache-2.0
// jvmprof convert: profile exports (collapsed, pprof, speedscope, HTML).
#pragma once

#include <span>
#include <string>

namespace jvmprof {

int run_convert(std::span<char* const> args);

// Writes `bytes` to `path` ('-': stdout), gzipped with `gzip`; false with errno on failure.
bool write_output(const std::string& path, const std::string& bytes, bool gzip);

}  // namespace jvmprof
