// SPDX-License-Identifier: Apache-2.0
#include "jvm_identity.h"

#include <algorithm>
#include <charconv>

namespace jvmprof {
namespace {

int64_t to_int(const std::string& s) {
  int64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

}  // namespace

JvmIdentity JvmIdentity::from(const profiles::JavaProfile& p, uint32_t session,
                              const std::string& address) {
  JvmIdentity id;
  id.session = session;
  id.address = address;
  auto get = [&](const char* key) {
    auto it = p.agent_identity.find(key);
    return it == p.agent_identity.end() ? std::string() : it->second;
  };
  id.pid = to_int(get("pid"));
  id.host = get("host");
  id.main = get("main");
  id.vm = get("vm");
  id.start_ms = to_int(get("start"));
  id.labels = p.agent_labels;
  // The first connection's IDENTITY has no connection= (a reconnect's hello says which it is).
  id.connection = id.pid == 0 ? 0 : std::max<int64_t>(1, to_int(get("connection")));
  return id;
}

std::string JvmIdentity::key() const {
  if (pid == 0) return address;
  return host + "/" + std::to_string(pid) + "/" + std::to_string(start_ms);
}

std::string JvmIdentity::display_name() const {
  if (pid == 0) return address;
  std::string name;
  for (const auto& [k, v] : labels) name += (name.empty() ? "" : " ") + k + "=" + v;
  if (!name.empty()) name += " \u00b7 ";
  if (!main.empty()) name += main + " \u00b7 ";
  return name + "pid " + std::to_string(pid) + " on " + host;
}

nlohmann::json JvmIdentity::to_json() const {
  return {{"pid", pid},          {"host", host},
          {"main", main},        {"vm", vm},
          {"startMs", start_ms}, {"labels", labels},
          {"key", key()},        {"name", display_name()},
          {"address", address},  {"connection", connection}};
}

}  // namespace jvmprof
