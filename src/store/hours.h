// SPDX-License-Identifier: Apache-2.0
// The hours that hour_samples is kept by (docs/profile-store.md, Schema): a period belongs to the
// hour its start is in, counted from the Unix epoch in UTC.
#pragma once

#include <cstdint>
#include <limits>

namespace store {

inline constexpr int64_t kHourMs = 3'600'000;

// The start of the hour `ms` is in (rounding down for times before the epoch too). Times within
// an hour of the int64 range's ends give the ends themselves: they serve only as range bounds.
inline int64_t hour_floor(int64_t ms) {
  const int64_t h = ms / kHourMs * kHourMs;
  if (h <= ms) return h;
  return h < std::numeric_limits<int64_t>::min() + kHourMs ? std::numeric_limits<int64_t>::min()
                                                           : h - kHourMs;
}
// The first hour start at or after `ms`.
inline int64_t hour_ceil(int64_t ms) {
  const int64_t h = hour_floor(ms);
  if (h == ms) return h;
  return h > std::numeric_limits<int64_t>::max() - kHourMs ? std::numeric_limits<int64_t>::max()
                                                           : h + kHourMs;
}

}  // namespace store
