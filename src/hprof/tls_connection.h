// SPDX-License-Identifier: Apache-2.0
// net= over TLS (nettls=CAFILE) and the shared token (nettoken=FILE). The collector can send
// commands to the JVM (a GC, a heap dump, exit), so the agent connects only to one whose
// certificate the given CA signed for the host name or address in net=, and proves itself with a
// token the collector checks before it reads anything else: a frame "HPROF-TOKEN <token>\n", the
// first bytes on every connection (docs/jvmprof-serve.md).
#pragma once

#include <openssl/ssl.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tls_pipe.h"

namespace hprof::agent {

// Reads a token file once: it must belong to this user and be readable by nobody else (the
// token is a password). Returns the token frame, or "" with one line in `error`.
std::string read_token_frame(const std::string& path, std::string& error);

// Whether every address `host` resolves to is a loopback one (127.0.0.0/8); false with one line
// in `error` when it cannot be resolved.
bool is_loopback_host(const std::string& host, bool& loopback, std::string& error);

class TlsClient {
 public:
  TlsClient() = default;
  ~TlsClient();
  TlsClient(const TlsClient&) = delete;
  TlsClient& operator=(const TlsClient&) = delete;
  // Loads the CA certificates the collector's certificate must chain to; false with one line.
  bool init(const std::string& ca_file, std::string& error);
  // Makes the connected, non-blocking socket `tcp_fd` a TLS connection to `host` (its
  // certificate checked against the CA and the host name or IP address) and returns the plain
  // socket its pipe gives (blocking); -1 with one line in `error`, `tcp_fd` closed either way.
  int secure(int tcp_fd, const std::string& host, std::chrono::milliseconds timeout,
             const std::atomic<bool>* cancel, std::chrono::seconds stall_limit, std::string& error);
  // Waits for every connection's pipe to end (each sends what it holds, within its stall limit).
  void close_all();

 private:
  SSL_CTX* ctx_ = nullptr;
  std::mutex mutex_;
  std::vector<std::unique_ptr<tls::Pipe>> pipes_;
};

}  // namespace hprof::agent
