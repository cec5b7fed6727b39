// SPDX-License-Identifier: Apache-2.0
// Finding and starting the JVMPI agent library named in -agentpath:libjvmpi.so=<agent>[:<options>].
#pragma once

#include <jni.h>

#include <string>

namespace jvmpi::agent_library {

struct AgentSpec {
  std::string library;  // a path, or a name resolved like -Xrun<name>
  std::string options;  // what follows the first ':' ("" when absent)
};

// Splits the option string given to libjvmpi.so. Returns false (and sets `error`) when no agent
// is named.
bool parse(const char* text, AgentSpec& spec, std::string& error);

using OnLoadFunction = jint(JNICALL*)(JavaVM*, char*, void*);

// Loads the library (a path, or lib<name>.so from the JDK's library directory, then the system
// search path including LD_LIBRARY_PATH) and finds JVM_OnLoad. On failure returns null and sets
// `error` to one line naming the library and the cause.
OnLoadFunction load(const AgentSpec& spec, std::string& error);

}  // namespace jvmpi::agent_library
