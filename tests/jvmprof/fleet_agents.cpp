// SPDX-License-Identifier: Apache-2.0
// A fleet of simulated HPROF agents: N TCP connections to one `jvmprof serve`, each sending what
// HPROF with net=,period= sends (HPROF's text format: header, IDENTITY, THREAD STARTs, TRACEs,
// then a PERIOD block every period), paced by the wall clock, each with an identity and content
// of its own so that a collector that mixes agents up can be caught:
//   agent i (0-based) has pid FIRST_PID+i, main class sim.Agent<i>, labels fleet=sim;agent=<i>,
//   frames sim.Agent<i>.*, and its period seq s has CPU SAMPLES total = SAMPLES + i + s.
// With --replay FILE each agent instead replays a stream a real HPROF agent sent (recorded byte
// for byte; fleet_recording.h): the recording's hello with the identity above (pid, host, main,
// labels, and start= the replay's clock; vm= and connection= as recorded), then the recording's
// periods in order, each with start= and end= on the replay's clock. It never makes up a period:
// when the recording has fewer than an agent is to send, that is an error.
// One thread and poll(): a connection that is not being read keeps its bytes queued here (the
// largest backlog is reported) and holds up no other. Standard input steers the end: a line
// (or, with --periods K, the K-th period of every agent) stops the periods; once everything is
// written it prints "SENT agents=N periods=P bytes=B max_backlog=M" and waits for standard input
// to end before it closes its connections, so a caller can look at the collector meanwhile.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "fleet_recording.h"

namespace {

struct Options {
  int port = 0;
  long agents = 0;
  long periods = 0;  // 0: until a line on standard input
  long period_ms = 10000;
  long samples = 1000;  // CPU samples per period (plus i + s, see above)
  long threads = 200;
  long traces = 200;  // distinct stacks per agent
  long depth = 12;
  long rows = 150;  // traces sampled per period
  long first_pid = 100000;
  std::string replay;  // a recorded stream to replay instead of the synthetic content
};

void usage(std::FILE* out) {
  std::fprintf(out,
               "usage: fleet_agents --port P --agents N [--periods K] [--period-ms MS]\n"
               "                    [--samples S] [--threads T] [--traces R] [--depth D]\n"
               "                    [--rows W] [--first-pid PID]\n"
               "       fleet_agents --replay FILE --port P --agents N [--periods K]\n"
               "                    [--period-ms MS] [--first-pid PID]\n\n"
               "N simulated HPROF agents (format=a, net=, period=) over TCP to 127.0.0.1:P.\n"
               "Each sends a period every MS ms (default 10000; agents staggered over it) with S\n"
               "CPU samples (default 1000) over W of its R traces (default 150 of 200, depth 12)\n"
               "and T threads (default 200). Stops after K periods each, or at a line on\n"
               "standard input; prints SENT ... and closes when standard input ends.\n"
               "With --replay, each agent sends FILE's recorded stream (HPROF format=a, net=,\n"
               "period=) under an identity of its own: the hello, then one recorded period per\n"
               "MS ms; a recording with fewer periods than K (or than sent before the line on\n"
               "standard input) is an error.\n");
}

bool parse_long(const char* s, long lo, long hi, long& out) {
  char* end = nullptr;
  errno = 0;
  out = std::strtol(s, &end, 10);
  return errno == 0 && end != s && *end == '\0' && out >= lo && out <= hi;
}

// A small deterministic generator: the same agent always sends the same stacks and rows.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::string hello(const Options& o, long i) {
  const std::string cls = "sim.Agent" + std::to_string(i);
  std::string s =
      "JAVA PROFILE 1.0.1, created Fri Nov 27 15:00:00 2026\n\nHeader text.\n--------\n\n";
  s += "IDENTITY: pid=" + std::to_string(o.first_pid + i) + " host=fleet-sim main=" + cls +
       " vm=17.0.9 start=1000 labels=fleet=sim;agent=" + std::to_string(i) + "\n";
  for (long t = 0; t < o.threads; ++t)
    s += "THREAD START (obj=" + std::to_string(50000000 + t) +
         ", id = " + std::to_string(200001 + t) + ", name=\"worker-" + std::to_string(t) +
         "\", group=\"main\")\n";
  for (long r = 0; r < o.traces; ++r) {
    s += "TRACE " + std::to_string(300001 + r) + ":\n";
    for (long d = 0; d < o.depth; ++d) {
      const uint64_t m = mix(static_cast<uint64_t>(r * 131 + d)) % 40;
      s += "\t" + cls + ".m" + std::to_string(d == 0 ? r % 40 : static_cast<long>(m)) + "(Agent" +
           std::to_string(i) + ".java:" + std::to_string(10 + d) + ")\n";
    }
  }
  return s;
}

std::string period(const Options& o, long i, long seq) {
  const long total = o.samples + i + seq;
  const long rows = std::min(o.rows, std::min(o.traces, total));
  const std::string start = std::to_string(1000 + (seq - 1) * o.period_ms);
  const std::string end = std::to_string(1000 + seq * o.period_ms);
  std::string s = "PERIOD BEGIN: seq=" + std::to_string(seq) + " start=" + start + " end=" + end +
                  "\nCPU SAMPLES: total=" + std::to_string(total) +
                  " rows=" + std::to_string(rows) + "\n";
  // `rows` distinct traces from a window that moves with seq; the counts add up to `total`.
  const long first = static_cast<long>(mix(static_cast<uint64_t>(i * 1000003 + seq)) %
                                       static_cast<uint64_t>(o.traces));
  for (long r = 0; r < rows; ++r) {
    const long count = total / rows + (r < total % rows ? 1 : 0);
    s += std::to_string(300001 + (first + r) % o.traces) + " " + std::to_string(count) + "\n";
  }
  s += "PERIOD END: seq=" + std::to_string(seq) + "\n";
  return s;
}

struct Agent {
  int fd = -1;
  std::string out;  // bytes not yet taken by the collector
  size_t sent_at = 0;
  long next_seq = 1;
  int64_t due_ms = 0;
  int64_t period_start_wall = 0;  // replay: where the next period starts (the last one's end)
};

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

// Writes what the collector takes now; false when the connection is gone.
bool flush(Agent& a, uint64_t& bytes) {
  while (a.sent_at < a.out.size()) {
    const ssize_t n =
        ::send(a.fd, a.out.data() + a.sent_at, a.out.size() - a.sent_at, MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) return false;
    a.sent_at += static_cast<size_t>(n);
    bytes += static_cast<uint64_t>(n);
  }
  if (a.sent_at == a.out.size()) {
    a.out.clear();
    a.sent_at = 0;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  bool synthetic_options = false;  // options that shape synthetic content, not a replay
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    }
    if (a == "--replay" && k + 1 < argc && argv[k + 1][0] != '\0') {
      o.replay = argv[++k];
      continue;
    }
    synthetic_options = synthetic_options || a == "--samples" || a == "--threads" ||
                        a == "--traces" || a == "--depth" || a == "--rows";
    long* target = a == "--agents"      ? &o.agents
                   : a == "--periods"   ? &o.periods
                   : a == "--period-ms" ? &o.period_ms
                   : a == "--samples"   ? &o.samples
                   : a == "--threads"   ? &o.threads
                   : a == "--traces"    ? &o.traces
                   : a == "--depth"     ? &o.depth
                   : a == "--rows"      ? &o.rows
                   : a == "--first-pid" ? &o.first_pid
                                        : nullptr;
    long port = 0;
    if (a == "--port" && k + 1 < argc && parse_long(argv[++k], 1, 65535, port)) {
      o.port = static_cast<int>(port);
      continue;
    }
    if (!target || k + 1 >= argc || !parse_long(argv[++k], 0, 100000000, *target)) {
      std::fprintf(stderr, "fleet_agents: bad or incomplete option '%s' (see --help)\n", a.c_str());
      return 2;
    }
  }
  if (o.port == 0 || o.agents < 1 || o.period_ms < 1 || o.traces < 1 || o.depth < 1 || o.rows < 1) {
    std::fprintf(stderr,
                 "fleet_agents: --port, --agents >= 1 and positive --period-ms, --traces, "
                 "--depth and --rows are needed (see --help)\n");
    return 2;
  }
  fleet::Recording recording;
  const bool replay = !o.replay.empty();
  if (replay) {
    std::string why;
    if (synthetic_options) {
      std::fprintf(stderr,
                   "fleet_agents: --samples, --threads, --traces, --depth and --rows shape "
                   "synthetic content; a replay sends the recording's\n");
      return 2;
    }
    if (!fleet::read_recording(o.replay, recording, why)) {
      std::fprintf(stderr, "fleet_agents: %s\n", why.c_str());
      return 2;
    }
    if (recording.periods.size() < static_cast<size_t>(std::max(o.periods, 1L))) {
      std::fprintf(stderr,
                   "fleet_agents: %s holds %zu complete PERIOD blocks, fewer than the %ld to "
                   "send; record a longer run\n",
                   o.replay.c_str(), recording.periods.size(), std::max(o.periods, 1L));
      return 2;
    }
  }

  std::vector<Agent> agents(static_cast<size_t>(o.agents));
  const int64_t t0 = now_ms();
  for (long i = 0; i < o.agents; ++i) {
    Agent& a = agents[static_cast<size_t>(i)];
    a.fd = connect_to(o.port);
    if (a.fd < 0) {
      std::fprintf(stderr, "fleet_agents: agent %ld cannot connect to 127.0.0.1:%d: %s\n", i,
                   o.port, std::strerror(errno));
      return 1;
    }
    if (replay) {
      a.period_start_wall = wall_ms();
      const std::string n = std::to_string(i);
      a.out = fleet::replay_hello(recording, {{"pid", std::to_string(o.first_pid + i)},
                                              {"host", "fleet-sim"},
                                              {"main", "sim.Agent" + n},
                                              {"start", std::to_string(a.period_start_wall)},
                                              {"labels", "fleet=sim;agent=" + n}});
    } else {
      a.out = hello(o, i);
    }
    // Staggered over one period, as JVMs started at different times are.
    a.due_ms = t0 + o.period_ms + o.period_ms * i / o.agents;
  }

  uint64_t bytes = 0, periods_sent = 0;
  size_t max_backlog = 0;
  bool stopping = false, input_ended = false;
  std::vector<pollfd> fds;
  for (;;) {
    const int64_t now = now_ms();
    int64_t next_due = now + 1000;
    bool pending = false;
    for (long i = 0; i < o.agents; ++i) {
      Agent& a = agents[static_cast<size_t>(i)];
      const bool done = o.periods > 0 && a.next_seq > o.periods;
      if (!stopping && !done && a.due_ms <= now) {
        if (!replay) {
          a.out += period(o, i, a.next_seq);
        } else if (static_cast<size_t>(a.next_seq) <= recording.periods.size()) {
          const int64_t end = wall_ms();
          a.out += fleet::replay_period(recording, static_cast<size_t>(a.next_seq - 1),
                                        a.period_start_wall, end);
          a.period_start_wall = end;
        } else {
          std::fprintf(stderr,
                       "fleet_agents: agent %ld: the recording's %zu periods ran out before the "
                       "line on standard input; record a longer run\n",
                       i, recording.periods.size());
          return 1;
        }
        ++a.next_seq;
        ++periods_sent;
        a.due_ms += o.period_ms;
      }
      if (!stopping && !done) next_due = std::min(next_due, a.due_ms);
      if (!flush(a, bytes)) {
        std::fprintf(stderr, "fleet_agents: agent %ld: the collector closed the connection\n", i);
        return 1;
      }
      max_backlog = std::max(max_backlog, a.out.size() - a.sent_at);
      pending = pending || !a.out.empty();
    }
    if (!stopping && o.periods > 0 &&
        std::all_of(agents.begin(), agents.end(),
                    [&](const Agent& a) { return a.next_seq > o.periods; }))
      stopping = true;
    if (stopping && !pending) break;

    fds.clear();
    if (!input_ended) fds.push_back({STDIN_FILENO, POLLIN, 0});
    for (const Agent& a : agents)
      if (!a.out.empty()) fds.push_back({a.fd, POLLOUT, 0});
    const int wait = stopping ? 1000 : static_cast<int>(std::max<int64_t>(0, next_due - now));
    if (::poll(fds.data(), fds.size(), wait) < 0 && errno != EINTR) return 1;
    if (!input_ended && !fds.empty() && fds[0].fd == STDIN_FILENO && fds[0].revents) {
      char buf[256];
      const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
      if (n <= 0) input_ended = true;
      stopping = true;
    }
  }
  std::printf("SENT agents=%ld periods=%llu bytes=%llu max_backlog=%zu\n", o.agents,
              static_cast<unsigned long long>(periods_sent), static_cast<unsigned long long>(bytes),
              max_backlog);
  std::fflush(stdout);
  // Connected until the caller has looked.
  char buf[256];
  while (!input_ended && ::read(STDIN_FILENO, buf, sizeof buf) > 0) {
  }
  for (Agent& a : agents) ::close(a.fd);
  return 0;
}
