// SPDX-License-Identifier: Apache-2.0
#include "session_auth.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace jvmprof {
namespace {

constexpr size_t kMaxToken = 1024;
constexpr char kTokenPrefix[] = "HPROF-TOKEN ";

// The token file, as the agent reads its own: one line, readable by its owner only.
bool read_token(const std::string& path, std::string& token, std::string& error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    error = "cannot read --agent-token file " + path + ": " + std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return false;
  }
  if ((st.st_mode & 077) != 0) {
    ::close(fd);
    error = "--agent-token file " + path + " must be readable by its owner only (chmod 600 " +
            path + ")";
    return false;
  }
  char buf[kMaxToken + 3];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  token.assign(buf, n > 0 ? static_cast<size_t>(n) : 0);
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  bool printable = !token.empty() && token.size() <= kMaxToken;
  for (const char c : token) printable = printable && c > ' ' && c < 0x7f;
  if (!printable) {
    error = "--agent-token file " + path +
            " must hold one token of 1 to 1024 printable characters without spaces";
    return false;
  }
  return true;
}

}  // namespace

AgentGate::~AgentGate() {
  join_all();
  if (ctx_ != nullptr) SSL_CTX_free(ctx_);
}

bool AgentGate::init(const AgentAuthOptions& options, std::string& error) {
  if (!options.token_file.empty()) {
    std::string token;
    if (!read_token(options.token_file, token, error)) return false;
    token_ = kTokenPrefix + token;
  }
  if (options.cert_file.empty()) return true;
  ctx_ = SSL_CTX_new(TLS_server_method());
  if (ctx_ == nullptr) {
    error = tls::error_text("cannot create a TLS context");
    return false;
  }
  SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
  SSL_CTX_set_mode(ctx_, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (SSL_CTX_use_certificate_chain_file(ctx_, options.cert_file.c_str()) != 1) {
    error = "cannot use --tls-cert " + options.cert_file + ": " +
            tls::error_text("no certificate in it");
    return false;
  }
  if (SSL_CTX_use_PrivateKey_file(ctx_, options.key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(ctx_) != 1) {
    error = "cannot use --tls-key " + options.key_file + ": " +
            tls::error_text("not the certificate's key");
    return false;
  }
  return true;
}

void AgentGate::admit(int fd, const std::string& name) {
  if (!tls() && !token()) return add_session(fd, name, nullptr);
  std::lock_guard lock(mu_);
  if (pending_ >= kMaxPending) {
    ++counters_.refused_busy;
    ::close(fd);
    std::printf("jvmprof serve: %s refused: %zu connections are being checked already\n",
                name.c_str(), kMaxPending);
    std::fflush(stdout);
    return;
  }
  try {
    std::thread([this, fd, name] { check(fd, name); }).detach();
    ++pending_;
  } catch (const std::system_error&) {
    ++counters_.refused_busy;
    ::close(fd);
  }
}

void AgentGate::refuse(const std::string& name, const std::string& why,
                       uint64_t Counters::*counter) {
  {
    std::lock_guard lock(mu_);
    ++(counters_.*counter);
  }
  std::printf("jvmprof serve: %s refused: %s\n", name.c_str(), why.c_str());
  std::fflush(stdout);
}

void AgentGate::check(int fd, std::string name) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  SSL* ssl = nullptr;
  std::string error;
  bool ok = true;
  if (tls()) {
    ssl = SSL_new(ctx_);
    ok = ssl != nullptr && SSL_set_fd(ssl, fd) == 1;
    if (ok) {
      SSL_set_accept_state(ssl);
      ok = tls::handshake(ssl, fd, kAuthTimeout, &stop_, error);
    }
    if (!ok) refuse(name, error, &Counters::refused_tls);
  }
  if (ok && token()) {
    std::string line;
    // Read byte by byte: what follows the token is the stream, for the session to parse.
    ok = tls::read_line(ssl, fd, kMaxToken + sizeof kTokenPrefix, kAuthTimeout, &stop_, line) &&
         line.size() == token_.size() &&
         CRYPTO_memcmp(line.data(), token_.data(), line.size()) == 0;
    if (!ok) {
      refuse(name, line.rfind(kTokenPrefix, 0) == 0 ? "wrong token" : "no token",
             &Counters::refused_token);
    }
  }
  if (!ok) {
    if (ssl != nullptr) SSL_free(ssl);
    ::close(fd);
  } else if (ssl != nullptr) {
    int plain_fd = -1;
    auto pipe = tls::Pipe::start(ssl, fd, kStallLimit, plain_fd, error);
    if (pipe == nullptr) {
      refuse(name, error, &Counters::refused_tls);
    } else {
      add_session(plain_fd, name, std::move(pipe));
    }
  } else {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    add_session(fd, name, nullptr);
  }
  // The last use of `this`: join_all() waits for it.
  std::lock_guard lock(mu_);
  --pending_;
  checked_.notify_all();
}

void AgentGate::add_session(int fd, const std::string& name, std::unique_ptr<tls::Pipe> pipe) {
  timeval send_timeout{5, 0};  // a command never hangs an HTTP handler for long
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof send_timeout);
  if (pipe != nullptr) {
    std::lock_guard lock(mu_);
    std::erase_if(pipes_, [](const auto& p) { return p->finished(); });
    pipes_.push_back(std::move(pipe));
  }
  const char* how = tls() ? " over TLS" : "";
  if (auto s = registry_.add(name, fd, true, 0)) {
    {
      std::lock_guard lock(mu_);
      ++counters_.admitted;
    }
    std::printf("jvmprof serve: %s connected%s (profile %u)\n", name.c_str(), how, s->id());
  } else {
    {
      std::lock_guard lock(mu_);
      ++counters_.refused_full;
    }
    std::printf("jvmprof serve: %s refused: too many profiles open\n", name.c_str());
  }
  std::fflush(stdout);
}

nlohmann::json AgentGate::Counters::to_json() const {
  return {{"admitted", admitted},
          {"refusedTls", refused_tls},
          {"refusedToken", refused_token},
          {"refusedBusy", refused_busy},
          {"refusedFull", refused_full}};
}

AgentGate::Counters AgentGate::counters() {
  std::lock_guard lock(mu_);
  return counters_;
}

void AgentGate::wait_for_checks() {
  std::unique_lock lock(mu_);
  checked_.wait(lock, [this] { return pending_ == 0; });
}

void AgentGate::join_all() {
  wait_for_checks();
  std::vector<std::unique_ptr<tls::Pipe>> pipes;
  {
    std::lock_guard lock(mu_);
    pipes.swap(pipes_);
  }
  pipes.clear();
}

}  // namespace jvmprof
