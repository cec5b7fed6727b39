// SPDX-License-Identifier: Apache-2.0
#include "agent_session.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "jvm_connections.h"

namespace jvmprof {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPublishEvery = std::chrono::milliseconds(250);

void put_u2(std::string& s, uint16_t v) {
  v = htons(v);
  s.append(reinterpret_cast<const char*>(&v), 2);
}
void put_u4(std::string& s, uint32_t v) {
  v = htonl(v);
  s.append(reinterpret_cast<const char*>(&v), 4);
}
void put_cutoff(std::string& s, float cutoff) {
  uint32_t bits;
  std::memcpy(&bits, &cutoff, 4);
  put_u4(s, bits);
}

struct CommandSpec {
  std::string_view name;
  uint8_t tag;
  int control = 0;          // CONTROL sub-command (tag 0x08)
  std::string_view answer;  // the section HPROF writes in reply ("" if none)
  std::string_view what;    // for the UI's menu
};
constexpr CommandSpec kCommands[] = {
    {"gc", 0x01, 0, "", "force a garbage collection"},
    {"dump-heap", 0x02, 0, "HEAP DUMP", "write a heap dump"},
    {"sites", 0x03, 0, "SITES", "write the allocation sites"},
    {"heap-summary", 0x04, 0, "HEAP SUMMARY", "write a heap summary (format=b only)"},
    {"traces", 0x06, 0, "", "write the traces not sent yet"},
    {"cpu-samples", 0x07, 0, "CPU", "write the CPU samples or times"},
    {"alloc-on", 0x08, 1, "", "allocation tracking on"},
    {"alloc-off", 0x08, 2, "", "allocation tracking off"},
    {"cpu-on", 0x08, 3, "", "CPU sampling on"},
    {"cpu-off", 0x08, 4, "", "CPU sampling off"},
    {"reset-cpu", 0x08, 5, "", "clear the CPU costs"},
    {"reset-sites", 0x08, 6, "", "clear the allocation sites"},
    {"depth", 0x08, 7, "", "set the trace depth"},
    {"monitor-dump", 0x09, 0, "MONITOR DUMP", "write MONITOR TIME and MONITOR DUMP (monitor=y)"},
    {"exit", 0x05, 0, "", "end the JVM (exit 0)"},
};

uint64_t answer_count(const profiles::JavaProfile& p, std::string_view answer) {
  auto count = [&](const char* name) {
    auto it = p.section_counts.find(name);
    return it == p.section_counts.end() ? uint64_t{0} : it->second;
  };
  if (answer == "CPU") return count("CPU SAMPLES") + count("CPU TIME");
  if (answer == "SETTINGS") return p.settings_reports;
  return count(std::string(answer).c_str());
}

}  // namespace

Session::Session(uint32_t id, std::string name, int fd, bool is_socket, uint64_t size,
                 SessionLimits limits)
    : id_(id),
      name_(std::move(name)),
      is_socket_(is_socket),
      size_(size),
      limits_(limits),
      fd_(fd),
      stream_(std::make_unique<profiles::StreamReader>(name_, limits.max_line, limits.max_record)),
      snapshot_(std::make_shared<profiles::JavaProfile>()) {
  if (!is_socket_) state_ = "reading";
  stream_->on_period([this](const profiles::PeriodDelta& d) { on_period(d); });
}

Session::~Session() {
  stop();
  if (spool_fd_ >= 0) ::close(spool_fd_);
  // Spooled streams and their dump copies are scratch space: removed with the session.
  std::lock_guard lock(mu_);
  if (!spool_path_.empty()) {
    ::unlink(spool_path_.c_str());
    for (uint64_t k = 1; k <= dump_serial_; ++k)
      ::unlink((spool_path_ + ".dump" + std::to_string(k) + ".hprof").c_str());
  }
}

void Session::start() {
  reader_ = std::thread([this] { read_loop(); });
}

void Session::stop() {
  stopping_ = true;
  if (is_socket_ && fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
  if (reader_.joinable()) reader_.join();
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

std::shared_ptr<const profiles::JavaProfile> Session::profile() const {
  std::lock_guard lock(mu_);
  return snapshot_;
}

void Session::read_loop() {
  std::string buffer(1 << 16, '\0');
  bool parsing = true;
  ReadEnd end;  // how the loop ended: the connection's end cause
  for (;;) {
    // Wake up now and then to publish what was parsed even when the stream pauses.
    pollfd pfd{fd_, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(kPublishEvery.count()));
    if (ready < 0 && errno != EINTR) {
      end.error = errno;
      break;
    }
    if (stopping_) break;
    if (ready <= 0) {
      if (parsing) publish(false);
      continue;
    }
    const ssize_t n = ::read(fd_, buffer.data(), buffer.size());
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) end.error = errno;
    if (n <= 0) break;
    {
      std::lock_guard lock(mu_);
      bytes_ += static_cast<uint64_t>(n);
      if (!parsing) discarded_ += static_cast<uint64_t>(n);
    }
    if (!parsing) continue;  // keep reading: a JVM must never block on us
    try {
      const std::string_view chunk(buffer.data(), static_cast<size_t>(n));
      stream_->feed(chunk);
      // Streams are spooled from their first byte: their heap dumps (binary, or text ones the
      // analysis library converts) are indexed from the spool.
      if (is_socket_) spool(chunk);
    } catch (const profiles::ProfileError& e) {
      parsing = false;
      publish(true);
      std::lock_guard lock(mu_);
      state_ = "error";
      error_ = e.what();
      continue;
    }
    publish(false);
    report_connection(false);
  }
  std::string end_error;
  if (parsing && !stopping_) {
    try {
      stream_->finish();
    } catch (const profiles::ProfileError& e) {
      end_error = e.what();
    }
  }
  publish(true);
  end.stopped = stopping_;
  end.socket = is_socket_;
  end.exit_reports = stream_->profile().sections > sections_at_last_period_;
  {
    std::lock_guard lock(mu_);
    ended_ms_ = profiles::wall_clock_ms();
    end_cause_ = end_cause(end);
    if (state_ != "error") {
      state_ = "ended";
      if (!end_error.empty()) error_ = end_error;
    }
    for (Command& c : commands_) {
      if (c.state == "waiting") {
        c.state = "no answer";
        c.detail = "the stream ended first";
      }
    }
  }
  report_connection(true);
}

void Session::report_connection(bool ended) {
  // published_identity_: the snapshot info() reads has the IDENTITY. Looked at again only when
  // a new one arrived, not for every chunk read.
  if (!connection_hook_ || !is_socket_ || published_identity_ == 0) return;
  if (!ended && (connection_reported_ || published_identity_ == identity_looked_at_)) return;
  identity_looked_at_ = published_identity_;
  const JvmIdentity jvm = identity();
  if (jvm.pid == 0) return;
  ConnectionRecord record = ConnectionRecord::from_info(info());
  if (!connection_reported_) {
    connection_reported_ = true;
    ConnectionRecord begun = record;
    begun.ended_ms = 0;
    begun.end_cause.clear();
    connection_hook_(jvm, begun);
  }
  if (ended) connection_hook_(jvm, record);
}

void Session::on_period(const profiles::PeriodDelta& d) {
  const profiles::JavaProfile& stream = stream_->profile();
  sections_at_last_period_ = stream.sections;
  unpublished_periods_.push_back(
      PeriodEntry{d.seq, d.start_ms, d.end_ms, std::make_shared<const profiles::PeriodDelta>(d)});
  if (period_hook_) {
    period_hook_(JvmIdentity::from(stream, id_, name_), d.start_ms, d.end_ms,
                 profiles::period_profile(stream, d));
  }
}

JvmIdentity Session::identity() const {
  std::lock_guard lock(mu_);
  return JvmIdentity::from(*snapshot_, id_, name_);
}

std::vector<PeriodEntry> Session::periods() const {
  std::lock_guard lock(mu_);
  return {periods_.begin(), periods_.end()};
}

profiles::JavaProfile Session::period_profile(const PeriodEntry& period) const {
  return profiles::period_profile(*profile(), *period.rows);
}

// Copies the parsed profile for readers; at most every kPublishEvery unless forced, and only when
// something changed.
void Session::publish(bool force) {
  const auto& p = stream_->profile();
  // A completed section is published at once (a command may be waiting for it); new traces and
  // threads alone at most every kPublishEvery.
  const bool new_section =
      p.sections != published_sections_ || p.settings_reports != published_settings_ ||
      p.identity_reports != published_identity_ || p.periods != published_periods_;
  const bool changed =
      new_section || p.traces.size() != published_traces_ || p.threads.size() != published_threads_;
  const auto now = Clock::now();
  // A big profile takes long to copy: copies of growing traces alone are spaced by four times the
  // last copy's cost, so reading a large file is not spent copying it over and over.
  const auto every = std::max<Clock::duration>(kPublishEvery, 4 * last_copy_cost_);
  if (!force && !new_section && (!changed || now - published_at_ < every)) return;
  auto copy = std::make_shared<profiles::JavaProfile>(p);
  last_copy_cost_ = Clock::now() - now;
  published_sections_ = p.sections;
  published_settings_ = p.settings_reports;
  published_identity_ = p.identity_reports;
  published_periods_ = p.periods;
  published_traces_ = p.traces.size();
  published_at_ = now;
  std::lock_guard lock(mu_);
  // When each kind of section last arrived: the UI says how old what it shows is.
  const int64_t wall = profiles::wall_clock_ms();
  for (const auto& [name, count] : copy->section_counts) {
    auto before = snapshot_->section_counts.find(name);
    if (before == snapshot_->section_counts.end() || before->second != count)
      section_arrived_ms_[name] = wall;
  }
  if (copy->settings_reports != snapshot_->settings_reports) section_arrived_ms_["SETTINGS"] = wall;
  snapshot_ = copy;
  for (PeriodEntry& e : unpublished_periods_) {
    periods_.push_back(std::move(e));
    if (periods_.size() > kKeptPeriods) {
      periods_.pop_front();
      ++periods_dropped_;
    }
  }
  unpublished_periods_.clear();
  published_threads_ = copy->threads.size();
  check_commands(*copy);
}

void Session::spool(std::string_view bytes) {
  if (limits_.spool_dir.empty() || spool_full_) return;
  if (spool_fd_ < 0) {
    const std::string path = limits_.spool_dir + "/profile-" + std::to_string(id_) + ".hprof";
    spool_fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (spool_fd_ < 0) {
      spool_full_ = true;
      return;
    }
    std::lock_guard lock(mu_);
    spool_path_ = path;
  }
  if (spooled_ + bytes.size() > limits_.max_spool) {
    spool_full_ = true;  // later dumps cannot be analysed; what was kept stays usable
    return;
  }
  size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t w = ::write(spool_fd_, bytes.data() + off, bytes.size() - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      spool_full_ = true;
      return;
    }
    off += static_cast<size_t>(w);
  }
  spooled_ += bytes.size();
  const auto& p = stream_->profile();
  if (p.heap_dumps != heap_dumps_seen_) {
    heap_dumps_seen_ = p.heap_dumps;
    std::lock_guard lock(mu_);
    dump_prefix_ = stream_->bytes() - stream_->buffered();
    dump_serial_ = p.heap_dumps;
  }
}

std::shared_ptr<const analysis::HeapDump> Session::heap(std::string& error, uint64_t* serial_out) {
  std::lock_guard heap_lock(heap_mu_);
  std::string source;
  uint64_t serial = 0, prefix = 0;
  {
    std::lock_guard lock(mu_);
    if (!is_socket_) {
      if (snapshot_->heap_dumps == 0) {
        error =
            state_ == "reading" ? "the file is still being read" : "this file holds no heap dump";
        return nullptr;
      }
      source = name_;
      serial = 1;
    } else {
      if (dump_serial_ == 0) {
        error = "no heap dump yet: press \"dump heap\"";
        return nullptr;
      }
      source = spool_path_;
      serial = dump_serial_;
      prefix = dump_prefix_;
    }
  }
  if (serial_out) *serial_out = serial;
  if (heap_ && heap_serial_ == serial) return heap_;
  std::string path = source;
  if (is_socket_) {
    // The stream up to the end of that dump, as a file of its own (the spool keeps growing).
    path = source + ".dump" + std::to_string(serial) + ".hprof";
    const int in = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
    const int out = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    bool ok = in >= 0 && out >= 0;
    uint64_t left = prefix;
    while (ok && left > 0) {
      const ssize_t n = ::copy_file_range(in, nullptr, out, nullptr, left, 0);
      if (n <= 0)
        ok = false;
      else
        left -= static_cast<uint64_t>(n);
    }
    if (in >= 0) ::close(in);
    if (out >= 0) ::close(out);
    if (!ok) {
      error = "cannot copy the heap dump out of the stream's spool file";
      return nullptr;
    }
  }
  try {
    analysis::OpenOptions options;
    options.use_index_file = false;  // never write next to someone's file
    // The UI polls info() while this runs: it shows the phase and percent on its progress bar.
    options.on_progress = [this](const std::string& phase, unsigned percent) {
      std::lock_guard lock(mu_);
      indexing_phase_ = phase;
      indexing_percent_ = percent;
    };
    {
      std::lock_guard lock(mu_);
      indexing_ = true;
      indexing_phase_.clear();
      indexing_percent_ = 0;
    }
    heap_ = analysis::HeapDump::open(path, options);
    heap_serial_ = serial;
    std::lock_guard lock(mu_);
    indexing_ = false;
    return heap_;
  } catch (const std::exception& e) {
    std::lock_guard lock(mu_);
    indexing_ = false;
    error = e.what();
    return nullptr;
  }
}

void Session::check_commands(const profiles::JavaProfile& p) {
  const auto now = Clock::now();
  for (Command& c : commands_) {
    if (c.state != "waiting") continue;
    if (answer_count(p, c.answer) > c.count_before) {
      c.state = "answered";
      c.answered_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - c.sent).count();
    }
  }
}

nlohmann::json Session::command_json(const Command& c) const {
  Command copy = c;
  if (copy.state == "waiting" && Clock::now() - copy.sent > limits_.command_timeout) {
    copy.state = "no answer";
    copy.detail = "no " + copy.answer + " within " +
                  std::to_string(limits_.command_timeout.count() / 1000) + " s";
  }
  return {{"serial", copy.serial}, {"command", copy.name},           {"state", copy.state},
          {"answer", copy.answer}, {"answeredMs", copy.answered_ms}, {"detail", copy.detail}};
}

nlohmann::json Session::info() const {
  std::lock_guard lock(mu_);
  const auto& p = *snapshot_;
  nlohmann::json measures = nlohmann::json::array();
  for (auto m : profiles::available_measures(p)) measures.push_back(profiles::measure_name(m));
  nlohmann::json commands = nlohmann::json::array();
  // Timeouts are decided here, when someone looks: a command past its deadline is reported as
  // unanswered (and stays so: a late answer is still shown as the profile's newest section).
  for (Command& c : commands_) {
    nlohmann::json j = command_json(c);
    if (j["state"] == "no answer" && c.state == "waiting") {
      c.state = "no answer";
      c.detail = j["detail"];
    }
    commands.push_back(std::move(j));
  }
  nlohmann::json sections = nlohmann::json::object();
  for (const auto& [name, count] : p.section_counts) sections[name] = count;
  nlohmann::json settings = nlohmann::json::object();
  for (const auto& [key, value] : p.agent_settings) settings[key] = value;
  nlohmann::json arrived = nlohmann::json::object();
  for (const auto& [name, ms] : section_arrived_ms_) arrived[name] = ms;
  // The latest periods in brief (newest last): what each one carried.
  nlohmann::json latest = nlohmann::json::array();
  for (size_t i = periods_.size() > 10 ? periods_.size() - 10 : 0; i < periods_.size(); ++i) {
    const PeriodEntry& e = periods_[i];
    const auto& d = *e.rows;
    latest.push_back({{"seq", e.seq},
                      {"startMs", e.start_ms},
                      {"endMs", e.end_ms},
                      {"cpuSamples", d.cpu_samples ? d.cpu_samples->total : 0},
                      {"cpuTimeMs", d.cpu_time ? d.cpu_time->total : 0},
                      {"sites", d.sites ? d.sites->size() : 0},
                      {"monitorMs", d.monitor_time ? d.monitor_time->total : 0}});
  }
  nlohmann::json periods = {{"received", p.periods},
                            {"kept", periods_.size()},
                            {"lastEndMs", p.last_period_end_ms},
                            {"latest", std::move(latest)}};
  return {
      {"id", id_},
      {"identity", JvmIdentity::from(p, id_, name_).to_json()},
      {"periods", std::move(periods)},
      {"name", name_},
      {"live", is_socket_},
      {"format", bytes_ == 0 ? ""
                 : p.binary  ? "b"
                             : "a"},
      {"state", state_},
      {"error", error_},
      {"bytes", bytes_},
      {"size", size_},
      {"discarded", discarded_},
      {"sections", p.sections},
      {"sectionCounts", std::move(sections)},
      {"sectionArrivedMs", std::move(arrived)},
      {"serverNowMs", profiles::wall_clock_ms()},
      {"settings", std::move(settings)},
      {"settingsReports", p.settings_reports},
      {"heapDumps", p.heap_dumps},
      {"sitesSampleBytes", p.sites_sample_bytes},
      {"droppedEvents", p.dropped_events},
      {"droppedBytes", p.dropped_bytes},
      {"cpuSampler", p.cpu_sampler},
      {"traces", p.traces.size()},
      {"threads", p.threads.size()},
      {"measures", std::move(measures)},
      {"hasMonitorDump", !p.monitor_dump.empty()},
      {"heapDumpReady", is_socket_ ? dump_serial_ > 0 : p.heap_dumps > 0},
      // Which dump heap() opens now: the heap view redraws when this changes, not when
      // heapDumps (the parsed snapshot, updated at another moment) catches up with it.
      {"heapDumpSerial", is_socket_ ? dump_serial_ : (p.heap_dumps > 0 ? 1 : 0)},
      {"startedAt",
       std::chrono::duration_cast<std::chrono::milliseconds>(started_.time_since_epoch()).count()},
      // The connection's history: when it ended (0: not yet) and why.
      {"endedMs", ended_ms_},
      {"endCause", end_cause_},
      {"commands", std::move(commands)},
      {"indexing",
       {{"active", indexing_}, {"phase", indexing_phase_}, {"percent", indexing_percent_}}},
  };
}

nlohmann::json Session::command(const std::string& name, const nlohmann::json& args) {
  const CommandSpec* spec = nullptr;
  for (const auto& c : kCommands)
    if (c.name == name) spec = &c;
  if (spec == nullptr) throw std::invalid_argument("unknown command '" + name + "'");
  if (!is_socket_) throw std::runtime_error("a saved profile takes no commands");
  if (name == "exit" && !(args.contains("confirm") && args["confirm"] == true))
    throw std::invalid_argument("exit ends the JVM: it needs \"confirm\": true");
  std::string body;
  if (spec->tag == 0x03 || spec->tag == 0x07) {
    put_u2(body, 0);
    put_cutoff(body, 0.0f);
  } else if (spec->tag == 0x08) {
    put_u2(body, static_cast<uint16_t>(spec->control));
    if (spec->control == 3 || spec->control == 4) {
      const uint32_t all_threads = 0;  // read in host order by the agent; 0 means every thread
      body.append(reinterpret_cast<const char*>(&all_threads), 4);
    } else if (spec->control == 7) {
      if (!args.contains("depth") || !args["depth"].is_number_integer() ||
          args["depth"].get<int64_t>() < 0 || args["depth"].get<int64_t>() > 65535)
        throw std::invalid_argument("depth needs \"depth\": an integer 0..65535");
      put_u2(body, static_cast<uint16_t>(args["depth"].get<int64_t>()));
    }
  }
  Command c;
  c.name = name;
  c.answer = std::string(spec->answer);
  {
    std::lock_guard lock(mu_);
    if (state_ != "connected" && state_ != "error")
      throw std::runtime_error("the JVM's stream has ended");
    const auto& settings = snapshot_->agent_settings;
    if (spec->tag == 0x09) {
      // Not in JDK 8's protocol, where an unknown command ended the VM: sent only to an agent
      // that announced it.
      auto offered = settings.find("commands");
      if (offered == settings.end() || offered->second.find("monitor-dump") == std::string::npos)
        throw std::runtime_error(
            "this agent does not offer monitor-dump (HPROF of this project with monitor=y and "
            "format=a announces it)");
    }
    // An agent that reports its settings does so after each CONTROL command: that report is the
    // answer, and the UI shows the settings from it.
    if (spec->tag == 0x08 && snapshot_->settings_reports > 0) c.answer = "SETTINGS";
    if (name == "reset-sites")
      c.detail =
          "allocated counts restart from the objects live now; live counts stay (those objects "
          "are still in the heap)";
    c.serial = next_serial_++;
    c.count_before = answer_count(*snapshot_, c.answer);
  }
  if (args.contains("auto") && args["auto"] == true && c.detail.empty())
    c.detail = "the view's automatic refresh";
  if (name == "heap-summary" && !profile()->binary) {
    c.answer.clear();  // format=a has no HEAP SUMMARY record: HPROF writes nothing
    c.detail = "format=a has no heap summary record; HPROF sends nothing back";
  }
  std::string frame(1, static_cast<char>(spec->tag));
  put_u4(frame, static_cast<uint32_t>(c.serial));
  put_u4(frame, static_cast<uint32_t>(body.size()));
  frame += body;
  bool sent = true;
  std::string send_error;
  {
    std::lock_guard wlock(write_mu_);
    size_t off = 0;
    while (off < frame.size()) {
      const ssize_t n = ::send(fd_, frame.data() + off, frame.size() - off, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        sent = false;
        send_error = std::strerror(errno);
        break;
      }
      off += static_cast<size_t>(n);
    }
  }
  c.sent = Clock::now();
  c.state = !sent ? "failed" : c.answer.empty() ? "sent" : "waiting";
  if (!sent) c.detail = "cannot send: " + send_error;
  std::lock_guard lock(mu_);
  commands_.push_back(c);
  if (commands_.size() > 200) commands_.erase(commands_.begin());
  check_commands(*snapshot_);
  return command_json(commands_.back());
}

}  // namespace jvmprof
