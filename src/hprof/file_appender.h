// SPDX-License-Identifier: Apache-2.0
// Appends to HPROF's output file. Large writes (a heap dump's segments) go around the page cache
// (O_DIRECT) where the file and its file system allow it: a dump of gigabytes is written once and
// not read back by this process, and putting it in the page cache costs the dumping thread a
// kernel copy and a fresh page per 4 KiB (on a virtual machine that hands freed memory back to its
// host, several seconds per GiB), evicts the program's own cached files and leaves gigabytes of
// dirty pages to write back. Small writes stay buffered by the kernel. Where O_DIRECT is refused
// (tmpfs, some network or overlay file systems, a device or pipe), every write is an ordinary one.
//
// Not thread-safe: Output serialises the calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace hprof::agent {

class FileAppender {
 public:
  // Writes of at least this many bytes go around the page cache.
  static constexpr size_t kDirectMin = size_t{1} << 20;
  // Offsets, lengths and memory of direct writes are aligned to this (a multiple of every common
  // logical block size).
  static constexpr size_t kAlign = 4096;
  // The aligned staging buffer direct writes are copied through.
  static constexpr size_t kStageBytes = size_t{4} << 20;

  // `fd` is written at its current offset and stays the caller's; `path` names the same file
  // (opened a second time with O_DIRECT when `direct` is true and it is a regular file).
  FileAppender(int fd, const std::string& path, bool direct);
  ~FileAppender();
  FileAppender(const FileAppender&) = delete;
  FileAppender& operator=(const FileAppender&) = delete;

  // Writes all of [data, data + size) at the descriptor's offset and moves the offset past it.
  // Returns false with errno set when the file could not be written.
  bool append(const void* data, size_t size);

  // Whether large writes go around the page cache now (false once the file system refused one).
  bool direct() const { return direct_fd_ >= 0; }
  // Bytes written around the page cache so far.
  uint64_t direct_bytes() const { return direct_bytes_; }

 private:
  bool append_buffered(const char* data, size_t size);
  bool append_direct(const char* data, size_t size);
  // Writes [data, data + size) at `offset`: around the page cache while that works.
  bool put(const char* data, size_t size, uint64_t offset);
  // Writes all of [data, data + size) at `offset`, or where the descriptor is (and moves it) with
  // kAtDescriptorOffset: a pipe or device has no offset to write at.
  static constexpr uint64_t kAtDescriptorOffset = UINT64_MAX;
  static bool write_at(int fd, const char* data, size_t size, uint64_t offset);
  void remember_tail(const char* data, size_t size);
  void stop_direct();

  int fd_;
  bool seekable_ = false;
  uint64_t position_ = 0;  // the descriptor's offset
  int direct_fd_ = -1;
  char* stage_ = nullptr;  // kStageBytes, kAlign-aligned; allocated at the first direct write
  uint64_t direct_bytes_ = 0;
  // The bytes of the block `position_` is in, before it: a direct write starts at that block's
  // beginning and writes them again. Unknown until an append has covered them.
  char tail_[kAlign];
  bool tail_known_ = false;
};

}  // namespace hprof::agent
