// SPDX-License-Identifier: Apache-2.0
// File/descriptor and memory sinks.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "hprof_format.h"

namespace hprof {
namespace {

constexpr size_t kFileBufferSize = 256 * 1024;

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

}  // namespace

FileSink::FileSink(const std::string& path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw_errno("cannot create " + path);
  owned_ = true;
  seekable_ = true;
  buffer_.reserve(kFileBufferSize);
}

FileSink::FileSink(int fd) : fd_(fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0) throw_errno("fstat");
  if (S_ISREG(st.st_mode)) {
    off_t at = ::lseek(fd, 0, SEEK_CUR);
    if (at >= 0) {
      seekable_ = true;
      start_ = static_cast<uint64_t>(at);
    }
  }
  buffer_.reserve(kFileBufferSize);
}

FileSink::~FileSink() {
  try {
    close();
  } catch (...) {
  }
}

void FileSink::write_fully(const void* data, size_t size) {
  auto p = static_cast<const uint8_t*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd_, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno("write");
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
}

void FileSink::write(const void* data, size_t size) {
  if (fd_ < 0) throw std::logic_error("hprof::FileSink: write after close");
  position_ += size;
  if (buffer_.size() + size > kFileBufferSize) {
    if (!buffer_.empty()) {
      write_fully(buffer_.data(), buffer_.size());
      buffer_.clear();
    }
    if (size >= kFileBufferSize) {
      write_fully(data, size);
      return;
    }
  }
  auto p = static_cast<const uint8_t*>(data);
  buffer_.insert(buffer_.end(), p, p + size);
}

void FileSink::flush() {
  if (fd_ < 0 || buffer_.empty()) return;
  // Clear first so a failing descriptor is not retried by the destructor.
  std::vector<uint8_t> pending;
  pending.swap(buffer_);
  buffer_.reserve(kFileBufferSize);
  write_fully(pending.data(), pending.size());
}

void FileSink::patch(uint64_t offset, const void* data, size_t size) {
  if (!seekable_) Sink::patch(offset, data, size);
  if (offset + size > position_) throw std::out_of_range("hprof::FileSink::patch past the end");
  flush();
  auto p = static_cast<const uint8_t*>(data);
  off_t at = static_cast<off_t>(start_ + offset);
  while (size > 0) {
    ssize_t n = ::pwrite(fd_, p, size, at);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno("pwrite");
    }
    p += n;
    at += n;
    size -= static_cast<size_t>(n);
  }
}

void FileSink::close() {
  if (fd_ < 0) return;
  try {
    flush();
  } catch (...) {
    if (owned_) ::close(fd_);
    fd_ = -1;
    throw;
  }
  if (owned_ && ::close(fd_) != 0) {
    fd_ = -1;
    throw_errno("close");
  }
  fd_ = -1;
}

void MemorySink::write(const void* data, size_t size) {
  auto p = static_cast<const uint8_t*>(data);
  data_.insert(data_.end(), p, p + size);
}

void MemorySink::patch(uint64_t offset, const void* data, size_t size) {
  if (!seekable_) Sink::patch(offset, data, size);
  if (offset > data_.size() || size > data_.size() - offset) {
    throw std::out_of_range("hprof::MemorySink::patch past the end");
  }
  std::memcpy(data_.data() + offset, data, size);
}

}  // namespace hprof
