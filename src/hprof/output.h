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
//
// net= with period=: a front end that goes away (closed, reset, stalled for kStallLimit) is
// reconnected with capped exponential backoff (kRetryFirst doubling to kRetryCap). Meanwhile
// nothing waits: events (thread start/end, WAIT lines) are kept, up to netqueue= bytes, and sent
// after the next hello; beyond that, and everything else, is dropped and counted (the period
// writer keeps its counters instead, so the first period after the reconnect covers the outage).
// A new connection first gets a hello (header, identity, what later records refer to: the new
// stream must stand alone), written by the thread the reconnect handler wakes, inside a
// HelloScope; other writes are dropped (or kept, for events) until it ends.
//
// nettls= / nettoken=: every connection (the first and each reconnect) makes its TLS handshake
// and sends its token before anything else; TLS runs under the same socket interface (see
// tls::Pipe), so a TLS collector that reads slowly fills the queue exactly as a TCP one does.
// With period= a first connection that fails is retried like a lost one.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "file_appender.h"
#include "options.h"
#include "tls_connection.h"

namespace hprof::agent {

class Output {
 public:
  // How long a report or the exit waits for a front end that reads nothing at all.
  static constexpr std::chrono::seconds kStallLimit{10};
  static constexpr std::chrono::milliseconds kRetryFirst{100};
  static constexpr std::chrono::milliseconds kRetryCap{10'000};
  static constexpr std::chrono::milliseconds kConnectTimeout{5'000};

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
  // admitted, over the limit if need be (bounded by the number of classes). While a reconnecting
  // stream is down, a droppable event is admitted if the events kept so far and its `bytes` fit
  // in netqueue=, and its writes are kept for the next connection (a class load is written nowhere:
  // the hello replays it).
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
  // Whether this thread's event was admitted to be kept for the next connection (the binary
  // report's deferred events carry it to the thread that writes them).
  static bool keeping_event();
  // While in scope, this thread's writes are those of an event kept (or not) for the next
  // connection; the previous state comes back at its end.
  class KeepScope {
   public:
    explicit KeepScope(bool keep);
    ~KeepScope();
    KeepScope(const KeepScope&) = delete;
    KeepScope& operator=(const KeepScope&) = delete;

   private:
    bool previous_;
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
  // net= with period=: reconnect when the front end goes away; `on_reconnect` is called (on the
  // writer thread, no locks held) when a new connection waits for its hello.
  void enable_reconnect(std::function<void()> on_reconnect);
  // Whether the connection is up and past its hello (writes get through).
  bool link_up();
  // Connections made (1 after the first; each reconnect adds one).
  uint64_t connections();
  // Events kept for the next connection right now (tests).
  Drops kept_events();
  // While in scope on the hello writer's thread, its writes go to a connection awaiting its hello;
  // done() lets everyone else write again.
  class HelloScope {
   public:
    explicit HelloScope(Output& output);
    ~HelloScope();
    HelloScope(const HelloScope&) = delete;
    HelloScope& operator=(const HelloScope&) = delete;
    // False if the connection is not awaiting a hello (it went away again, or no reconnect).
    bool active() const { return active_; }
    // Sends the events kept while the front end was away (after the records they refer to);
    // done() does it too, if not done yet.
    void send_kept_events();
    void done();

   private:
    Output& output_;
    bool active_;
  };
  // The command listener: the front end closed `fd` (its read failed). With reconnect, the link is
  // dropped and true is returned; without, false (the listener ends, as JDK 8's did).
  bool connection_lost(int fd);
  // The command listener: waits for a connection other than `old_fd` that is past its hello (and
  // closes `old_fd`, which only the listener still reads); -1 when the output closes.
  int next_connection(int old_fd);
  // Threads waiting for the front end right now (reports, drain; tests wait on it).
  int waiting_writers();
  // The socket, for the command listener (-1 when writing to a file); with reconnect, the first
  // connection's (next_connection gives the later ones).
  int socket() const { return socket_; }
  // Whether the output is a collector's connection (net=), reached yet or not.
  bool net() const { return net_; }
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
  void lose_connection_locked(const char* why);
  // Connects to host_:port_ (non-blocking connect, kConnectTimeout; then the TLS handshake
  // with nettls=, and the token with nettoken=); -1 with one line in `error`.
  int connect_once(std::string& error);
  // net=: refuses a non-loopback collector without TLS, reads the token, loads the CA.
  bool prepare_net(const Options& options, std::string& error);
  // Reconnects with backoff until connected (true) or closing (false); called without mutex_.
  bool reconnect(std::unique_lock<std::mutex>& lock);
  bool admit_event(size_t bytes, bool droppable);
  void send_kept_locked();
  bool hello_writer_locked() const;  // this thread writes the hello the link waits for
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
  bool net_ = false;  // writing to a collector (socket_ is -1 while it has never been reached)
  std::unique_ptr<TlsClient> tls_;  // nettls=
  std::string token_frame_;         // nettoken=: the first bytes of every connection
  bool text_notes_ = false;         // format=a: drops are noted in the stream with a DROPPED line
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

  // Reconnecting (period=).
  enum class Link { kUp, kDown, kHello };
  bool reconnect_ = false;
  Link link_ = Link::kUp;
  std::function<void()> on_reconnect_;
  bool await_handler_ = false;      // period=: a lost link is retried once on_reconnect_ is set
  std::string last_connect_error_;  // reported once while it stays the same
  std::string host_;
  int port_ = 0;
  uint64_t connections_ = 0;
  std::atomic<bool> closing_now_{false};  // closing_, for connect_once (no lock held)
  std::condition_variable link_changed_;  // to the listener: a new connection is up
  // Events kept while the link is not up, sent after the next hello; at most capacity_ bytes
  // (by the admitted events' sizes, or the bytes written, whichever is more).
  std::string kept_;
  size_t kept_admitted_ = 0;  // the sizes the kept events were admitted with
  uint64_t kept_count_ = 0;
};

}  // namespace hprof::agent
