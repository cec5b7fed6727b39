// Where HPROF's report goes: a file (created at start-up, re-created if it exists, or with a pid
// suffix when force=n) or a TCP connection (net=host:port). Writes are serialised.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>

#include "options.h"

namespace hprof::agent {

class Output {
 public:
  // Opens the destination; on failure returns false with one line in `error`.
  bool open(const Options& options, std::string& error);
  void write(const std::string& text) { write(text.data(), text.size()); }
  void write(const void* data, size_t size);
  void flush();
  // Writes what is buffered, without syncing the file.
  void drain();
  // Whether a write has failed (reported once on stderr); nothing is written afterwards.
  bool failed();
  void close();
  // The socket, for the command listener (-1 when writing to a file).
  int socket() const { return socket_; }
  const std::string& name() const { return name_; }
  // Serialises multi-part writes (a whole section) against other writers.
  std::mutex& section_mutex() { return section_mutex_; }

 private:
  void write_locked(const void* data, size_t size);

  std::mutex mutex_;
  std::mutex section_mutex_;
  int fd_ = -1;
  int socket_ = -1;
  std::string name_;
  std::string buffer_;
  bool failed_ = false;
};

}  // namespace hprof::agent
