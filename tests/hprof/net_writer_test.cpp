// SPDX-License-Identifier: Apache-2.0
// HPROF's net= writer with format=b, without a JVM: a Java thread's event (a class load, a thread
// start) never waits for a report that holds the binary report's lock while it waits for room in
// the queue of a front end that reads nothing. The handshake is the writer's own state: the test
// acts once a report is known to be waiting (Output::waiting_writers), and checks that the event
// returned while that report was still waiting; then the front end reads, and the stream shows
// the deferred class load after the report, whole and readable. The same over TLS with a token:
// a TLS connection that takes nothing fills up and the report waits as on TCP, never the events.
// And with period=, while no collector listens: events kept up to netqueue=, sent after the hello.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <span>
#include <string>
#include <thread>
#include <type_traits>

#include "binary_report.h"
#include "hprof_format.h"
#include "output.h"

namespace hprof::agent {
namespace {

using namespace std::chrono_literals;

// A loopback listener whose connection is not read until the test says so.
class StalledPeer {
 public:
  explicit StalledPeer(int port = 0) {
    listen_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    ::setsockopt(listen_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port));
    socklen_t len = sizeof a;
    if (::bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(listen_, 1) != 0 ||
        ::getsockname(listen_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      throw std::runtime_error("cannot listen on loopback");
    port_ = ntohs(a.sin_port);
  }
  ~StalledPeer() {
    if (conn_ >= 0) ::close(conn_);
    ::close(listen_);
  }
  int port() const { return port_; }
  void accept() { conn_ = ::accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC); }
  int conn() const { return conn_; }
  // Reads until the writer closes.
  std::string read_all() {
    std::string data;
    char buffer[1 << 16];
    for (ssize_t n; (n = ::read(conn_, buffer, sizeof buffer)) > 0;) data.append(buffer, n);
    return data;
  }

 private:
  int listen_ = -1;
  int conn_ = -1;
  int port_ = 0;
};

// The same over TLS (nettls=, nettoken=): the peer makes the handshake, reads the token line,
// then reads nothing until the test says so. Its certificate, for 127.0.0.1, and the CA are made
// with the openssl command.
class TlsStalledPeer {
 public:
  explicit TlsStalledPeer(const std::string& dir) : dir_(dir) {
    const std::string sh =
        "cd '" + dir +
        "' && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem "
        "-subj /CN=test-ca -days 1 && openssl req -newkey rsa:2048 -nodes -keyout server.key "
        "-out server.csr -subj /CN=peer && echo subjectAltName=IP:127.0.0.1 > san.ext && "
        "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 "
        "-extfile san.ext -out server.pem && (umask 077; echo planted-token > token)";
    if (std::system(("(" + sh + ") > /dev/null 2>&1").c_str()) != 0)
      throw std::runtime_error("openssl could not make the certificates");
    ctx_ = SSL_CTX_new(TLS_server_method());
    if (SSL_CTX_use_certificate_chain_file(ctx_, (dir + "/server.pem").c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx_, (dir + "/server.key").c_str(), SSL_FILETYPE_PEM) != 1)
      throw std::runtime_error("cannot load the peer's certificate");
  }
  ~TlsStalledPeer() {
    if (acceptor_.joinable()) acceptor_.join();
    if (ssl_ != nullptr) SSL_free(ssl_);
    SSL_CTX_free(ctx_);
  }
  int port() const { return tcp_.port(); }
  std::string ca() const { return dir_ + "/ca.pem"; }
  std::string token_file() const { return dir_ + "/token"; }
  // The handshake must run while the writer connects: on a thread of its own.
  void start_accept() {
    acceptor_ = std::thread([this] {
      tcp_.accept();
      ssl_ = SSL_new(ctx_);
      SSL_set_fd(ssl_, tcp_.conn());
      accepted_ = SSL_accept(ssl_) == 1;
    });
  }
  void accept() { acceptor_.join(); }
  bool accepted() const { return accepted_; }
  std::string read_all() {
    std::string data;
    char buffer[1 << 16];
    for (int n; (n = SSL_read(ssl_, buffer, sizeof buffer)) > 0;) data.append(buffer, n);
    return data;
  }

 private:
  std::string dir_;
  StalledPeer tcp_;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  bool accepted_ = false;
  std::thread acceptor_;
};

template <typename Peer>
void ReportWaitsEventsDoNot(Peer& peer, Options& options);

// period=: while no collector listens, events are kept as long as they fit in netqueue= (4096
// bytes here, events of 100 bytes: 40 of them), the rest are dropped and counted, and nothing
// waits; the next connection gets its hello first, then the kept events in order, then the
// DROPPED line with the totals.
TEST(NetWriter, EventsWhileAwayAreKeptUpToNetqueueAndSentAfterTheHello) {
  int port = 0;
  {
    StalledPeer probe;  // a free port, closed again: nobody listens when the output opens
    port = probe.port();
  }
  Options options;
  options.net_host = "127.0.0.1";
  options.net_port = port;
  options.period_seconds = 1;
  options.net_queue_bytes = 4096;
  Output out;
  std::string error;
  ASSERT_TRUE(out.open(options, error)) << error;
  std::atomic<bool> reconnected{false};
  out.enable_reconnect([&] { reconnected = true; });
  std::string kept;
  for (int i = 0; i < 100; ++i) {
    std::string line = "EVENT " + std::to_string(i) + " ";
    line.resize(99, 'x');
    line += '\n';
    Output::EventScope event(out, line.size());
    if (!event.admitted()) continue;
    out.write(line);
    kept += line;
  }
  EXPECT_EQ(kept.size(), 4000u);
  EXPECT_EQ(out.kept_events().events, 40u);
  EXPECT_EQ(out.kept_events().bytes, 4000u);
  EXPECT_EQ(out.drops().events, 60u);
  StalledPeer peer(port);
  peer.accept();  // the writer's next attempt (backoff: well under a second here)
  for (int i = 0; i < 3000 && !reconnected; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(reconnected);
  {
    Output::HelloScope hello(out);
    ASSERT_TRUE(hello.active());
    out.write("HELLO\n");
    hello.done();
  }
  EXPECT_EQ(out.kept_events().events, 0u);
  out.close();
  EXPECT_EQ(
      peer.read_all(),
      "HELLO\n" + kept + "DROPPED: 60 events (6000 bytes) while the front end was not reading\n");
}

TEST(NetWriter, EventsDoNotWaitForAReportWaitingForRoom) {
  StalledPeer peer;
  Options options;
  ReportWaitsEventsDoNot(peer, options);
}

TEST(NetWriter, OverTlsEventsDoNotWaitForAReportWaitingForRoom) {
  char dir[] = "/tmp/net-writer-tls-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  TlsStalledPeer peer(dir);
  Options options;
  options.net_tls_ca = peer.ca();
  options.net_token_file = peer.token_file();
  ReportWaitsEventsDoNot(peer, options);
  EXPECT_TRUE(peer.accepted());
  std::system(("rm -rf '" + std::string(dir) + "'").c_str());
}

// A report far larger than the queue waits for room while the front end reads nothing; Java
// threads' events meanwhile return at once; then the front end reads, and the stream is whole.
// With nettoken=, the token frame must come first.
template <typename Peer>
void ReportWaitsEventsDoNot(Peer& peer, Options& options) {
  constexpr bool kTls = std::is_same_v<Peer, TlsStalledPeer>;
  options.binary = true;
  options.net_host = "127.0.0.1";
  options.net_port = peer.port();
  options.net_queue_bytes = 4096;
  if constexpr (kTls) peer.start_accept();
  Output output;
  std::string error;
  EXPECT_TRUE(output.open(options, error)) << error;
  peer.accept();
  if (!error.empty()) return;
  BinaryReport report;
  report.begin(output, options);

  // The report: a CPU SAMPLES record far larger than the queue and the socket buffers (12 MB;
  // loopback buffers grow to a few MB at most), then a second one, which waits for room while it
  // holds the report's lock.
  std::vector<Cost> big(1'500'000, Cost{1, 1, 0});
  std::atomic<bool> report_done{false};
  std::thread reporter([&] {
    report.cpu_samples(big, big.size());
    report.cpu_samples({Cost{2, 7, 0}}, 7);
    report_done = true;
  });
  const auto give_up = std::chrono::steady_clock::now() + 60s;
  while (output.waiting_writers() == 0 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(1ms);
  EXPECT_EQ(output.waiting_writers(), 1) << "the report never waited for room";
  EXPECT_FALSE(report_done);

  // Java threads meanwhile: a class load (never dropped) and a thread start (dropped: no room).
  std::thread java([&] {
    ClassInfo info;
    info.serial = 77;
    info.name = "planted.LateClass";
    {
      Output::EventScope scope(output, 0, /*droppable=*/false);
      report.load_class(info, reinterpret_cast<jobjectID>(0x7700));
    }
    ThreadInfo thread;
    thread.name = "late-thread";
    Output::EventScope scope(output, 64 + thread.name.size());
    if (scope.admitted()) report.start_thread(9, reinterpret_cast<jobjectID>(0x900), thread);
  });
  java.join();
  // The events returned while the report still waited (before the fix they waited for its lock,
  // i.e. until the report gave the front end up after Output::kStallLimit).
  EXPECT_FALSE(report_done) << "the events waited for the report";
  EXPECT_EQ(output.waiting_writers(), 1);

  std::string stream;
  std::thread reader([&] { stream = peer.read_all(); });
  reporter.join();
  report.note_drops();
  output.close();
  reader.join();
  EXPECT_TRUE(report_done);
  EXPECT_FALSE(output.failed());
  EXPECT_EQ(output.drops().events, 1u);  // the thread start

  if constexpr (kTls) {
    const std::string frame = "HPROF-TOKEN planted-token\n";
    EXPECT_EQ(stream.rfind(frame, 0), 0u) << "the stream does not start with the token frame";
    stream.erase(0, frame.size());
  }
  Profile p;
  try {
    p = read_memory(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(stream.data()), stream.size()));
  } catch (const std::exception& e) {
    ADD_FAILURE() << "the stream does not read back: " << e.what();
    return;
  }
  EXPECT_EQ(p.cpu_samples.size(), 2u);
  const LoadClass* late = p.find_class_by_serial(77);
  if (late == nullptr) {
    ADD_FAILURE() << "the deferred class load was never written";
    return;
  }
  EXPECT_EQ(p.strings.at(late->name_id), "planted.LateClass");
  EXPECT_TRUE(p.threads.empty()) << "the thread start was dropped, not written";
  // The drop is in the stream too, as the DROPPED note under the reserved name id.
  EXPECT_EQ(p.strings.count(BinaryReport::kDropsNoteId), 1u);
  if (p.strings.count(BinaryReport::kDropsNoteId) == 1) {
    EXPECT_EQ(p.strings.at(BinaryReport::kDropsNoteId).rfind("DROPPED: 1 events (", 0), 0u)
        << p.strings.at(BinaryReport::kDropsNoteId);
  }
}

}  // namespace
}  // namespace hprof::agent
