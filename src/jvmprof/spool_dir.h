// SPDX-License-Identifier: Apache-2.0
// The private directory `jvmprof serve` spools live streams into (/tmp/jvmprof-serve-XXXXXX).
// A serve that is killed (SIGKILL, a crash) cannot remove it; the next serve does: each spool
// directory names its owner in `owner.pid`, and one whose owner is no longer a running jvmprof is
// removed at start. The spooled streams are HPROF streams as received (`profile-N.hprof`), which
// `jvmprof convert` and `jvmprof serve FILE` read until then.
#pragma once

#include <string>

namespace jvmprof {

// Creates a spool directory under `parent` owned by this process; "" on failure.
std::string make_spool_dir(const std::string& parent = "/tmp");

// Removes spool directories under `parent` that belong to this user and whose owner process has
// ended (or is no longer jvmprof); returns how many. Directories without `owner.pid` (made by an
// older serve) are left alone: nothing says whether their owner still runs.
int remove_stale_spool_dirs(const std::string& parent = "/tmp");

// Removes a spool directory made by make_spool_dir once its streams have been removed.
void remove_spool_dir(const std::string& dir);

}  // namespace jvmprof
