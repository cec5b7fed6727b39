// SPDX-License-Identifier: Apache-2.0
#include "tls_connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tls_pipe.h"

namespace hprof::agent {
namespace {

constexpr size_t kMaxToken = 1024;

}  // namespace

std::string read_token_frame(const std::string& path, std::string& error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    error = "cannot read nettoken file '" + path + "': " + std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return "";
  }
  if ((st.st_mode & 077) != 0 || st.st_uid != ::geteuid()) {
    ::close(fd);
    error = "nettoken file '" + path +
            "' must belong to this user and be readable by nobody else (chmod 600 " + path + ")";
    return "";
  }
  std::string token;
  char buf[512];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0 && token.size() <= kMaxToken + 2) {
    token.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  bool printable = !token.empty() && token.size() <= kMaxToken;
  for (const char c : token) printable = printable && c > ' ' && c < 0x7f;
  if (!printable) {
    error = "nettoken file '" + path +
            "' must hold one token of 1 to 1024 printable characters without spaces";
    return "";
  }
  return "HPROF-TOKEN " + token + "\n";
}

bool is_loopback_host(const std::string& host, bool& loopback, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* result = nullptr;
  const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &result);
  if (rc != 0) {
    error = "cannot resolve host '" + host + "' for net=: " + gai_strerror(rc);
    return false;
  }
  loopback = true;
  for (addrinfo* a = result; a != nullptr; a = a->ai_next) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(a->ai_addr);
    loopback = loopback && (ntohl(in->sin_addr.s_addr) >> 24) == 127;
  }
  freeaddrinfo(result);
  return true;
}

TlsClient::~TlsClient() {
  close_all();
  if (ctx_ != nullptr) SSL_CTX_free(ctx_);
}

bool TlsClient::init(const std::string& ca_file, std::string& error) {
  ctx_ = SSL_CTX_new(TLS_client_method());
  if (ctx_ == nullptr) {
    error = "nettls=: " + tls::error_text("cannot create a TLS context");
    return false;
  }
  SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
  SSL_CTX_set_mode(ctx_, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
  if (SSL_CTX_load_verify_locations(ctx_, ca_file.c_str(), nullptr) != 1) {
    error = "nettls=: cannot load CA certificates from '" + ca_file +
            "': " + tls::error_text("no certificate in it");
    return false;
  }
  return true;
}

int TlsClient::secure(int tcp_fd, const std::string& host, std::chrono::milliseconds timeout,
                      const std::atomic<bool>* cancel, std::chrono::seconds stall_limit,
                      std::string& error) {
  SSL* ssl = SSL_new(ctx_);
  if (ssl == nullptr || SSL_set_fd(ssl, tcp_fd) != 1) {
    error = tls::error_text("cannot create a TLS connection");
    if (ssl != nullptr) SSL_free(ssl);
    ::close(tcp_fd);
    return -1;
  }
  // The certificate must name what net= names: its IP address, or its host name (also sent as
  // the server name, for a collector behind a TLS proxy).
  in_addr ignored{};
  const bool ok = ::inet_pton(AF_INET, host.c_str(), &ignored) == 1
                      ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str()) == 1
                      : SSL_set1_host(ssl, host.c_str()) == 1 &&
                            SSL_set_tlsext_host_name(ssl, host.c_str()) == 1;
  if (!ok) {
    error = "nettls=: cannot check the certificate against '" + host + "'";
    SSL_free(ssl);
    ::close(tcp_fd);
    return -1;
  }
  SSL_set_connect_state(ssl);
  if (!tls::handshake(ssl, tcp_fd, timeout, cancel, error)) {
    SSL_free(ssl);
    ::close(tcp_fd);
    return -1;
  }
  int plain_fd = -1;
  auto pipe = tls::Pipe::start(ssl, tcp_fd, stall_limit, plain_fd, error);
  if (pipe == nullptr) return -1;
  std::lock_guard lock(mutex_);
  // Pipes of connections that have ended are let go here, so a flapping network keeps few.
  std::erase_if(pipes_, [](const auto& p) { return p->finished(); });
  pipes_.push_back(std::move(pipe));
  return plain_fd;
}

void TlsClient::close_all() {
  std::vector<std::unique_ptr<tls::Pipe>> pipes;
  {
    std::lock_guard lock(mutex_);
    pipes.swap(pipes_);
  }
  pipes.clear();  // joins each
}

}  // namespace hprof::agent
