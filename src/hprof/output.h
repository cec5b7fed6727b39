// SPDX-License-Identifier: Apache-2.0
// Where HPROF's report goes: a file (created at start-up, re-created if it exists, or with a pid
// suffix when force=n) or a TCP connection (net=host:port). Writes are serialised.
//
// net=: a front end that reads slowly or not at all must never block the program's threads. Bytes
// go to a bounded queue (netqueue=) that a writer thread sends; events written from Java threads
// (thread start/end, WAIT lines) ask admit_event() first and are dropped, and counted, while the
// queue is full. Reports (written by the agent's own threads) wait for room instead, so a section
// is never cut; when the front end has read nothing for kStallLimit, the connection is given up
// and the rest is counted as dropped.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "file_appender.h"
#include "options.h"

namespace hprof::agent {

class Output {
 public:
  // How long a report or the exit waits for a front end that reads nothing at all.
  static constexpr std::chrono::seconds kStallLimit{10};

  struct Drops {
    uint64_t events = 0;  // events not sent (the queue was full or the front end was given up)
    uint64_t bytes = 0;   // their bytes, and report bytes left unsent when giving up
  };

  ~Output();
  // Opens the destination; on failure returns false with one line in `error`.
  bool open(const Options& options, std::string& error);
  void write(const std::string& text) { write(text.data(), text.size()); }
  void write(const void* data, size_t size);
  // An event written from a Java thread: while in scope, this thread's writes never wait. A
  // droppable event is refused (counted as dropped with `bytes`) while the queue is full and the
  // caller then writes nothing; one that later records depend on (a class load) is always
  // admitted, over the limit if need be (bounded by the number of classes).
  class EventScope {
   public:
    EventScope(Output& output, size_t bytes, bool droppable = true);
    ~EventScope();
    EventScope(const EventScope&) = delete;
    EventScope& operator=(const EventScope&) = delete;
    bool admitted() const { return admitted_; }

   private:
    bool admitted_;
  };
  void flush();
  // Writes what is buffered, without syncing the file (net=: waits until it has been sent).
  void drain();
  // Whether a write has failed (reported once on stderr); nothing is written afterwards.
  bool failed();
  // Sends what is queued (net=: waiting while the front end makes progress), then closes; the
  // drops, if any, are reported on stderr.
  void close();
  Drops drops();
  // An admitted event its writer could not write after all (the binary report's deferred events
  // over their limit): counted as dropped.
  void count_dropped(size_t bytes);
  // format=b: true, with the running totals, when events were dropped since the last call (the
  // binary report writes them as a DROPPED note record; text streams get a line from here).
  bool take_drops_to_note(Drops& totals);
  // Threads waiting for the front end right now (reports, drain; tests wait on it).
  int waiting_writers();
  // The socket, for the command listener (-1 when writing to a file).
  int socket() const { return socket_; }
  const std::string& name() const { return name_; }
  // Bytes written to the file around the page cache (directio=y; 0 for net=).
  uint64_t direct_bytes();
  // Serialises multi-part writes (a whole section) against other writers.
  std::mutex& section_mutex() { return section_mutex_; }

 private:
  void write_locked(const void* data, size_t size);
  void queue_locked(std::unique_lock<std::mutex>& lock, const void* data, size_t size);
  // Waits until `done` or the front end has read nothing for kStallLimit; false on a stall.
  template <typename Done>
  bool wait_with_progress(std::unique_lock<std::mutex>& lock, Done done);
  void give_up_locked(const char* why);
  bool admit_event(size_t bytes, bool droppable);
  void note_drops_locked();
  void writer_main();
  size_t pending_locked() const { return queue_.size() + in_flight_; }

  std::mutex mutex_;
  std::mutex section_mutex_;
  int fd_ = -1;
  int socket_ = -1;
  std::unique_ptr<FileAppender> file_;  // writes to fd_ when it is a file
  std::string name_;
  std::string buffer_;
  bool failed_ = false;

  // net=
  bool text_notes_ = false;  // format=a: drops are noted in the stream with a DROPPED line
  size_t capacity_ = 0;
  std::string queue_;     // bytes not yet taken by the writer thread
  size_t in_flight_ = 0;  // bytes the writer thread is sending
  bool closing_ = false;
  bool given_up_ = false;
  int waiting_writers_ = 0;
  std::chrono::steady_clock::time_point last_progress_;
  Drops drops_;
  Drops noted_;                       // drops already noted in the stream
  std::condition_variable queued_;    // to the writer: bytes or closing
  std::condition_variable progress_;  // from the writer: bytes sent or failed
  std::thread writer_;
};

}  // namespace hprof::agent
