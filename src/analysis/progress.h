// Internal: progress on stderr ("phase 42%"), at most once a second, only when stderr is a
// terminal and the caller asked for it; the line is cleared when the work is done.
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
};

}  // namespace analysis::detail
