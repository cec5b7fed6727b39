// SPDX-License-Identifier: Apache-2.0
#include "progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <utility>

namespace analysis::detail {

namespace {

double cpu_seconds() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

}  // namespace

Progress::Progress(bool wanted, Callback callback)
    : enabled_(wanted && ::isatty(STDERR_FILENO)),
      callback_(std::move(callback)),
      last_(std::chrono::steady_clock::now()),
      timings_(std::getenv("JVMPROF_PHASE_TIMES") != nullptr),
      start_(last_) {}

Progress::~Progress() {
  if (shown_) std::fprintf(stderr, "\r\033[K");
  if (timings_) {
    auto s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::fprintf(stderr, "phase-times:%s end=%.3f\n", timeline_.c_str(), s);
    std::fprintf(stderr, "phase-cpu:%s end=%.3f\n", cpu_timeline_.c_str(), cpu_seconds());
  }
}

void Progress::finish() {
  if (callback_ && !callback_phase_.empty() && callback_percent_ < 100)
    callback_(callback_phase_, callback_percent_ = 100);
}

void Progress::update(const char* phase, uint64_t done, uint64_t total) {
  if (callback_) {
    unsigned percent = total ? static_cast<unsigned>(done * 100 / total) : 0;
    if (percent > 100) percent = 100;
    if (callback_phase_ != phase) {
      // The previous phase is over: it ends at 100 % (phases report their start, not their end).
      finish();
      callback_phase_ = phase;
      callback_(callback_phase_, callback_percent_ = percent);
    } else if (percent > callback_percent_) {
      callback_(callback_phase_, callback_percent_ = percent);
    }
  }
  if (timings_ && phase_ != phase) {
    phase_ = phase;
    auto s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    char buf[32];
    std::snprintf(buf, sizeof buf, "=%.3f", s);
    timeline_ += " '" + phase_ + "'" + buf;
    std::snprintf(buf, sizeof buf, "=%.3f", cpu_seconds());
    cpu_timeline_ += " '" + phase_ + "'" + buf;
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
