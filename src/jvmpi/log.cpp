// SPDX-License-Identifier: Apache-2.0
#include "log.h"

#include <cstdarg>
#include <cstdio>

namespace jvmpi {
namespace {

void emit(const char* level, const char* fmt, va_list args) {
  // Format into one buffer so the line is written with a single call and is not interleaved.
  char line[1024];
  int n = std::snprintf(line, sizeof line, "jvmpi: %s: ", level);
  if (n < 0) return;
  std::vsnprintf(line + n, sizeof line - static_cast<size_t>(n), fmt, args);
  std::fprintf(stderr, "%s\n", line);
  std::fflush(stderr);
}

}  // namespace

void log_error(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  emit("error", fmt, args);
  va_end(args);
}

void log_warning(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  emit("warning", fmt, args);
  va_end(args);
}

}  // namespace jvmpi
