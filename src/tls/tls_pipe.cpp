// SPDX-License-Identifier: Apache-2.0
#include "tls_pipe.h"

#include <fcntl.h>
#include <openssl/err.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <string_view>

namespace tls {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kSlice{200};  // how often a wait looks at `cancel`
constexpr size_t kChunk = 16 * 1024;              // one TLS record's worth
constexpr int kSocketpairBuffer = 64 * 1024;      // bytes the pipe adds to the user's queue

// OpenSSL writes to its socket with write(), which raises SIGPIPE when the peer has gone; the
// threads that call it keep SIGPIPE blocked meanwhile and discard one raised for them.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeBlocked() {
    const timespec none{0, 0};
    while (sigtimedwait(&pipe_, nullptr, &none) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t pipe_;
  sigset_t old_;
};

// Waits for `events` on `fd` for at most one slice; false when `deadline` has passed or `cancel`.
bool wait_for(int fd, short events, Clock::time_point deadline, const std::atomic<bool>* cancel) {
  for (;;) {
    if ((cancel != nullptr && cancel->load()) || Clock::now() >= deadline) return false;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min(left, kSlice).count()) + 1);
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

}  // namespace

std::string error_text(const char* fallback) {
  std::string text;
  while (const unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    text = buf;  // the last is the most specific
  }
  return text.empty() ? fallback : text;
}

bool handshake(SSL* ssl, int fd, std::chrono::milliseconds timeout, const std::atomic<bool>* cancel,
               std::string& error) {
  SigpipeBlocked blocked;
  const auto deadline = Clock::now() + timeout;
  ERR_clear_error();
  for (;;) {
    const int rc = SSL_do_handshake(ssl);
    if (rc == 1) return true;
    const int why = SSL_get_error(ssl, rc);
    short events = 0;
    if (why == SSL_ERROR_WANT_READ) events = POLLIN;
    if (why == SSL_ERROR_WANT_WRITE) events = POLLOUT;
    if (events == 0) {
      const long verify = SSL_get_verify_result(ssl);
      if (verify != X509_V_OK) {
        error = std::string("certificate not accepted: ") + X509_verify_cert_error_string(verify);
      } else {
        error = "TLS handshake failed: " +
                error_text(why == SSL_ERROR_SYSCALL || why == SSL_ERROR_ZERO_RETURN
                               ? "the peer closed the connection"
                               : "protocol error");
      }
      return false;
    }
    if (!wait_for(fd, events, deadline, cancel)) {
      error = "TLS handshake timed out";
      return false;
    }
  }
}

bool read_line(SSL* ssl, int fd, size_t max, std::chrono::milliseconds timeout,
               const std::atomic<bool>* cancel, std::string& line) {
  SigpipeBlocked blocked;
  const auto deadline = Clock::now() + timeout;
  line.clear();
  for (;;) {
    char c = 0;
    short events = POLLIN;
    if (ssl != nullptr) {
      const int n = SSL_read(ssl, &c, 1);
      if (n <= 0) {
        const int why = SSL_get_error(ssl, n);
        if (why == SSL_ERROR_WANT_WRITE) {
          events = POLLOUT;
        } else if (why != SSL_ERROR_WANT_READ) {
          return false;
        }
        if (!wait_for(fd, events, deadline, cancel)) return false;
        continue;
      }
    } else {
      const ssize_t n = ::recv(fd, &c, 1, MSG_DONTWAIT);
      if (n == 0) return false;
      if (n < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return false;
        if (!wait_for(fd, events, deadline, cancel)) return false;
        continue;
      }
    }
    if (c == '\n') return true;
    if (line.size() >= max) return false;
    line.push_back(c);
  }
}

std::unique_ptr<Pipe> Pipe::start(SSL* ssl, int net_fd, std::chrono::seconds stall_limit,
                                  int& plain_fd, std::string& error) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    error = std::string("socketpair: ") + std::strerror(errno);
    SSL_free(ssl);
    ::close(net_fd);
    return nullptr;
  }
  for (const int fd : pair) {
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &kSocketpairBuffer, sizeof kSocketpairBuffer);
  }
  ::fcntl(pair[1], F_SETFL, ::fcntl(pair[1], F_GETFL) | O_NONBLOCK);
  std::unique_ptr<Pipe> pipe(new Pipe(ssl, net_fd, pair[1], stall_limit));
  try {
    pipe->thread_ = std::thread([p = pipe.get()] { p->run(); });
  } catch (const std::system_error& e) {
    error = std::string("cannot start the TLS thread: ") + e.what();
    ::close(pair[0]);
    return nullptr;  // the destructor frees ssl and closes the rest
  }
  plain_fd = pair[0];
  return pipe;
}

Pipe::Pipe(SSL* ssl, int net_fd, int pipe_fd, std::chrono::seconds stall_limit)
    : ssl_(ssl), net_fd_(net_fd), pipe_fd_(pipe_fd), stall_limit_(stall_limit) {}

Pipe::~Pipe() {
  if (thread_.joinable()) {
    thread_.join();
  } else {
    SSL_free(ssl_);
    ::close(net_fd_);
    ::close(pipe_fd_);
  }
}

// Moves bytes both ways until either side ends, then ends the other: a TLS peer that closed or
// failed closes the user's end (its reads see the end, its sends fail); the user's end closed or
// shut down sends what it wrote before, then TLS's close_notify.
void Pipe::run() {
  sigset_t pipe_signal;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);  // for good: this thread is ours

  std::string to_net, to_user;
  size_t to_net_off = 0;
  bool user_ended = false;  // the user's end: nothing more to send
  bool net_ended = false;
  auto last_net_progress = Clock::now();
  char buf[kChunk];
  while (!net_ended) {
    bool progress = false;
    short net_events = 0, user_events = 0;
    // TLS -> user
    if (to_user.empty()) {
      const int n = SSL_read(ssl_, buf, sizeof buf);
      if (n > 0) {
        to_user.assign(buf, static_cast<size_t>(n));
        progress = true;
      } else {
        const int why = SSL_get_error(ssl_, n);
        if (why == SSL_ERROR_WANT_READ) {
          net_events |= POLLIN;
        } else if (why == SSL_ERROR_WANT_WRITE) {
          net_events |= POLLOUT;
        } else {
          net_ended = true;
        }
      }
    }
    if (!to_user.empty()) {
      const ssize_t n = ::send(pipe_fd_, to_user.data(), to_user.size(), MSG_NOSIGNAL);
      if (n > 0) {
        to_user.erase(0, static_cast<size_t>(n));
        progress = true;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        user_events |= POLLOUT;
      } else if (n < 0 && errno != EINTR) {
        break;  // the user closed its end
      }
    }
    // user -> TLS
    if (to_net_off == to_net.size() && !user_ended) {
      const ssize_t n = ::recv(pipe_fd_, buf, sizeof buf, 0);
      if (n > 0) {
        to_net.assign(buf, static_cast<size_t>(n));
        to_net_off = 0;
        progress = true;
      } else if (n == 0) {
        user_ended = true;
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        user_events |= POLLIN;
      } else if (errno != EINTR) {
        user_ended = true;
      }
    }
    if (to_net_off < to_net.size()) {
      const int n =
          SSL_write(ssl_, to_net.data() + to_net_off, static_cast<int>(to_net.size() - to_net_off));
      if (n > 0) {
        to_net_off += static_cast<size_t>(n);
        last_net_progress = Clock::now();
        progress = true;
      } else {
        const int why = SSL_get_error(ssl_, n);
        if (why == SSL_ERROR_WANT_WRITE) {
          net_events |= POLLOUT;
        } else if (why == SSL_ERROR_WANT_READ) {
          net_events |= POLLIN;
        } else {
          break;
        }
      }
    } else {
      last_net_progress = Clock::now();  // nothing waits: not a stall
    }
    if (user_ended && to_net_off == to_net.size()) {
      SSL_shutdown(ssl_);  // close_notify; its answer is not awaited
      break;
    }
    if (progress) continue;
    if (Clock::now() - last_net_progress > stall_limit_) break;
    // A user's end that has ended reports a hang-up for ever: not polled unless written to.
    if (user_ended) user_events &= POLLOUT;
    pollfd p[2] = {{net_fd_, net_events, 0}, {user_events != 0 ? pipe_fd_ : -1, user_events, 0}};
    if (::poll(p, 2, static_cast<int>(kSlice.count())) < 0 && errno != EINTR) break;
  }
  // What TLS delivered before its end still reaches the user (bounded by the stall limit).
  const auto flush_deadline = Clock::now() + stall_limit_;
  while (!to_user.empty() && Clock::now() < flush_deadline) {
    const ssize_t n = ::send(pipe_fd_, to_user.data(), to_user.size(), MSG_NOSIGNAL);
    if (n > 0) {
      to_user.erase(0, static_cast<size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      pollfd p{pipe_fd_, POLLOUT, 0};
      ::poll(&p, 1, static_cast<int>(kSlice.count()));
    } else {
      break;
    }
  }
  ::shutdown(pipe_fd_, SHUT_RDWR);
  ::close(pipe_fd_);
  SSL_free(ssl_);
  ::close(net_fd_);
  finished_ = true;
}

}  // namespace tls
