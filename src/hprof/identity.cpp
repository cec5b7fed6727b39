// SPDX-License-Identifier: Apache-2.0
#include "identity.h"

#include <jvmti.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>

namespace hprof::agent {
namespace {

std::string g_identity;  // written once while the agent loads, before any reader

std::string property(jvmtiEnv* jvmti, const char* name) {
  if (jvmti == nullptr) return {};
  char* value = nullptr;
  if (jvmti->GetSystemProperty(name, &value) != JVMTI_ERROR_NONE || value == nullptr) return {};
  std::string out = value;
  jvmti->Deallocate(reinterpret_cast<unsigned char*>(value));
  return out;
}

}  // namespace

void remember_identity(std::string text) {
  g_identity = std::move(text);
}

const std::string& remembered_identity() {
  return g_identity;
}

std::string identity_word(const std::string& value) {
  std::string out;
  for (const char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= ' ' || u == '%' || u == 0x7f) {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", u);
      out += hex;
    } else {
      out += c;
    }
  }
  return out.empty() ? "-" : out;
}

std::string identity_text(JavaVM* vm, const Options& options) {
  const int64_t start_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  jvmtiEnv* jvmti = nullptr;
  if (vm == nullptr || vm->GetEnv(reinterpret_cast<void**>(&jvmti), JVMTI_VERSION_1_2) != JNI_OK)
    jvmti = nullptr;
  // sun.java.command is the launcher's "<main class or jar> <arguments>": the first word names
  // the program (the arguments may hold secrets and are not sent).
  std::string main = property(jvmti, "sun.java.command");
  main = main.substr(0, main.find(' '));
  std::string version = property(jvmti, "java.runtime.version");
  if (version.empty()) version = property(jvmti, "java.vm.version");
  if (jvmti != nullptr) jvmti->DisposeEnvironment();
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  char head[64];
  std::snprintf(head, sizeof head, "IDENTITY: pid=%d", static_cast<int>(getpid()));
  std::string text = head;
  text += " host=" + identity_word(host);
  text += " main=" + identity_word(main);
  text += " vm=" + identity_word(version);
  text += " start=" + std::to_string(start_ms);
  text += " labels=" + identity_word(options.labels);
  return text;
}

}  // namespace hprof::agent
