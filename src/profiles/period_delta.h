// SPDX-License-Identifier: Apache-2.0
// The parsers' common step for a PERIOD block (format=a lines, format=b note record).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "profiles.h"

namespace profiles {

using PeriodHandler = std::function<void(const PeriodDelta&)>;

// Parses `block`, counts it in `p` and hands it to `handler` (if set); a malformed block is a
// ProfileError naming `source`.
void take_period(std::string_view block, JavaProfile& p, const PeriodHandler& handler,
                 const std::string& source);

}  // namespace profiles
