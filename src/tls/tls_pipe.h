// SPDX-License-Identifier: Apache-2.0
// TLS under code written for plain sockets. HPROF's output and command listener, and serve's
// agent sessions, each read and write one socket from several threads with blocking calls and
// shutdown(); an SSL object allows neither. So a TLS connection is carried by a pipe thread that
// moves bytes between it and one end of a socketpair, and the user keeps the other end as its
// "socket": a full TLS connection fills the socketpair and the user's send() then blocks (or times
// out) exactly as on TCP, and either side going away ends both.
#pragma once

#include <openssl/ssl.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

namespace tls {

// What OpenSSL's error queue says (emptied), or `fallback` when it says nothing.
std::string error_text(const char* fallback);

// Completes the TLS handshake on the non-blocking socket `fd` (client or server as `ssl` was
// set up), within `timeout`; false with one line in `error`. `cancel`, when set, ends it early.
bool handshake(SSL* ssl, int fd, std::chrono::milliseconds timeout, const std::atomic<bool>* cancel,
               std::string& error);

// Reads up to `max` bytes of one line ending in '\n' (not included) from `ssl`, or from `fd`
// when `ssl` is null, one byte at a time so that nothing after the line is consumed; within
// `timeout`. False on a timeout, an end or a line longer than `max`.
bool read_line(SSL* ssl, int fd, size_t max, std::chrono::milliseconds timeout,
               const std::atomic<bool>* cancel, std::string& line);

class Pipe {
 public:
  // Takes `ssl` (handshake done) and its non-blocking socket `net_fd`; returns the pipe, with
  // the user's end in `plain_fd` (blocking, close-on-exec; the caller owns it), or null with one
  // line in `error`. When the far end has taken nothing for `stall_limit` while bytes wait, the
  // connection is ended.
  static std::unique_ptr<Pipe> start(SSL* ssl, int net_fd, std::chrono::seconds stall_limit,
                                     int& plain_fd, std::string& error);
  ~Pipe();  // waits for the pipe thread (bounded by the stall limit)
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  bool finished() const { return finished_; }

 private:
  Pipe(SSL* ssl, int net_fd, int pipe_fd, std::chrono::seconds stall_limit);
  void run();

  SSL* ssl_;
  int net_fd_;
  int pipe_fd_;  // this side's end of the socketpair
  std::chrono::seconds stall_limit_;
  std::atomic<bool> finished_{false};
  std::thread thread_;
};

}  // namespace tls
