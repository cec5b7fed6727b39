// SPDX-License-Identifier: Apache-2.0
#include "agent_library.h"

#include <dlfcn.h>
#include <unistd.h>

#include "jvmti_access.h"

namespace jvmpi::agent_library {
namespace {

std::string system_property(const char* name) {
  JvmtiPtr<char> value;
  if (jvmti() == nullptr || jvmti()->GetSystemProperty(name, value.out()) != JVMTI_ERROR_NONE ||
      value.get() == nullptr) {
    return {};
  }
  return value.get();
}

void* open_library(const std::string& path, std::string& why) {
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr) {
    const char* message = dlerror();
    why = message != nullptr ? message : "unknown dlopen error";
  }
  return handle;
}

}  // namespace

bool parse(const char* text, AgentSpec& spec, std::string& error) {
  std::string s = text != nullptr ? text : "";
  const auto colon = s.find(':');
  spec.library = s.substr(0, colon);
  spec.options = colon == std::string::npos ? "" : s.substr(colon + 1);
  if (spec.library.empty()) {
    error = "no JVMPI agent library named; use -agentpath:/path/to/libjvmpi.so=<agent>[:<options>]";
    return false;
  }
  return true;
}

OnLoadFunction load(const AgentSpec& spec, std::string& error) {
  void* handle = nullptr;
  std::string where;
  std::string why;
  if (spec.library.find('/') != std::string::npos) {
    where = spec.library;
    handle = open_library(where, why);
  } else {
    // Like -Xrun<name>: the JDK's own library directories first, then the platform's search.
    const std::string file = "lib" + spec.library + ".so";
    std::string dirs = system_property("sun.boot.library.path");
    size_t start = 0;
    while (handle == nullptr && start <= dirs.size() && !dirs.empty()) {
      const size_t end = dirs.find(':', start);
      const std::string dir = dirs.substr(start, end == std::string::npos ? end : end - start);
      if (!dir.empty()) {
        const std::string candidate = dir + "/" + file;
        if (access(candidate.c_str(), F_OK) == 0) {
          where = candidate;
          handle = open_library(candidate, why);
          if (handle == nullptr) break;
        }
      }
      if (end == std::string::npos) break;
      start = end + 1;
    }
    if (handle == nullptr && where.empty()) {
      where = file;
      handle = open_library(file, why);
    }
  }
  if (handle == nullptr) {
    error = "cannot load JVMPI agent library '" + spec.library + "' (" + where + "): " + why;
    return nullptr;
  }
  auto on_load = reinterpret_cast<OnLoadFunction>(dlsym(handle, "JVM_OnLoad"));
  if (on_load == nullptr) {
    error = "JVMPI agent library '" + where + "' has no JVM_OnLoad function";
    return nullptr;
  }
  return on_load;
}

}  // namespace jvmpi::agent_library
