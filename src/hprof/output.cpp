#include "output.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

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

bool Output::open(const Options& options, std::string& error) {
  if (options.net()) {
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* result = nullptr;
    const std::string port = std::to_string(options.net_port);
    const int rc = getaddrinfo(options.net_host.c_str(), port.c_str(), &hints, &result);
    if (rc != 0) {
      error = "cannot resolve host '" + options.net_host + "' for net=: " + gai_strerror(rc);
      return false;
    }
    int fd = -1;
    int last_errno = 0;
    for (addrinfo* a = result; a != nullptr && fd < 0; a = a->ai_next) {
      fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
        last_errno = errno;
        ::close(fd);
        fd = -1;
      }
    }
    freeaddrinfo(result);
    if (fd < 0) {
      error = "cannot connect to " + options.net_host + ":" + port +
              " for net=: " + std::strerror(last_errno);
      return false;
    }
    fd_ = socket_ = fd;
    name_ = options.net_host + ":" + port;
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
  return true;
}

void Output::write_locked(const void* data, size_t size) {
  if (fd_ < 0 || failed_) return;
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd_, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      failed_ = true;
      std::fprintf(stderr, "hprof: error: writing %s failed: %s\n", name_.c_str(),
                   std::strerror(errno));
      return;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
}

void Output::write(const void* data, size_t size) {
  std::lock_guard lock(mutex_);
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
  std::lock_guard lock(mutex_);
  write_locked(buffer_.data(), buffer_.size());
  buffer_.clear();
}

bool Output::failed() {
  std::lock_guard lock(mutex_);
  return failed_;
}

void Output::flush() {
  std::lock_guard lock(mutex_);
  write_locked(buffer_.data(), buffer_.size());
  buffer_.clear();
  if (fd_ >= 0 && socket_ < 0) ::fsync(fd_);
}

void Output::close() {
  flush();
  std::lock_guard lock(mutex_);
  if (socket_ >= 0) ::shutdown(socket_, SHUT_WR);
  if (fd_ >= 0) ::close(fd_);
  fd_ = socket_ = -1;
}

}  // namespace hprof::agent
