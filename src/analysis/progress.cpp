#include "progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace analysis::detail {

Progress::Progress(bool wanted)
    : enabled_(wanted && ::isatty(STDERR_FILENO)),
      last_(std::chrono::steady_clock::now()),
      timings_(std::getenv("JVMPROF_PHASE_TIMES") != nullptr),
      start_(last_) {}

Progress::~Progress() {
  if (shown_) std::fprintf(stderr, "\r\033[K");
  if (timings_) {
    auto s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::fprintf(stderr, "phase-times:%s end=%.3f\n", timeline_.c_str(), s);
  }
}

void Progress::update(const char* phase, uint64_t done, uint64_t total) {
  if (timings_ && phase_ != phase) {
    phase_ = phase;
    auto s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    char buf[32];
    std::snprintf(buf, sizeof buf, "=%.3f", s);
    timeline_ += " '" + phase_ + "'" + buf;
  }
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::seconds(1)) return;
  last_ = now;
  unsigned percent = total ? static_cast<unsigned>(done * 100 / total) : 0;
  std::fprintf(stderr, "\r\033[K%s %u%%", phase, percent > 100 ? 100 : percent);
  std::fflush(stderr);
  shown_ = true;
}

}  // namespace analysis::detail
