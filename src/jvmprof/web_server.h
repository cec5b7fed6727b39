// SPDX-License-Identifier: Apache-2.0
// The web UI's HTTP server (cpp-httplib): static assets embedded in jvmprof, and a JSON API over
// the session registry. Every request must carry the session token (query `token`, header
// X-Jvmprof-Token, or the cookie set by the first page load) and name an allowed Host; a request
// with a foreign Origin is refused (DNS rebinding, cross-site requests). With a certificate it
// speaks HTTPS only (cpp-httplib's SSLServer over OpenSSL): serve gives it one when the UI listens
// beyond loopback, so that the token never crosses a network in clear text.
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
  // Both set: HTTPS with this PEM certificate chain and private key (serve's --tls-cert and
  // --tls-key, the agent port's); both empty: plain HTTP.
  std::string tls_cert_file, tls_key_file;
};

class WebServer {
 public:
  WebServer(SessionRegistry& registry, WebOptions options);
  ~WebServer();
  // Binds; returns the port, or -1 with `error` set (also when the certificate or key cannot be
  // used).
  int bind(std::string& error);
  // "https" with a certificate, else "http": the scheme of the URL serve prints.
  const char* scheme() const;
  void run();  // serves until stop()
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace jvmprof
