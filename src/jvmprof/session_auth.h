// SPDX-License-Identifier: Apache-2.0
// serve's agent port with --tls-cert/--tls-key and --agent-token: a connection becomes a session
// only after its TLS handshake and its token ("HPROF-TOKEN <token>\n", the first bytes an agent
// with nettoken= sends). Until then nothing it sends is parsed and no command is sent to it. The
// handshake and the token are awaited on a thread per connection (at most kMaxPending at once,
// each for at most kAuthTimeout), so a slow or hostile agent cannot hold up the others.
#pragma once

#include <openssl/ssl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "session_registry.h"
#include "tls_pipe.h"

namespace jvmprof {

struct AgentAuthOptions {
  std::string cert_file;   // --tls-cert: PEM certificate (chain) the agents check
  std::string key_file;    // --tls-key: its private key
  std::string token_file;  // --agent-token: the token agents must send first
};

class AgentGate {
 public:
  static constexpr std::chrono::seconds kAuthTimeout{10};
  static constexpr size_t kMaxPending = 64;
  // How long a TLS session's agent may take nothing while a command waits for it.
  static constexpr std::chrono::seconds kStallLimit{60};

  struct Counters {
    uint64_t admitted = 0;
    uint64_t refused_tls = 0;    // no TLS handshake (a plain-text agent, a wrong certificate)
    uint64_t refused_token = 0;  // a missing or wrong token
    uint64_t refused_busy = 0;   // kMaxPending connections were being checked already
    uint64_t refused_full = 0;   // --max-profiles sessions exist already
    nlohmann::json to_json() const;
  };

  AgentGate(SessionRegistry& registry, const std::atomic<bool>& stop)
      : registry_(registry), stop_(stop) {}
  ~AgentGate();
  AgentGate(const AgentGate&) = delete;
  AgentGate& operator=(const AgentGate&) = delete;

  // Loads the certificate, key and token; false with one line in `error`.
  bool init(const AgentAuthOptions& options, std::string& error);
  bool tls() const { return ctx_ != nullptr; }
  bool token() const { return !token_.empty(); }
  // Takes an accepted connection `fd` from `name` ("JVM at ip:port"): a session at once when
  // neither TLS nor a token is asked for, else once it has passed both.
  void admit(int fd, const std::string& name);
  Counters counters();
  // Waits for the connections being checked (each ends within kAuthTimeout, sooner once `stop`;
  // call it before stopping the sessions, so that none is added afterwards).
  void wait_for_checks();
  // That, and waits for the TLS pipes (call it after the sessions have stopped).
  void join_all();

 private:
  void check(int fd, std::string name);
  void add_session(int fd, const std::string& name, std::unique_ptr<tls::Pipe> pipe);
  void refuse(const std::string& name, const std::string& why, uint64_t Counters::*counter);

  SessionRegistry& registry_;
  const std::atomic<bool>& stop_;
  SSL_CTX* ctx_ = nullptr;
  std::string token_;  // the whole line an agent must send, without its '\n'
  std::mutex mu_;
  Counters counters_;
  size_t pending_ = 0;               // connections being checked, each on a thread of its own
  std::condition_variable checked_;  // pending_ went down
  std::vector<std::unique_ptr<tls::Pipe>> pipes_;
};

}  // namespace jvmprof
