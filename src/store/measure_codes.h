// SPDX-License-Identifier: Apache-2.0
// The measure codes stored in the samples table. Fixed for good: a stored code never changes
// meaning, whatever order profiles::Measure takes (docs/profile-store.md lists them).
#pragma once

#include <optional>

#include "profiles.h"

namespace store {

inline int measure_code(profiles::Measure m) {
  using profiles::Measure;
  switch (m) {
    case Measure::kCpuSamples:
      return 1;
    case Measure::kCpuCalls:
      return 2;
    case Measure::kCpuTimeMs:
      return 3;
    case Measure::kAllocBytes:
      return 4;
    case Measure::kAllocObjects:
      return 5;
    case Measure::kLiveBytes:
      return 6;
    case Measure::kLiveObjects:
      return 7;
    case Measure::kMonitorTimeMs:
      return 8;
  }
  return 0;
}

// The measure a stored code stands for; nullopt for a code this jvmprof does not know.
inline std::optional<profiles::Measure> measure_from_code(int64_t code) {
  for (int m = 0; m <= static_cast<int>(profiles::Measure::kMonitorTimeMs); ++m)
    if (measure_code(static_cast<profiles::Measure>(m)) == code)
      return static_cast<profiles::Measure>(m);
  return std::nullopt;
}

}  // namespace store
