// SPDX-License-Identifier: Apache-2.0
// What attach, stop, record and dump share: the pid argument, the agent library a target JVM
// can open, and loading it with one clear line on failure.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "attach.h"

namespace jvmprof {

// A pid argument; nullopt (after one line on stderr, prefixed by `command`) if it is not one.
std::optional<pid_t> parse_pid(const char* command, const std::string& text);

// A positive number of seconds (fractions allowed); nullopt if it is not one.
std::optional<double> parse_seconds(const std::string& text);

// The HPROF agent jvmprof ships: lib/jvmprof/libhprof.so beside this program's bin/, or the
// build tree's lib/ when run from a build.
std::string default_agent_library();

// The path under which `target` opens `library`: the absolute path when it shares our mount
// namespace, else a copy (with the files the agent loads from beside itself) put in the
// target's /tmp. Throws attach::AttachError.
std::string agent_path_for(const attach::Target& target, const std::string& library);

// Whether the target sees the same files as we do (same mount namespace).
bool same_mount_namespace(const attach::Target& target);

}  // namespace jvmprof
