// SPDX-License-Identifier: Apache-2.0
// jvmprof serve: receives HPROF agents' net= streams, opens saved profiles, and serves the web UI.
#include "serve_command.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "history_recorder.h"
#include "jvm_identity.h"
#include "session_auth.h"
#include "session_registry.h"
#include "spool_dir.h"
#include "web_server.h"

namespace jvmprof {
namespace {

void usage(std::FILE* out) {
  std::fprintf(
      out,
      "usage: jvmprof serve [--port P] [--ui-port U] [--bind ADDR] [--ui-bind ADDR]\n"
      "                     [--allow-host NAME]... [--tls-cert FILE --tls-key FILE]\n"
      "                     [--agent-token FILE] [--command-timeout SECONDS]\n"
      "                     [--max-record MIB] [--max-profiles N]\n"
      "                     [--store PATH|URI|default [--retention DURATION]] [FILES...]\n\n"
      "Receives the profiles of JVMs started with -agentlib:hprof=...,net=HOST:P (format=a\n"
      "or format=b, several at once), opens saved java.hprof.txt / java.hprof files, and\n"
      "serves a web UI with flame graphs and HPROF's interactive commands.\n\n"
      "  --port P             the port agents connect to (default 7370; 0: any free port)\n"
      "  --ui-port U          the web UI's port (default 7371; 0: any free port)\n"
      "  --bind ADDR          the address agents connect to (default 127.0.0.1, loopback\n"
      "                       only; any other needs --tls-cert and --tls-key)\n"
      "  --ui-bind ADDR       the web UI's address (default 127.0.0.1, whatever --bind says;\n"
      "                       any other needs --tls-cert and --tls-key: the UI is then HTTPS)\n"
      "  --tls-cert FILE      the agent port's TLS certificate (PEM, with its chain) and\n"
      "  --tls-key FILE       its private key (agents: nettls=<CA file>); the UI serves\n"
      "                       HTTPS with them on a --ui-bind beyond loopback\n"
      "  --agent-token FILE   agents must send this file's token first (nettoken=FILE);\n"
      "                       others are dropped before anything they send is read\n"
      "  --allow-host NAME    another Host name the UI answers to (e.g. behind a tunnel)\n"
      "  --command-timeout S  how long a command waits for its answer (default 30)\n"
      "  --max-record MIB     largest binary record accepted from an agent (default 256)\n"
      "  --max-profiles N     most profiles (connections and files, ended ones included)\n"
      "                       kept at once; later agents are refused (default 256)\n"
      "  --store S            keep every JVM's periods in a profile store: a SQLite file,\n"
      "                       'default' ($XDG_DATA_HOME/jvmprof/profiles.db) or a\n"
      "                       postgresql:// URI shared with other collectors (jvmprof query\n"
      "                       reads it; see docs/profile-store.md)\n"
      "  --retention D        delete stored periods older than D (e.g. 14d; default: keep);\n"
      "                       older than a day become 1-minute buckets, than a week 1-hour\n\n"
      "The UI's URL carries a random token printed at start; requests without it are "
      "refused.\n");
}

std::string random_token() {
  std::random_device rd;  // the kernel's random source
  std::string t;
  static const char hex[] = "0123456789abcdef";
  for (int i = 0; i < 32; ++i) t.push_back(hex[rd() % 16]);
  return t;
}

// 127.0.0.0/8: reachable from this host only. False for anything else, 0.0.0.0 included.
bool is_loopback(const std::string& ipv4) {
  in_addr a{};
  return ::inet_pton(AF_INET, ipv4.c_str(), &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

// How a browser or an agent on this host reaches ADDR:PORT (0.0.0.0 through loopback).
std::string reachable_at(const std::string& bind, int port) {
  return (bind == "0.0.0.0" ? std::string("127.0.0.1") : bind) + ":" + std::to_string(port);
}

int listen_socket(const std::string& bind, int port, int& bound_port, std::string& error) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, bind.c_str(), &addr.sin_addr) != 1) {
    error = "--bind needs an IPv4 address (HPROF's net= connects over IPv4): " + bind;
    return -1;
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 16) != 0) {
    error = "cannot listen for agents on " + bind + ":" + std::to_string(port) + ": " +
            std::strerror(errno);
    ::close(fd);
    return -1;
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  bound_port = ntohs(addr.sin_port);
  return fd;
}

// Accepts agents until `stop`; each connection becomes a session.
// The store keeps a JVM by what identifies it across connections, not by the connection.
store::JvmIdentity stored_identity(const JvmIdentity& jvm) {
  store::JvmIdentity s;
  s.host = jvm.pid != 0 ? jvm.host : jvm.address;
  s.pid = jvm.pid;
  s.main = jvm.main;
  s.jvm_version = jvm.vm;
  s.start_ms = jvm.start_ms;
  s.labels = jvm.labels;
  return s;
}

void accept_agents(int listen_fd, AgentGate& gate, std::atomic<bool>& stop) {
  while (!stop) {
    pollfd pfd{listen_fd, POLLIN, 0};
    if (::poll(&pfd, 1, 200) <= 0) continue;
    sockaddr_in peer{};
    socklen_t len = sizeof peer;
    const int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_CLOEXEC);
    if (fd < 0) continue;
    char ip[INET_ADDRSTRLEN] = "?";
    ::inet_ntop(AF_INET, &peer.sin_addr, ip, sizeof ip);
    gate.admit(fd, std::string("JVM at ") + ip + ":" + std::to_string(ntohs(peer.sin_port)));
  }
}

bool parse_int(const char* s, long lo, long hi, long& out) {
  char* end = nullptr;
  errno = 0;
  out = std::strtol(s, &end, 10);
  return errno == 0 && end != s && *end == '\0' && out >= lo && out <= hi;
}

}  // namespace

int run_serve(std::span<char* const> args) {
  long port = 7370, ui_port = 7371, timeout_s = 30, max_record_mib = 256, max_profiles = 256;
  WebOptions web;
  std::vector<std::string> files;
  std::string store_location;
  store::RetentionPolicy retention;
  AgentAuthOptions auth;
  std::string agent_bind = "127.0.0.1";
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string a = args[i];
    const bool has_value = i + 1 < args.size();
    auto bad = [&](const char* what) {
      std::fprintf(stderr, "jvmprof serve: %s needs %s (see --help)\n", a.c_str(), what);
      return 2;
    };
    if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    } else if (a == "--port") {
      if (!has_value || !parse_int(args[++i], 0, 65535, port)) return bad("a port 0..65535");
    } else if (a == "--ui-port") {
      if (!has_value || !parse_int(args[++i], 0, 65535, ui_port)) return bad("a port 0..65535");
    } else if (a == "--command-timeout") {
      if (!has_value || !parse_int(args[++i], 1, 3600, timeout_s)) return bad("1..3600 seconds");
    } else if (a == "--max-record") {
      if (!has_value || !parse_int(args[++i], 1, 4096, max_record_mib)) return bad("1..4096 MiB");
    } else if (a == "--max-profiles") {
      // Each connected JVM is a reader thread and its profile (docs/jvmprof-serve.md, "Many
      // JVMs at once"): the limit is the memory the host can give.
      if (!has_value || !parse_int(args[++i], 1, 100000, max_profiles)) return bad("1..100000");
    } else if (a == "--bind") {
      if (!has_value) return bad("an address");
      agent_bind = args[++i];
    } else if (a == "--ui-bind") {
      in_addr ui_addr{};
      if (!has_value || ::inet_pton(AF_INET, args[++i], &ui_addr) != 1)
        return bad("an IPv4 address");
      web.bind = args[i];
    } else if (a == "--allow-host") {
      if (!has_value) return bad("a host name");
      web.extra_hosts.push_back(args[++i]);
    } else if (a == "--tls-cert" || a == "--tls-key" || a == "--agent-token") {
      if (!has_value) return bad("a file");
      (a == "--tls-cert"  ? auth.cert_file
       : a == "--tls-key" ? auth.key_file
                          : auth.token_file) = args[++i];
    } else if (a == "--store") {
      if (!has_value) return bad("a SQLite file, 'default' or a postgresql:// URI");
      store_location = args[++i];
    } else if (a == "--retention") {
      const auto d = has_value ? store::parse_duration(args[++i]) : std::nullopt;
      if (!d || *d <= 0) return bad("a duration such as 14d or 12h");
      retention.retention_ms = *d;
    } else if (a.size() > 1 && a[0] == '-') {
      std::fprintf(stderr, "jvmprof serve: unknown option '%s' (see --help)\n", a.c_str());
      return 2;
    } else {
      files.push_back(a);
    }
  }
  if (retention.retention_ms > 0 && store_location.empty()) {
    std::fprintf(stderr, "jvmprof serve: --retention needs --store\n");
    return 2;
  }
  if (auth.cert_file.empty() != auth.key_file.empty()) {
    std::fprintf(stderr, "jvmprof serve: --tls-cert and --tls-key go together\n");
    return 2;
  }
  // Agents take commands (exit, heap dump) from this port: beyond loopback only over TLS.
  // (An address that is not IPv4 is refused with its own line when the port is opened.)
  in_addr bind_addr{};
  if (::inet_pton(AF_INET, agent_bind.c_str(), &bind_addr) == 1 && !is_loopback(agent_bind) &&
      auth.cert_file.empty()) {
    std::fprintf(stderr,
                 "jvmprof serve: --bind %s is not a loopback address: agents must connect over "
                 "TLS (--tls-cert FILE --tls-key FILE; see docs/jvmprof-serve.md)\n",
                 agent_bind.c_str());
    return 2;
  }
  // The UI's URL carries its token and the UI sends commands to every JVM: beyond loopback only
  // over HTTPS, with the agent port's certificate.
  if (!is_loopback(web.bind)) {
    if (auth.cert_file.empty()) {
      std::fprintf(stderr,
                   "jvmprof serve: --ui-bind %s is not a loopback address: the web UI must speak "
                   "HTTPS (--tls-cert FILE --tls-key FILE; see docs/jvmprof-serve.md)\n",
                   web.bind.c_str());
      return 2;
    }
    web.tls_cert_file = auth.cert_file;
    web.tls_key_file = auth.key_file;
  }
  // Block the stop signals in every thread; one thread waits for them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  // A browser that goes away mid-answer makes the web server's next write fail with EPIPE
  // rather than end serve (Debian's cpp-httplib sends without MSG_NOSIGNAL, and under HTTPS
  // OpenSSL writes with write()). serve starts no other program that would inherit this.
  ::signal(SIGPIPE, SIG_IGN);

  // The profile history, opened before anything listens (and after the signals are blocked: its
  // threads must not take SIGTERM): a store that cannot be used is one error line and no serve.
  std::unique_ptr<HistoryRecorder> history;
  if (!store_location.empty()) {
    try {
      if (store_location == "default") store_location = store::default_store_path();
      history = std::make_unique<HistoryRecorder>(store::open_store(store_location), retention);
      std::printf("jvmprof serve: profile history: %s\n", history->store().describe().c_str());
    } catch (const store::StoreError& e) {
      std::fprintf(stderr, "jvmprof serve: %s\n", e.what());
      return 1;
    }
  }

  SessionLimits limits;
  limits.command_timeout = std::chrono::seconds(timeout_s);
  limits.max_record = static_cast<size_t>(max_record_mib) << 20;
  // Live format=b streams are spooled here so their heap dumps can be indexed.
  // In $TMPDIR when set (a caller that kills serve outright can then remove what it left).
  const char* tmpdir = std::getenv("TMPDIR");
  const std::string spool_parent = tmpdir && *tmpdir ? tmpdir : "/tmp";
  // A serve killed before it could clean up left its spool behind: removed now.
  if (const int stale = remove_stale_spool_dirs(spool_parent); stale > 0)
    std::fprintf(stderr,
                 "jvmprof serve: removed %d spool director%s left by a jvmprof serve that did "
                 "not stop cleanly\n",
                 stale, stale == 1 ? "y" : "ies");
  limits.spool_dir = make_spool_dir(spool_parent);
  SessionRegistry registry(limits, static_cast<size_t>(max_profiles));
  // Every period= period a JVM sends goes into the profile history, under the JVM's identity.
  if (history) {
    registry.set_period_hook([&history](const JvmIdentity& jvm, int64_t start_ms, int64_t end_ms,
                                        const profiles::JavaProfile& delta) {
      history->record(stored_identity(jvm), start_ms, end_ms, delta);
    });
    // And each connection's beginning and end (the JVM's connection history).
    registry.set_connection_hook([&history](const JvmIdentity& jvm, const ConnectionRecord& c) {
      history->record_connection(stored_identity(jvm), c);
    });
  }
  for (const auto& f : files) {
    const int fd = ::open(f.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      std::fprintf(stderr, "jvmprof serve: cannot open %s: %s\n", f.c_str(),
                   fd < 0 ? std::strerror(errno) : "not a regular file");
      if (fd >= 0) ::close(fd);
      return 1;
    }
    registry.add(f, fd, false, static_cast<uint64_t>(st.st_size));
  }
  std::string error;
  std::atomic<bool> stop{false};
  AgentGate gate(registry, stop);
  if (!gate.init(auth, error)) {
    std::fprintf(stderr, "jvmprof serve: %s\n", error.c_str());
    return 1;
  }
  int agent_port = 0;
  const int listen_fd = listen_socket(agent_bind, static_cast<int>(port), agent_port, error);
  if (listen_fd < 0) {
    std::fprintf(stderr, "jvmprof serve: %s\n", error.c_str());
    return 1;
  }
  web.port = static_cast<int>(ui_port);
  web.agent_address = reachable_at(agent_bind, agent_port);
  web.token = random_token();
  web.history = history ? &history->store() : nullptr;
  web.agent_counters = [&gate] {
    nlohmann::json c = gate.counters().to_json();
    c["tls"] = gate.tls();
    c["token"] = gate.token();
    return c;
  };
  WebServer server(registry, web);
  const int bound_ui = server.bind(error);
  if (bound_ui < 0) {
    std::fprintf(stderr, "jvmprof serve: %s\n", error.c_str());
    ::close(listen_fd);
    return 1;
  }
  if (!is_loopback(agent_bind) && !gate.token())
    std::fprintf(stderr,
                 "jvmprof serve: warning: listening on %s without --agent-token: anyone who can "
                 "reach the agent port can send a profile\n",
                 agent_bind.c_str());
  std::printf("jvmprof serve: agents: -agentlib:hprof=cpu=samples,heap=sites,net=%s%s%s\n",
              web.agent_address.c_str(), gate.tls() ? ",nettls=<CA file>" : "",
              gate.token() ? ",nettoken=<file>" : "");
  std::printf("jvmprof serve: UI: %s://%s/?token=%s\n", server.scheme(),
              reachable_at(web.bind, bound_ui).c_str(), web.token.c_str());
  std::fflush(stdout);

  std::atomic<bool> server_ended{false};
  std::thread acceptor(accept_agents, listen_fd, std::ref(gate), std::ref(stop));
  std::thread signals([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    stop = true;
    // A signal that comes before the web server has started listening would find nothing to
    // stop (and a second one is never waited for): stop it until it has ended.
    while (!server_ended) {
      server.stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  server.run();
  server_ended = true;
  stop = true;
  acceptor.join();
  // The signal thread waits for a signal; if the server ended by itself, send it one.
  pthread_kill(signals.native_handle(), SIGTERM);
  signals.join();
  ::close(listen_fd);
  gate.wait_for_checks();
  registry.stop_all();
  gate.join_all();
  if (gate.tls() || gate.token()) {
    const auto c = gate.counters();
    std::printf(
        "jvmprof serve: agents: %llu admitted, %llu refused without TLS, %llu without the "
        "token, %llu while busy\n",
        static_cast<unsigned long long>(c.admitted), static_cast<unsigned long long>(c.refused_tls),
        static_cast<unsigned long long>(c.refused_token),
        static_cast<unsigned long long>(c.refused_busy));
  }
  registry.clear();  // removes the spool files
  remove_spool_dir(limits.spool_dir);
  if (history) {
    history->store().flush();
    const auto st = history->stats();
    history.reset();
    std::printf("jvmprof serve: profile history: %llu periods stored, %llu dropped\n",
                static_cast<unsigned long long>(st.committed),
                static_cast<unsigned long long>(st.dropped));
  }
  std::printf("jvmprof serve: stopped\n");
  return 0;
}

}  // namespace jvmprof
