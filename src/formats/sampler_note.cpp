// SPDX-License-Identifier: Apache-2.0
#include <cstdio>

#include "hprof_format.h"

namespace hprof {

std::optional<SamplerNote> sampler_note(const Profile& profile) {
  const auto it = profile.strings.find(kSamplerNoteId);
  if (it == profile.strings.end()) return std::nullopt;
  SamplerNote n;
  unsigned long long v[5] = {};
  int consumed = 0;
  if (std::sscanf(it->second.c_str(),
                  "CPU SAMPLER: signals=%llu taken=%llu recovered=%llu unattributable=%llu "
                  "lost=%llu%n",
                  &v[0], &v[1], &v[2], &v[3], &v[4], &consumed) != 5 ||
      static_cast<size_t>(consumed) != it->second.size()) {
    return std::nullopt;
  }
  n.signals = v[0];
  n.taken = v[1];
  n.recovered = v[2];
  n.unattributable = v[3];
  n.lost = v[4];
  return n;
}

}  // namespace hprof
