// SPDX-License-Identifier: Apache-2.0
#include "launcher.h"

#include <signal.h>

#include <chrono>
#include <optional>
#include <stdexcept>

#include "child_process.h"

namespace jvmpiheap {

std::string read_file(const std::string& path) {
  return testsupport::ReadWholeFile(path);
}

std::string LaunchResult::describe() const {
  if (!started) return "not started";
  if (timed_out) return "timed out (killed)";
  if (signal != 0) return "killed by signal " + std::to_string(signal);
  return "exit " + std::to_string(exit_code);
}

LaunchResult launch(const LaunchSpec& spec) {
  LaunchResult result;
  testsupport::ChildSpec child;
  child.argv = spec.argv;
  child.set_env.assign(spec.env.begin(), spec.env.end());
  child.stdout_path = spec.stdout_path;
  child.stderr_path = spec.stderr_path;
  child.stdin_pipe = false;
  child.timeout = std::chrono::seconds(spec.timeout_seconds);

  const auto start = std::chrono::steady_clock::now();
  std::optional<testsupport::ChildProcess> process;
  try {
    process.emplace(child);
  } catch (const std::runtime_error&) {
    return result;  // no argv, output files not writable, or fork failed: "not started"
  }
  result.started = true;
  const testsupport::ChildStatus& status = process->wait();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.timed_out = status.timed_out;
  result.exit_code = status.exit_code;
  // This API has always reported the kill at the time limit as the signal too.
  result.signal = status.timed_out ? SIGKILL : status.signal;
  result.out = process->stdout_so_far();
  result.err = process->stderr_so_far();
  return result;
}

}  // namespace jvmpiheap
