// SPDX-License-Identifier: Apache-2.0
// Files for the analysis tests: a per-process temporary directory per suite, whole-file reads and
// writes, and a flipped byte (the corrupt-index tests).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace analysis_test {

// TempDir()/analysis-SUITE-PID/NAME; the directory is created, and removed with everything in
// it when the test process exits (passed or failed: a failed assertion still returns normally).
std::string temp_path(const std::string& suite, const std::string& name);

std::vector<char> read_file(const std::string& path);
void write_file(const std::string& path, const std::vector<char>& bytes);

// XORs the byte at `at` with 0x5A (a test failure when the file is shorter).
void flip_byte(const std::string& path, uint64_t at);

}  // namespace analysis_test
