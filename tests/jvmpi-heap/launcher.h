// SPDX-License-Identifier: Apache-2.0
// A small JVM launcher for the heap tests: spawns a process with arguments and extra environment,
// captures its stdout and stderr in files, and kills it (its whole process group) on a timeout.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace jvmpiheap {

struct LaunchSpec {
  std::vector<std::string> argv;           // argv[0] is the executable path
  std::map<std::string, std::string> env;  // added to (or replacing in) the inherited environment
  std::string stdout_path;                 // where stdout goes (created/truncated)
  std::string stderr_path;                 // where stderr goes
  int timeout_seconds = 60;
};

struct LaunchResult {
  bool started = false;
  bool timed_out = false;
  int exit_code = -1;            // exit status when the process exited normally
  int signal = 0;                // the terminating signal, else 0
  std::string out;               // captured stdout
  std::string err;               // captured stderr
  double seconds = 0;            // wall time
  std::string describe() const;  // "exit 0", "signal 9", "timed out after ..."
};

LaunchResult launch(const LaunchSpec& spec);

// Whole file contents ("" when missing).
std::string read_file(const std::string& path);

}  // namespace jvmpiheap
