// SPDX-License-Identifier: Apache-2.0
#include "output.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "tls_connection.h"

namespace hprof::agent {
namespace {

constexpr size_t kBufferSize = 64 * 1024;

bool exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

// force=n: an existing file is kept and the report goes to a name with the pid in it.
std::string unforced_name(const std::string& name, bool binary) {
  const std::string pid = std::to_string(getpid());
  if (binary) return name + "." + pid;
  std::string base = name;
  if (base.size() > 4 && base.compare(base.size() - 4, 4, ".txt") == 0) {
    base.resize(base.size() - 4);
  }
  return base + "." + pid + ".txt";
}

}  // namespace

int Output::connect_once(std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* result = nullptr;
  const std::string port = std::to_string(port_);
  const int rc = getaddrinfo(host_.c_str(), port.c_str(), &hints, &result);
  if (rc != 0) {
    error = "cannot resolve host '" + host_ + "' for net=: " + gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  int last_errno = 0;
  for (addrinfo* a = result; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) {
      last_errno = errno;
      continue;
    }
    // Non-blocking, so that an unreachable host costs kConnectTimeout rather than the kernel's
    // minutes of SYN retries, and an exit meanwhile is noticed within a slice.
    int err = ::connect(fd, a->ai_addr, a->ai_addrlen) == 0 ? 0 : errno;
    if (err == EINPROGRESS) {
      err = ETIMEDOUT;
      for (auto waited = std::chrono::milliseconds(0); waited < kConnectTimeout;
           waited += std::chrono::milliseconds(100)) {
        pollfd p{fd, POLLOUT, 0};
        if (::poll(&p, 1, 100) > 0) {
          socklen_t len = sizeof err;
          if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
          break;
        }
        if (closing_now_) break;
      }
    }
    if (err != 0) {
      last_errno = err;
      ::close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(result);
  if (fd < 0) {
    error = "cannot connect to " + host_ + ":" + port + " for net=: " + std::strerror(last_errno);
    return -1;
  }
  if (tls_ != nullptr) {
    // The pipe's socket stands in for the TCP one (blocking, as below).
    fd = tls_->secure(fd, host_, kConnectTimeout, &closing_now_, kStallLimit, error);
    if (fd < 0) {
      error = "net=" + host_ + ":" + port + ": " + error;
      return -1;
    }
  } else {
    // Blocking again: the writer thread's send() waits for the front end, by design.
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  }
  // The token first, before anything else on every connection; a fresh socket takes it at once.
  if (!token_frame_.empty() && ::send(fd, token_frame_.data(), token_frame_.size(), MSG_NOSIGNAL) !=
                                   static_cast<ssize_t>(token_frame_.size())) {
    error = "cannot send the token to " + host_ + ":" + port + ": " + std::strerror(errno);
    ::close(fd);
    return -1;
  }
  return fd;
}

bool Output::prepare_net(const Options& options, std::string& error) {
  bool loopback = false;
  if (!is_loopback_host(options.net_host, loopback, error)) return false;
  if (!loopback && options.net_tls_ca.empty()) {
    error = "net=" + options.net_host +
            " is not a loopback address: give nettls=<CA file> to check the collector's "
            "certificate (it can send commands to this JVM)";
    return false;
  }
  if (!options.net_token_file.empty()) {
    token_frame_ = read_token_frame(options.net_token_file, error);
    if (token_frame_.empty()) return false;
  }
  if (!options.net_tls_ca.empty()) {
    tls_ = std::make_unique<TlsClient>();
    if (!tls_->init(options.net_tls_ca, error)) return false;
  }
  return true;
}

bool Output::open(const Options& options, std::string& error) {
  if (options.net()) {
    host_ = options.net_host;
    port_ = options.net_port;
    if (!prepare_net(options, error)) return false;
    name_ = options.net_host + ":" + std::to_string(options.net_port);
    // A stream that reconnects (period=, either format) does so from the start, also when the
    // collector drops it before the period writer has set its hello (a refused token), and
    // waits for a collector that is not there yet or cannot be trusted: the program runs on.
    const bool reconnects = options.period_seconds > 0;
    const int fd = connect_once(error);
    if (fd >= 0) {
      fd_ = socket_ = fd;
      connections_ = 1;
    } else if (reconnects) {
      std::fprintf(stderr, "hprof: net=: %s; retrying\n", error.c_str());
      last_connect_error_ = error;
      link_ = Link::kDown;
    } else {
      return false;
    }
    reconnect_ = reconnects;
    await_handler_ = reconnects;
    net_ = true;
    text_notes_ = !options.binary;
    capacity_ = options.net_queue_bytes;
    last_progress_ = std::chrono::steady_clock::now();
    writer_ = std::thread([this] { writer_main(); });
    // Named, so that its CPU shows apart from the program's (/proc/PID/task/*/comm, perf).
    pthread_setname_np(writer_.native_handle(), "HPROF net");
    return true;
  }
  name_ = options.file.empty() ? options.default_file() : options.file;
  if (!options.force && exists(name_)) name_ = unforced_name(name_, options.binary);
  // A regular file is re-created, as JDK 8 did; anything else (/dev/null, a pipe) is written to
  // as it is: removing a device node as root would break the machine.
  struct stat st {};
  if (lstat(name_.c_str(), &st) == 0 && S_ISREG(st.st_mode)) std::remove(name_.c_str());
  fd_ = ::open(name_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    error = "cannot write output file '" + name_ + "': " + std::strerror(errno);
    return false;
  }
  file_ = std::make_unique<FileAppender>(fd_, name_, options.direct_io);
  return true;
}

namespace {
thread_local bool t_in_event = false;   // this thread is writing an admitted event: never wait
thread_local bool t_hello = false;      // this thread is writing a new connection's hello
thread_local uint64_t t_hello_for = 0;  // that connection's number (connections_)
thread_local bool t_keep = false;       // this thread's event is kept for the next connection
}  // namespace

Output::~Output() {
  // Never destroyed while the VM runs (profile() leaks); a test's Output may still have a writer.
  if (writer_.joinable()) close();
}

void Output::write_locked(const void* data, size_t size) {
  if (file_ == nullptr || failed_ || size == 0) return;
  if (!file_->append(data, size)) {
    failed_ = true;
    std::fprintf(stderr, "hprof: error: writing %s failed: %s\n", name_.c_str(),
                 std::strerror(errno));
  }
}

bool Output::hello_writer_locked() const {
  // A hello is for the connection it began on: if that one went and another came meanwhile, the
  // rest of it must not land at the start of the new stream (which waits for a hello of its own).
  return t_hello && link_ == Link::kHello && t_hello_for == connections_;
}

template <typename Done>
bool Output::wait_with_progress(std::unique_lock<std::mutex>& lock, Done done) {
  // The stall is counted from the last byte sent or from the start of this wait, whichever is
  // later: a connection that was merely idle has not stalled.
  const auto start = std::chrono::steady_clock::now();
  bool ok = true;
  ++waiting_writers_;
  while (!done()) {
    const auto deadline = std::max(last_progress_, start) + kStallLimit;
    if (failed_ || given_up_ || (link_ != Link::kUp && !hello_writer_locked()) ||
        std::chrono::steady_clock::now() >= deadline) {
      ok = false;
      break;
    }
    progress_.wait_until(lock, deadline);
  }
  --waiting_writers_;
  return ok;
}

void Output::give_up_locked(const char* why) {
  if (reconnect_) return lose_connection_locked(why);
  if (given_up_) return;
  given_up_ = true;
  drops_.bytes += queue_.size();
  queue_.clear();
  std::fprintf(stderr,
               "hprof: error: the front end at %s %s; the rest of the profile is not sent\n",
               name_.c_str(), why);
  // Unblocks the writer thread's send() (and the command listener's read()).
  ::shutdown(socket_, SHUT_RDWR);
  queued_.notify_all();
}

void Output::lose_connection_locked(const char* why) {
  if (link_ == Link::kDown) return;
  link_ = Link::kDown;
  drops_.bytes += queue_.size();
  queue_.clear();
  std::fprintf(stderr, "hprof: net=: the front end at %s %s; reconnecting\n", name_.c_str(), why);
  // Ends the writer's send() and the listener's read(); the listener closes the socket.
  ::shutdown(socket_, SHUT_RDWR);
  queued_.notify_all();
  progress_.notify_all();
}

// Appends to the queue, waiting for room: only the agent's own threads (reports) come here.
void Output::queue_locked(std::unique_lock<std::mutex>& lock, const void* data, size_t size) {
  if (!failed_ && !given_up_ && t_keep && link_ != Link::kUp && !hello_writer_locked()) {
    // Admitted while the front end is away: whole (a binary record comes in two writes).
    kept_.append(static_cast<const char*>(data), size);
    return;
  }
  if (failed_ || given_up_ || (link_ != Link::kUp && !hello_writer_locked())) {
    drops_.bytes += size;
    return;
  }
  if (!t_in_event && !wait_with_progress(lock, [&] { return pending_locked() < capacity_; })) {
    if (!failed_) give_up_locked("has read nothing for 10 s while a report waited");
    drops_.bytes += size;
    return;
  }
  queue_.append(static_cast<const char*>(data), size);
  queued_.notify_one();
}

Output::EventScope::EventScope(Output& output, size_t bytes, bool droppable)
    : admitted_(output.admit_event(bytes, droppable)) {
  t_in_event = true;
}

Output::EventScope::~EventScope() {
  t_in_event = false;
  t_keep = false;
}

bool Output::keeping_event() {
  return t_keep;
}

Output::KeepScope::KeepScope(bool keep) : previous_(t_keep) {
  t_keep = keep;
}

Output::KeepScope::~KeepScope() {
  t_keep = previous_;
}

// format=a: a DROPPED line with the running totals, once per change; the front end shows it.
void Output::note_drops_locked() {
  if (!text_notes_ || drops_.events == noted_.events) return;
  char line[160];
  std::snprintf(line, sizeof line,
                "DROPPED: %llu events (%llu bytes) while the front end was not reading\n",
                static_cast<unsigned long long>(drops_.events),
                static_cast<unsigned long long>(drops_.bytes));
  queue_.append(line);
  noted_ = drops_;
  queued_.notify_one();
}

bool Output::admit_event(size_t bytes, bool droppable) {
  t_keep = false;
  if (!net_) return true;
  std::lock_guard lock(mutex_);
  if (!failed_ && !given_up_ && link_ == Link::kUp &&
      (!droppable || pending_locked() + bytes <= capacity_)) {
    // The first event with room again tells the front end what it missed.
    note_drops_locked();
    return true;
  }
  if (!failed_ && !given_up_ && link_ != Link::kUp) {
    // Reconnecting: a class load is written nowhere now (the hello replays every class); a
    // droppable event is kept for the next connection while the kept ones fit in netqueue=.
    if (!droppable) return true;
    if (std::max(kept_admitted_, kept_.size()) + bytes <= capacity_) {
      kept_admitted_ += bytes;
      ++kept_count_;
      t_keep = true;
      return true;
    }
  }
  ++drops_.events;
  drops_.bytes += bytes;
  return false;
}

void Output::send_kept_locked() {
  if (link_ != Link::kHello) return;
  if (!kept_.empty()) {
    queue_.append(kept_);
    queued_.notify_one();
  }
  kept_.clear();
  kept_admitted_ = 0;
  kept_count_ = 0;
}

Output::Drops Output::kept_events() {
  std::lock_guard lock(mutex_);
  return {kept_count_, kept_.size()};
}

bool Output::reconnect(std::unique_lock<std::mutex>& lock) {
  auto delay = kRetryFirst;
  uint64_t attempts = 0;
  while (!closing_) {
    lock.unlock();
    std::string error;
    const int fd = connect_once(error);
    lock.lock();
    ++attempts;
    // Each new reason once (a collector whose certificate is refused would say so every retry).
    if (fd < 0 && error != last_connect_error_) {
      std::fprintf(stderr, "hprof: net=: %s; retrying\n", error.c_str());
      last_connect_error_ = error;
    }
    if (fd >= 0) {
      if (closing_) {
        ::close(fd);
        return false;
      }
      // The old socket stays open until the listener, its only other user, is done with it.
      fd_ = socket_ = fd;
      ++connections_;
      last_progress_ = std::chrono::steady_clock::now();
      last_connect_error_.clear();
      std::fprintf(stderr, "hprof: net=: %s %s (attempt %llu)\n",
                   connections_ == 1 ? "connected to" : "reconnected to", name_.c_str(),
                   static_cast<unsigned long long>(attempts));
      link_ = on_reconnect_ ? Link::kHello : Link::kUp;
      // The new stream's DROPPED note (after its hello) carries the running totals again.
      noted_ = {};
      if (on_reconnect_) {
        auto handler = on_reconnect_;
        lock.unlock();
        handler();
        lock.lock();
      }
      link_changed_.notify_all();
      return true;
    }
    queued_.wait_for(lock, delay, [this] { return closing_; });
    delay = std::min(delay * 2, kRetryCap);
  }
  return false;
}

void Output::writer_main() {
  std::unique_lock lock(mutex_);
  for (;;) {
    // A first connection that failed is retried once the hello's writer is known.
    queued_.wait(lock, [this] {
      return !queue_.empty() || closing_ || given_up_ || (link_ == Link::kDown && !await_handler_);
    });
    if (given_up_ || failed_) return;
    if (link_ == Link::kDown) {
      if (closing_ || !reconnect(lock)) return;
      continue;
    }
    if (queue_.empty()) {
      if (closing_) return;
      continue;
    }
    std::string batch;
    batch.swap(queue_);
    in_flight_ = batch.size();
    const int fd = socket_;
    lock.unlock();
    size_t sent = 0;
    int error = 0;
    while (sent < batch.size()) {
      const ssize_t n = ::send(fd, batch.data() + sent, batch.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error = n < 0 ? errno : EPIPE;
        break;
      }
      sent += static_cast<size_t>(n);
      std::lock_guard progress(mutex_);
      in_flight_ = batch.size() - sent;
      last_progress_ = std::chrono::steady_clock::now();
      progress_.notify_all();
    }
    lock.lock();
    in_flight_ = 0;
    if (error != 0 && reconnect_ && !closing_) {
      drops_.bytes += batch.size() - sent;
      if (fd == socket_) lose_connection_locked(std::strerror(error));
      progress_.notify_all();
      continue;
    }
    if (error != 0) {
      if (!given_up_) {
        failed_ = true;
        std::fprintf(stderr, "hprof: error: writing %s failed: %s\n", name_.c_str(),
                     std::strerror(error));
      }
      drops_.bytes += batch.size() - sent + queue_.size();
      queue_.clear();
      progress_.notify_all();
      return;
    }
    progress_.notify_all();
  }
}

void Output::enable_reconnect(std::function<void()> on_reconnect) {
  std::lock_guard lock(mutex_);
  if (!net_) return;
  reconnect_ = true;
  on_reconnect_ = std::move(on_reconnect);
  await_handler_ = false;
  queued_.notify_all();
}

bool Output::link_up() {
  std::lock_guard lock(mutex_);
  return link_ == Link::kUp && !failed_ && !given_up_;
}

uint64_t Output::connections() {
  std::lock_guard lock(mutex_);
  return connections_;
}

Output::HelloScope::HelloScope(Output& output) : output_(output) {
  std::lock_guard lock(output.mutex_);
  active_ = output.link_ == Link::kHello;
  t_hello = active_;
  t_hello_for = output.connections_;
}

Output::HelloScope::~HelloScope() {
  done();
}

void Output::HelloScope::send_kept_events() {
  if (!active_) return;
  std::lock_guard lock(output_.mutex_);
  if (output_.hello_writer_locked()) output_.send_kept_locked();
}

void Output::HelloScope::done() {
  if (!active_) return;
  std::lock_guard lock(output_.mutex_);
  // Gone again before its hello was written (and maybe another connection waits for its own).
  const bool current = output_.hello_writer_locked();
  active_ = false;
  t_hello = false;
  if (!current) return;
  output_.send_kept_locked();
  output_.link_ = Link::kUp;
  // What was dropped while the front end was away, as the text stream's first word after the
  // hello (format=b: the binary report's note, as for any drops).
  output_.note_drops_locked();
  output_.link_changed_.notify_all();
}

bool Output::connection_lost(int fd) {
  std::lock_guard lock(mutex_);
  if (!reconnect_ || closing_) return false;
  if (fd == socket_) lose_connection_locked("closed the connection");
  return true;
}

int Output::next_connection(int old_fd) {
  std::unique_lock lock(mutex_);
  link_changed_.wait(lock, [&] {
    return closing_ || failed_ || given_up_ || (link_ == Link::kUp && socket_ != old_fd);
  });
  if (socket_ != old_fd && old_fd >= 0) ::close(old_fd);
  if (closing_ || failed_ || given_up_) return -1;
  return socket_;
}

void Output::write(const void* data, size_t size) {
  std::unique_lock lock(mutex_);
  if (net_) {
    queue_locked(lock, data, size);
    return;
  }
  if (buffer_.size() + size > kBufferSize) {
    write_locked(buffer_.data(), buffer_.size());
    buffer_.clear();
    if (size > kBufferSize) {
      write_locked(data, size);
      return;
    }
  }
  buffer_.append(static_cast<const char*>(data), size);
}

void Output::drain() {
  std::unique_lock lock(mutex_);
  if (net_) {
    if (!wait_with_progress(lock, [this] { return pending_locked() == 0; }) && !failed_)
      give_up_locked("has read nothing for 10 s");
    return;
  }
  write_locked(buffer_.data(), buffer_.size());
  buffer_.clear();
}

bool Output::failed() {
  std::lock_guard lock(mutex_);
  return failed_ || given_up_;
}

Output::Drops Output::drops() {
  std::lock_guard lock(mutex_);
  return drops_;
}

void Output::count_dropped(size_t bytes) {
  std::lock_guard lock(mutex_);
  ++drops_.events;
  drops_.bytes += bytes;
}

bool Output::take_drops_to_note(Drops& totals) {
  std::lock_guard lock(mutex_);
  if (!net_ || failed_ || given_up_ || drops_.events == noted_.events) return false;
  noted_ = totals = drops_;
  return true;
}

uint64_t Output::direct_bytes() {
  std::lock_guard lock(mutex_);
  return file_ != nullptr ? file_->direct_bytes() : 0;
}

int Output::waiting_writers() {
  std::lock_guard lock(mutex_);
  return waiting_writers_;
}

void Output::flush() {
  if (net_) return;  // the writer thread sends as soon as bytes are queued
  std::lock_guard lock(mutex_);
  write_locked(buffer_.data(), buffer_.size());
  buffer_.clear();
  if (fd_ >= 0) ::fsync(fd_);
}

void Output::close() {
  if (net_) {
    {
      std::lock_guard lock(mutex_);
      if (!failed_ && !given_up_) note_drops_locked();
    }
    drain();
    {
      std::lock_guard lock(mutex_);
      closing_ = true;
      closing_now_ = true;
      queued_.notify_all();
      link_changed_.notify_all();
    }
    if (writer_.joinable()) writer_.join();
    {
      // Events kept for a connection that never came.
      std::lock_guard lock(mutex_);
      drops_.events += kept_count_;
      drops_.bytes += kept_.size();
      kept_.clear();
      kept_count_ = 0;
    }
    const Drops d = drops();
    if (d.events != 0 || d.bytes != 0) {
      std::fprintf(stderr,
                   "hprof: net=: %llu events (%llu bytes) were dropped because the front end at "
                   "%s was not reading\n",
                   static_cast<unsigned long long>(d.events),
                   static_cast<unsigned long long>(d.bytes), name_.c_str());
    }
  } else {
    flush();
  }
  {
    std::lock_guard lock(mutex_);
    if (socket_ >= 0) ::shutdown(socket_, SHUT_WR);
    file_.reset();
    if (fd_ >= 0) ::close(fd_);
    fd_ = socket_ = -1;
    net_ = false;
  }
  // TLS: each connection's pipe sends what it still holds, then its close_notify (bounded by
  // kStallLimit); without the lock, so that an event meanwhile is dropped rather than waiting.
  if (tls_ != nullptr) tls_->close_all();
}

}  // namespace hprof::agent
