// SPDX-License-Identifier: Apache-2.0
#include "file_appender.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace hprof::agent {

FileAppender::FileAppender(int fd, const std::string& path, bool direct) : fd_(fd) {
  struct stat st {};
  if (fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) return;  // a device or pipe: plain writes
  const off_t here = lseek(fd_, 0, SEEK_CUR);
  if (here < 0) return;
  seekable_ = true;
  position_ = static_cast<uint64_t>(here);
  tail_known_ = position_ % kAlign == 0;
  if (!direct) return;
  // O_NONBLOCK: should the name now be a FIFO, the open must not wait for a reader.
  const int d = ::open(path.c_str(), O_WRONLY | O_DIRECT | O_NONBLOCK | O_CLOEXEC);
  if (d < 0) return;  // e.g. EINVAL: the file system has no direct I/O
  struct stat dst {};
  // The same file, not one that took its name since.
  if (fstat(d, &dst) != 0 || dst.st_dev != st.st_dev || dst.st_ino != st.st_ino) {
    ::close(d);
    return;
  }
  direct_fd_ = d;
}

FileAppender::~FileAppender() {
  stop_direct();
  std::free(stage_);
}

void FileAppender::stop_direct() {
  if (direct_fd_ >= 0) ::close(direct_fd_);
  direct_fd_ = -1;
}

bool FileAppender::append(const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  if (size >= kDirectMin && direct_fd_ >= 0 && tail_known_) {
    if (stage_ == nullptr) {
      void* stage = nullptr;
      if (posix_memalign(&stage, kAlign, kStageBytes) == 0) stage_ = static_cast<char*>(stage);
    }
    if (stage_ != nullptr) return append_direct(p, size);
  }
  return append_buffered(p, size);
}

bool FileAppender::append_buffered(const char* data, size_t size) {
  if (!write_at(fd_, data, size, kAtDescriptorOffset)) return false;
  if (seekable_) {
    position_ += size;
    remember_tail(data, size);
  }
  return true;
}

// The block `position_` is in is written again from its beginning, with the bytes before
// `position_` (tail_) first; whole blocks go around the page cache through the staging buffer, and
// the last partial block through the page cache, so the file holds every byte once this returns.
bool FileAppender::append_direct(const char* data, size_t size) {
  const size_t head = static_cast<size_t>(position_ % kAlign);
  uint64_t offset = position_ - head;
  std::memcpy(stage_, tail_, head);
  size_t fill = head;
  for (size_t done = 0; done < size;) {
    const size_t n = std::min(kStageBytes - fill, size - done);
    std::memcpy(stage_ + fill, data + done, n);
    fill += n;
    done += n;
    if (fill == kStageBytes) {
      if (!put(stage_, fill, offset)) return false;
      offset += fill;
      fill = 0;
    }
  }
  const size_t whole = fill - fill % kAlign;
  if (whole > 0 && !put(stage_, whole, offset)) return false;
  if (fill > whole && !write_at(fd_, stage_ + whole, fill - whole, offset + whole)) return false;
  position_ += size;
  remember_tail(data, size);
  if (lseek(fd_, static_cast<off_t>(position_), SEEK_SET) < 0) return false;
  return true;
}

bool FileAppender::put(const char* data, size_t size, uint64_t offset) {
  while (size > 0 && direct_fd_ >= 0) {
    const ssize_t n = ::pwrite(direct_fd_, data, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EINVAL || errno == EOPNOTSUPP)) {
      // Opened, but the file system will not write this way after all: ordinary writes from now.
      stop_direct();
      break;
    }
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    direct_bytes_ += static_cast<uint64_t>(n);
    data += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
    if (n % static_cast<ssize_t>(kAlign) != 0) break;  // a short, unaligned write: the rest below
  }
  return write_at(fd_, data, size, offset);
}

bool FileAppender::write_at(int fd, const char* data, size_t size, uint64_t offset) {
  while (size > 0) {
    const ssize_t n = offset == kAtDescriptorOffset
                          ? ::write(fd, data, size)
                          : ::pwrite(fd, data, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    data += n;
    size -= static_cast<size_t>(n);
    if (offset != kAtDescriptorOffset) offset += static_cast<uint64_t>(n);
  }
  return true;
}

// After an append of [data, data + size) that ended at position_.
void FileAppender::remember_tail(const char* data, size_t size) {
  const size_t want = static_cast<size_t>(position_ % kAlign);
  if (size >= want) {
    std::memcpy(tail_, data + size - want, want);
    tail_known_ = true;
  } else if (tail_known_) {
    // The append stayed inside the block: the bytes before it are in tail_ already.
    std::memcpy(tail_ + want - size, data, size);
  }
}

}  // namespace hprof::agent
