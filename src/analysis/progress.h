// Internal: progress on stderr ("phase 42%"), at most once a second, only when stderr is a
// terminal and the caller asked for it; the line is cleared when the work is done. With
// JVMPROF_PHASE_TIMES=1 in the environment it also reports when each phase began, in wall time
// and in the process's CPU time (for bench/: CPU time shows the work on a shared machine).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace analysis::detail {

class Progress {
 public:
  explicit Progress(bool wanted);
  ~Progress();
  void update(const char* phase, uint64_t done, uint64_t total);

 private:
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_;
  // JVMPROF_PHASE_TIMES=1: the start time of each phase, printed on stderr at the end (bench).
  bool timings_;
  std::string phase_;
  std::chrono::steady_clock::time_point start_;
  std::string timeline_, cpu_timeline_;
};

}  // namespace analysis::detail
