// SPDX-License-Identifier: Apache-2.0
// One profile the server shows: a JVM's HPROF stream (net=host:port) or a saved file. A reader
// thread owns the socket or file: it always reads, parses, and publishes a snapshot of the profile
// that HTTP handlers read without ever holding up the reader (so a slow UI never blocks the JVM).
// Commands go back to the agent over the same socket, in HPROF's command protocol.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "analysis.h"
#include "jvm_connections.h"
#include "jvm_identity.h"
#include "profiles.h"

namespace jvmprof {

struct SessionLimits {
  size_t max_line = 1 << 16;              // longest text line of a stream
  size_t max_record = size_t{256} << 20;  // largest binary record (a heap dump segment)
  std::chrono::milliseconds command_timeout{30'000};
  // Where a live format=b stream is kept on disk so that its heap dumps can be analysed (empty:
  // not kept), and how much of a stream may be kept.
  std::string spool_dir;
  uint64_t max_spool = uint64_t{4} << 30;
};

// One period= period of a JVM, as the server keeps it: its rows only. The traces they name stay
// in the session's profile, where they came first; Session::period_profile joins the two.
struct PeriodEntry {
  uint64_t seq = 0;
  int64_t start_ms = 0, end_ms = 0;
  std::shared_ptr<const profiles::PeriodDelta> rows;
};

// Called on a connection's reader thread when its JVM has said who it is (IDENTITY; ended_ms 0)
// and again when the connection ends (how, and the totals at its end) -- twice per connection
// at most, never for one without an IDENTITY or for a file. A profile store subscribes here.
using ConnectionHook = std::function<void(const JvmIdentity&, const ConnectionRecord&)>;

class Session {
 public:
  // The latest periods kept per JVM (an hour at period=60, ten minutes at period=10): each
  // holds its rows only (not copies of the traces they name), so a JVM's memory here stays
  // bounded and small beside its profile (docs/jvmprof-serve.md, "Many JVMs at once").
  static constexpr size_t kKeptPeriods = 60;

  // `fd` is a connected socket (is_socket) or an open file; the session owns and closes it.
  Session(uint32_t id, std::string name, int fd, bool is_socket, uint64_t size,
          SessionLimits limits);
  ~Session();  // stops the reader
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Called for every period this JVM sends (see PeriodHook); set before start().
  void set_period_hook(PeriodHook hook) { period_hook_ = std::move(hook); }
  void set_connection_hook(ConnectionHook hook) { connection_hook_ = std::move(hook); }
  void start();
  void stop();  // shuts the socket down and joins the reader

  uint32_t id() const { return id_; }
  bool live() const { return is_socket_; }
  // The latest published profile (never null).
  std::shared_ptr<const profiles::JavaProfile> profile() const;
  // State, byte counts, errors and the command log, as the UI's JSON.
  nlohmann::json info() const;
  // Who the JVM is (from its IDENTITY report; only the address before it or without one).
  JvmIdentity identity() const;
  // The kept periods, oldest first: each one's traces are in profile() by then.
  std::vector<PeriodEntry> periods() const;
  // One kept period as a profile of its own (its rows, the traces they name), for the views.
  profiles::JavaProfile period_profile(const PeriodEntry& period) const;

  // Sends one of HPROF's commands: gc, dump-heap, sites, heap-summary, traces, cpu-samples,
  // cpu-on, cpu-off, alloc-on, alloc-off, reset-cpu, reset-sites, depth (args.depth),
  // monitor-dump (only to an agent whose SETTINGS offer it), exit (args.confirm must be true).
  // Returns the command's log entry; throws std::invalid_argument for an unknown or unconfirmed
  // command, std::runtime_error when nothing can be sent.
  nlohmann::json command(const std::string& name, const nlohmann::json& args);

  // The newest heap dump, indexed by the analysis library: a saved binary file itself, or for a
  // live format=b stream the stream up to the end of its newest dump. Opened on first use and
  // kept until a newer dump arrives. Null with `error` set when there is none. `serial`, when
  // given, receives which dump it is (info()'s heapDumpSerial).
  std::shared_ptr<const analysis::HeapDump> heap(std::string& error, uint64_t* serial = nullptr);

 private:
  struct Command {
    uint64_t serial = 0;
    std::string name;
    std::string state;   // "sent", "waiting", "answered", "no answer", "failed"
    std::string answer;  // the section that answers it ("" when the protocol has no answer)
    uint64_t count_before = 0;
    std::chrono::steady_clock::time_point sent;
    int64_t answered_ms = -1;
    std::string detail;
  };
  void read_loop();
  void on_period(const profiles::PeriodDelta& d);  // reader thread
  void publish(bool force);
  void check_commands(const profiles::JavaProfile& p);  // with mu_ held
  nlohmann::json command_json(const Command& c) const;

  const uint32_t id_;
  const std::string name_;
  const bool is_socket_;
  const uint64_t size_;  // file size (0 for sockets)
  const SessionLimits limits_;
  int fd_;
  std::thread reader_;
  std::atomic<bool> stopping_{false};
  const std::chrono::system_clock::time_point started_ = std::chrono::system_clock::now();

  // Written by the reader only.
  std::unique_ptr<profiles::StreamReader> stream_;
  uint64_t published_sections_ = ~uint64_t{0};
  uint64_t published_settings_ = 0;
  uint64_t published_identity_ = 0;
  uint64_t published_periods_ = 0;
  size_t published_traces_ = 0;
  size_t published_threads_ = 0;
  std::chrono::steady_clock::time_point published_at_;
  std::chrono::steady_clock::duration last_copy_cost_{};
  // Periods read but not yet published: they join periods_ with the snapshot that has their
  // traces.
  std::vector<PeriodEntry> unpublished_periods_;
  // Complete report sections when the newest period arrived: a section after it, then the end
  // of the stream, is what HPROF writes at exit (its cumulative reports).
  uint64_t sections_at_last_period_ = 0;

  PeriodHook period_hook_;
  ConnectionHook connection_hook_;
  bool connection_reported_ = false;   // reader only: the hook was told of the beginning
  uint64_t identity_looked_at_ = 0;    // reader only: published_identity_ when last looked at
  void report_connection(bool ended);  // reader thread, without mu_

  mutable std::mutex mu_;  // guards everything below; held briefly, never while reading
  std::deque<PeriodEntry> periods_;
  uint64_t periods_dropped_ = 0;  // older periods let go of (beyond kKeptPeriods)
  std::shared_ptr<const profiles::JavaProfile> snapshot_;
  std::string state_ = "connected";  // connected / reading / ended / error
  // When and why the connection ended (end_cause(): "closed by agent", "reset", ...).
  int64_t ended_ms_ = 0;
  std::string end_cause_;
  std::string error_;
  uint64_t bytes_ = 0;
  uint64_t discarded_ = 0;  // bytes read after a parse error (read so the JVM never blocks)
  mutable std::vector<Command> commands_;              // info() records timeouts it notices
  std::map<std::string, int64_t> section_arrived_ms_;  // section name -> wall clock ms
  uint64_t next_serial_ = 1;
  std::mutex write_mu_;  // one command on the wire at a time

  // Spooling (reader only, except the two values under mu_).
  void spool(std::string_view bytes);
  int spool_fd_ = -1;
  uint64_t spooled_ = 0;
  bool spool_full_ = false;
  uint64_t heap_dumps_seen_ = 0;
  std::string spool_path_;    // under mu_
  uint64_t dump_prefix_ = 0;  // under mu_: stream bytes through the newest complete dump
  uint64_t dump_serial_ = 0;  // under mu_: which dump that is (1, 2, ...)

  // Indexing a dump (under mu_): the analysis library's latest phase and percent, shown while it
  // runs ("indexing" in info()) and kept afterwards (the last phase at 100 %).
  bool indexing_ = false;
  std::string indexing_phase_;
  unsigned indexing_percent_ = 0;

  std::mutex heap_mu_;  // opening a dump can take long: never held by the reader
  std::shared_ptr<const analysis::HeapDump> heap_;
  uint64_t heap_serial_ = 0;
};

}  // namespace jvmprof
