// SPDX-License-Identifier: Apache-2.0
// The web UI's HTTP server (cpp-httplib): static assets embedded in jvmprof, and a JSON API over
// the session registry. Every request must carry the session token (query `token`, header
// X-Jvmprof-Token, or the cookie set by the first page load) and name an allowed Host; a request
// with a foreign Origin is refused (DNS rebinding, cross-site requests).
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "session_registry.h"

namespace store {
class ProfileStore;
}

namespace jvmprof {

struct WebOptions {
  std::string bind = "127.0.0.1";
  int port = 0;  // 0: any free port
  std::string token;
  std::vector<std::string> extra_hosts;    // more Host names allowed (without port)
  store::ProfileStore* history = nullptr;  // serve --store: the History view's store
  std::string agent_address;               // HOST:PORT agents send to (net=), for "Local JVMs"
  // The agent port's counters (admitted, refused: no TLS, token, busy, full) for /api/agents.
  std::function<nlohmann::json()> agent_counters;
};

class WebServer {
 public:
  WebServer(SessionRegistry& registry, WebOptions options);
  ~WebServer();
  // Binds; returns the port, or -1 with `error` set.
  int bind(std::string& error);
  void run();  // serves until stop()
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace jvmprof
