// SPDX-License-Identifier: Apache-2.0
// `jvmprof record PID -d SECONDS -o FILE [HPROF-OPTIONS]`: attach HPROF with net= to a loopback
// port this command listens on, read its stream while the time runs, stop it (final report,
// detach) and write FILE in the format its name asks for. Ctrl-C stops early; a JVM that exits
// meanwhile leaves what its agent sent (HPROF writes its report when the VM dies).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "attach.h"
#include "attach_commands.h"
#include "attach_support.h"
#include "convert_command.h"
#include "profiles.h"

namespace jvmprof {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

volatile std::sig_atomic_t interrupted = 0;
void on_interrupt(int) {
  interrupted = 1;
}

void usage(std::FILE* out) {
  std::fprintf(
      out,
      "usage: jvmprof record PID -d SECONDS -o FILE [HPROF-OPTIONS] [--agent LIB]\n"
      "                      [--timeout SECONDS]\n\n"
      "Attaches HPROF to the running JVM PID, profiles for SECONDS, stops it (the program\n"
      "runs on unprofiled) and writes FILE in the format its name asks for:\n"
      "  .txt        HPROF's text report      .collapsed  folded stacks (first measure)\n"
      "  .html       flame-graph page         .pb.gz      pprof\n"
      "  .json       speedscope\n"
      "HPROF-OPTIONS is HPROF's option string without file=/net= (default cpu=samples).\n"
      "Ctrl-C stops early and still writes FILE; so does the JVM exiting.\n\n"
      "  --agent LIB        another agent library that speaks HPROF's net= stream\n"
      "  --timeout SECONDS  how long the JVM may take to start its attach listener and the\n"
      "                     agent to connect and to finish its report (default 10)\n");
}

enum class Output { kText, kHtml, kCollapsed, kPprofGz, kSpeedscope };

std::optional<Output> output_of(const std::string& path) {
  auto ends = [&](const char* suffix) { return path.ends_with(suffix); };
  if (ends(".txt")) return Output::kText;
  if (ends(".html")) return Output::kHtml;
  if (ends(".collapsed")) return Output::kCollapsed;
  if (ends(".pb.gz")) return Output::kPprofGz;
  if (ends(".json")) return Output::kSpeedscope;
  return std::nullopt;
}

// A loopback listener on a port the kernel picks.
int listen_loopback(uint16_t& port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd, 4) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return -1;
  }
  port = ntohs(addr.sin_port);
  return fd;
}

// The agent's connection and what has come through it.
class Recording {
 public:
  explicit Recording(std::string source) : reader_(std::move(source)) {}
  // Reads what is there, waiting at most `wait`; false once the agent has closed the stream.
  bool pump(int fd, milliseconds wait) {
    if (closed_) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(wait.count()));
    if (ready <= 0) return true;  // nothing yet, or a signal: the caller looks at its flags
    char buf[1 << 16];
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) return true;
    if (n <= 0) {
      closed_ = true;
      return false;
    }
    const std::string_view bytes(buf, static_cast<size_t>(n));
    raw_.append(bytes);
    if (!parse_error_.empty()) return true;
    try {
      reader_.feed(bytes);
    } catch (const profiles::ProfileError& e) {
      parse_error_ = e.what();
    }
    return true;
  }
  void finish() {
    if (!parse_error_.empty()) return;
    try {
      reader_.finish();
    } catch (const profiles::ProfileError& e) {
      parse_error_ = e.what();
    }
  }
  bool closed() const { return closed_; }
  const std::string& raw() const { return raw_; }
  const profiles::JavaProfile& profile() const { return reader_.profile(); }
  bool binary() const { return reader_.binary(); }
  const std::string& parse_error() const { return parse_error_; }

 private:
  profiles::StreamReader reader_;
  std::string raw_;  // the stream as sent (HPROF's text report for .txt)
  std::string parse_error_;
  bool closed_ = false;
};

void progress(bool tty, pid_t pid, double elapsed, double duration, size_t bytes) {
  if (!tty) return;
  std::fprintf(stderr, "\rrecording JVM %d: %3.0f of %.0f s, %zu KiB received ",
               static_cast<int>(pid), elapsed, duration, bytes / 1024);
  std::fflush(stderr);
}

struct Settings {
  pid_t pid = 0;
  double duration = 0;
  std::string out;
  std::string options = "cpu=samples";
  std::string agent;
  double timeout_s = 10;
};

// Writes FILE from the recording; prints one line and returns false when it cannot.
bool write_file(const Settings& s, const Recording& rec, Output kind, const std::string& main) {
  std::string bytes;
  const profiles::JavaProfile& profile = rec.profile();
  if (kind == Output::kText) {
    if (rec.binary()) {
      std::fprintf(stderr, "jvmprof record: the agent sent format=b; .txt needs format=a\n");
      return false;
    }
    bytes = rec.raw();
  } else {
    const auto measures = profiles::available_measures(profile);
    if (measures.empty()) {
      std::fprintf(stderr,
                   "jvmprof record: the agent sent no CPU, SITES or MONITOR TIME report "
                   "(%zu bytes received); %s not written\n",
                   rec.raw().size(), s.out.c_str());
      return false;
    }
    switch (kind) {
      case Output::kCollapsed:
        bytes = profiles::to_collapsed(profiles::stacks(profile, measures[0]));
        break;
      case Output::kPprofGz:
        bytes = profiles::to_pprof(profile, measures);  // gzipped as it is written
        break;
      case Output::kSpeedscope:
        bytes = profiles::to_speedscope(profile, measures);
        break;
      default: {
        profiles::HtmlOptions html;
        html.context.emplace_back("program", main.empty()
                                                 ? "pid " + std::to_string(s.pid)
                                                 : main + " (pid " + std::to_string(s.pid) + ")");
        html.context.emplace_back("HPROF options", s.options);
        bytes = profiles::to_html(profile, measures, "jvmprof record: " + main, html);
      }
    }
  }
  if (!write_output(s.out, bytes, kind == Output::kPprofGz)) {
    std::fprintf(stderr, "jvmprof record: cannot write %s: %s\n", s.out.c_str(),
                 std::strerror(errno));
    return false;
  }
  return true;
}

std::optional<Settings> parse(std::span<char* const> args, bool& help) {
  Settings s;
  std::vector<std::string> positional;
  bool have_duration = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string a = args[i];
    const bool has_value = i + 1 < args.size();
    if (a == "--help" || a == "-h") {
      help = true;
      return std::nullopt;
    } else if ((a == "-d" || a == "--duration" || a == "--timeout") && has_value) {
      const auto v = parse_seconds(args[++i]);
      if (!v) {
        std::fprintf(stderr, "jvmprof record: %s takes seconds, not '%s'\n", a.c_str(), args[i]);
        return std::nullopt;
      }
      (a == "--timeout" ? s.timeout_s : s.duration) = *v;
      have_duration |= a != "--timeout";
    } else if ((a == "-o" || a == "--output") && has_value) {
      s.out = args[++i];
    } else if (a == "--agent" && has_value) {
      s.agent = args[++i];
    } else if (a.starts_with("-")) {
      std::fprintf(stderr, "jvmprof record: unknown or incomplete option '%s' (see --help)\n",
                   a.c_str());
      return std::nullopt;
    } else {
      positional.push_back(a);
    }
  }
  if (positional.empty() || positional.size() > 2 || !have_duration || s.out.empty()) {
    std::fprintf(stderr, "jvmprof record: expected PID -d SECONDS -o FILE (see --help)\n");
    return std::nullopt;
  }
  const auto pid = parse_pid("record", positional[0]);
  if (!pid) return std::nullopt;
  s.pid = *pid;
  if (positional.size() == 2) s.options = positional[1];
  for (const char* taken : {"file=", "net="}) {
    if (s.options.starts_with(taken) ||
        s.options.find(std::string(",") + taken) != std::string::npos) {
      std::fprintf(stderr, "jvmprof record: HPROF-OPTIONS must not set %s (record sets net=)\n",
                   taken);
      return std::nullopt;
    }
  }
  if (s.agent.empty()) s.agent = default_agent_library();
  return s;
}

}  // namespace

int run_record(std::span<char* const> args) {
  bool help = false;
  const auto parsed = parse(args, help);
  if (help) {
    usage(stdout);
    return 0;
  }
  if (!parsed) return 2;
  const Settings& s = *parsed;
  const auto kind = output_of(s.out);
  if (!kind) {
    std::fprintf(stderr,
                 "jvmprof record: %s: the name must end in .txt, .html, .collapsed, .pb.gz or "
                 ".json\n",
                 s.out.c_str());
    return 2;
  }
  // Found out now, not after the recording: a FILE that cannot be written.
  {
    const size_t slash = s.out.find_last_of('/');
    const std::string dir = slash == std::string::npos ? "." : s.out.substr(0, slash + 1);
    if (access(dir.c_str(), W_OK) != 0) {
      std::fprintf(stderr, "jvmprof record: cannot write into %s: %s\n", dir.c_str(),
                   std::strerror(errno));
      return 1;
    }
  }
  attach::Timeouts timeouts;
  timeouts.attach = milliseconds(static_cast<long long>(s.timeout_s * 1000));
  timeouts.reply = milliseconds(static_cast<long long>(s.timeout_s * 1000 + 60000));
  attach::Target target;
  std::string library;
  try {
    target = attach::find_target(s.pid);
    library = agent_path_for(target, s.agent);
  } catch (const attach::AttachError& e) {
    std::fprintf(stderr, "jvmprof record: %s\n", e.what());
    return 1;
  }
  uint16_t port = 0;
  const int listener = listen_loopback(port);
  if (listener < 0) {
    std::fprintf(stderr, "jvmprof record: cannot listen on 127.0.0.1: %s\n", std::strerror(errno));
    return 1;
  }
  struct CloseFds {
    int listener, conn = -1;
    ~CloseFds() {
      if (conn >= 0) close(conn);
      close(listener);
    }
  } fds{listener};
  // A closed stderr must not kill record between attach and stop: the agent would stay attached.
  std::signal(SIGPIPE, SIG_IGN);
  // Ctrl-C and SIGTERM end the wait, not the program; restored when record returns.
  struct sigaction on_signal {
  }, old_int{}, old_term{};
  on_signal.sa_handler = on_interrupt;
  sigemptyset(&on_signal.sa_mask);
  sigaction(SIGINT, &on_signal, &old_int);
  sigaction(SIGTERM, &on_signal, &old_term);
  struct RestoreSignals {
    struct sigaction& i;
    struct sigaction& t;
    ~RestoreSignals() {
      sigaction(SIGINT, &i, nullptr);
      sigaction(SIGTERM, &t, nullptr);
    }
  } restore{old_int, old_term};

  const std::string options = s.options + ",net=127.0.0.1:" + std::to_string(port);
  try {
    const int result = attach::load_agent(target, library, options, timeouts);
    if (result != 0) {
      std::fprintf(stderr,
                   "jvmprof record: the agent refused the options '%s' (Agent_OnAttach returned "
                   "%d; the JVM's output says why)\n",
                   s.options.c_str(), result);
      return 1;
    }
  } catch (const attach::AttachError& e) {
    std::fprintf(stderr, "jvmprof record: %s\n", e.what());
    return 1;
  }
  const auto described = attach::local_jvm(s.pid);
  const std::string main = described ? described->main : std::string();
  // The agent connects while it starts; one that has not connected within the timeout is gone.
  const auto connect_deadline = Clock::now() + timeouts.attach;
  while (fds.conn < 0) {
    pollfd p{listener, POLLIN, 0};
    if (poll(&p, 1, 200) > 0) fds.conn = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fds.conn >= 0) break;
    if (!attach::jvm_alive(s.pid) || Clock::now() > connect_deadline || interrupted) {
      const bool alive = attach::jvm_alive(s.pid);
      std::fprintf(stderr,
                   "jvmprof record: the agent in JVM %d did not connect to 127.0.0.1:%u%s\n",
                   static_cast<int>(s.pid), port, alive ? "" : " (the JVM exited)");
      // Leave no agent attached behind: it may yet run without anyone reading it.
      if (alive) {
        try {
          attach::load_agent(target, library, "stop", timeouts);
        } catch (const attach::AttachError&) {
          // Nothing more to do: the line above has said what went wrong.
        }
      }
      return 1;
    }
  }
  std::fprintf(stderr, "jvmprof record: profiling JVM %d%s for %.0f s (%s); Ctrl-C stops early\n",
               static_cast<int>(s.pid), main.empty() ? "" : (" (" + main + ")").c_str(), s.duration,
               s.options.c_str());
  Recording rec("JVM " + std::to_string(s.pid));
  const bool tty = isatty(STDERR_FILENO);
  const auto start = Clock::now();
  const auto end = start + milliseconds(static_cast<long long>(s.duration * 1000));
  while (!interrupted && Clock::now() < end && rec.pump(fds.conn, milliseconds(250))) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    progress(tty, s.pid, elapsed, s.duration, rec.raw().size());
  }
  if (tty) std::fputc('\n', stderr);
  bool jvm_exited = false;
  if (!rec.closed()) {
    // The agent writes its final report while it handles `stop`, before the attach command
    // returns: the stream is read meanwhile, or a report larger than the socket's buffers would
    // block the agent and the reply with it.
    std::atomic<bool> stopped{false};
    std::string stop_error;
    int stop_result = 0;
    std::thread stopper([&] {
      attach::Timeouts stop_timeouts = timeouts;
      stop_timeouts.reply = milliseconds(0);  // as long as the JVM lives: reports take their time
      try {
        stop_result = attach::load_agent(target, library, "stop", stop_timeouts);
      } catch (const attach::AttachError& e) {
        stop_error = e.what();
      }
      stopped = true;
    });
    bool hung_up = false;
    while (!stopped) {
      if (rec.pump(fds.conn, milliseconds(100))) continue;
      // The agent ended its stream: the report is complete. Its command listener reads this
      // connection and the stop waits for that listener, which returns once this end closes;
      // kept open, the stop sat out the listener's 5 s limit and left the profile in memory.
      if (!hung_up) ::shutdown(fds.conn, SHUT_RDWR);
      hung_up = true;
      poll(nullptr, 0, 50);
    }
    stopper.join();
    if (!stop_error.empty()) {
      jvm_exited = !attach::jvm_alive(s.pid);
      if (!jvm_exited) std::fprintf(stderr, "jvmprof record: stop: %s\n", stop_error.c_str());
    } else if (stop_result != 0) {
      std::fprintf(stderr, "jvmprof record: the agent in JVM %d had no session to stop\n",
                   static_cast<int>(s.pid));
    }
    // The agent closes the stream when it has sent its report.
    const auto report_deadline = Clock::now() + timeouts.reply;
    while (rec.pump(fds.conn, milliseconds(250)) && Clock::now() < report_deadline) {
    }
  } else {
    // The agent ended the stream itself: HPROF does so when the VM dies. Give the process the
    // moment it takes to be gone before telling that apart from a detach.
    const auto gone_deadline = Clock::now() + std::chrono::seconds(5);
    while (attach::jvm_alive(s.pid) && Clock::now() < gone_deadline) poll(nullptr, 0, 50);
    jvm_exited = !attach::jvm_alive(s.pid);
  }
  rec.finish();
  if (!rec.parse_error().empty())
    std::fprintf(stderr, "jvmprof record: %s (the sections complete before it are kept)\n",
                 rec.parse_error().c_str());
  if (!write_file(s, rec, *kind, main)) return 1;
  if (jvm_exited) {
    std::fprintf(stderr,
                 "jvmprof record: JVM %d exited during the recording; %s holds what was "
                 "collected until then\n",
                 static_cast<int>(s.pid), s.out.c_str());
  } else if (interrupted) {
    std::fprintf(stderr, "jvmprof record: stopped early; wrote %s\n", s.out.c_str());
  } else {
    std::fprintf(stderr, "jvmprof record: wrote %s\n", s.out.c_str());
  }
  return 0;
}

}  // namespace jvmprof
