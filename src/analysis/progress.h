// SPDX-License-Identifier: Apache-2.0
// Internal: progress on stderr ("phase 42%"), at most once a second, only when stderr is a
// terminal and the caller asked for it; the line is cleared when the work is done. With
// JVMPROF_PHASE_TIMES=1 in the environment it also reports when each phase began, in wall time
// and in the process's CPU time (for bench/: CPU time shows the work on a shared machine).
// A caller's callback (OpenOptions::on_progress) gets every change of phase or whole percent,
// whether or not stderr shows them.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace analysis::detail {

class Progress {
 public:
  using Callback = std::function<void(const std::string& phase, unsigned percent)>;
  explicit Progress(bool wanted, Callback callback = {});
  ~Progress();
  void update(const char* phase, uint64_t done, uint64_t total);
  // The work is done: the callback's last phase is reported at 100 %.
  void finish();

 private:
  bool enabled_;
  bool shown_ = false;
  Callback callback_;
  std::string callback_phase_;  // the phase the callback last got, and its percent
  unsigned callback_percent_ = 0;
  std::chrono::steady_clock::time_point last_;
  // JVMPROF_PHASE_TIMES=1: the start time of each phase, printed on stderr at the end (bench).
  bool timings_;
  std::string phase_;
  std::chrono::steady_clock::time_point start_;
  std::string timeline_, cpu_timeline_;
};

}  // namespace analysis::detail
