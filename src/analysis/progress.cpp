#include "progress.h"

#include <unistd.h>

#include <cstdio>

namespace analysis::detail {

Progress::Progress(bool wanted)
    : enabled_(wanted && ::isatty(STDERR_FILENO)), last_(std::chrono::steady_clock::now()) {}

Progress::~Progress() {
  if (shown_) std::fprintf(stderr, "\r\033[K");
}

void Progress::update(const char* phase, uint64_t done, uint64_t total) {
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
