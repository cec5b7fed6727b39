// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the bci tests: files, JDK locations, child processes, stub tracker classes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "bci.h"

namespace bcitest {

namespace fs = std::filesystem;

std::vector<uint8_t> read_file(const fs::path& path);
void write_file(const fs::path& path, const std::vector<uint8_t>& bytes);
std::string read_text(const fs::path& path);

// Every *.class below dir, sorted.
std::vector<fs::path> class_files(const fs::path& dir);

struct Jdk {
  std::string name;  // "jdk17", "jdk25"
  std::string home;
  bool present() const;
  std::string java() const { return home + "/bin/java"; }
  // Where the bci_extract_<name> fixture put the runtime image's classes.
  fs::path image_dir() const;
};
Jdk jdk17();
Jdk jdk25();

fs::path build_dir();
fs::path java_classes_dir();  // compiled java/bci-tests

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};
// Runs a shell command with a time limit (seconds).
CommandResult run_command(const std::string& command, int timeout_seconds);

// A class with every tracker method of the contract as an empty public static method.
std::vector<uint8_t> stub_tracker_class(const std::string& internal_name);

bci::InjectionOptions all_hooks(const std::string& tracker, uint32_t class_number);

}  // namespace bcitest
