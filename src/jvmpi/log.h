// SPDX-License-Identifier: Apache-2.0
// One-line diagnostics on stderr, prefixed so users can tell our messages from the VM's.
#pragma once

namespace jvmpi {

[[gnu::format(printf, 1, 2)]] void log_error(const char* fmt, ...);
[[gnu::format(printf, 1, 2)]] void log_warning(const char* fmt, ...);

}  // namespace jvmpi
