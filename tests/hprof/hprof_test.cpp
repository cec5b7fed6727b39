// SPDX-License-Identifier: Apache-2.0
#include "hprof_test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <set>
#include <stdexcept>

namespace hproftest {

void HprofTest::SetUp() {
  jdk_ = GetParam() == 25 ? Jdk25() : Jdk17();
  if (!jdk_.present()) {
    GTEST_SKIP() << "JDK " << GetParam() << " is not installed: " << jdk_.java()
                 << " does not exist (configure with -DJDK25_HOME=<home> to test it)";
  }
}

void HprofTest::TearDown() {
  if (HasFailure()) {
    dir_.keep();
    std::cerr << "[ kept     ] the test's working directory: " << dir_.path() << "\n";
  }
}

JavaCommand HprofTest::Command(const std::string& hprof_options, const std::string& main_class,
                               const std::vector<std::string>& args,
                               const std::vector<std::string>& vm_args) const {
  JavaCommand c;
  c.vm_args.push_back(hprof_options.empty() ? "-agentlib:hprof"
                                            : "-agentlib:hprof=" + hprof_options);
  for (const auto& a : vm_args) c.vm_args.push_back(a);
  c.main_class = main_class;
  c.args = args;
  return c;
}

RunResult HprofTest::Run(const std::string& hprof_options, const std::string& main_class,
                         const std::vector<std::string>& args,
                         const std::vector<std::string>& vm_args) {
  return Run(Command(hprof_options, main_class, args, vm_args));
}

RunResult HprofTest::Run(const JavaCommand& command) {
  return RunJava(jdk_, command, dir_.path());
}

Profile HprofTest::ReadProfile(const std::string& name) const {
  return ParseProfile(ReadFile(path(name)));
}

std::string Problems(const Profile& p) {
  return p.error_text();
}

std::vector<std::string> LinesOutsideHelp(const std::string& text, const std::string& help) {
  std::set<std::string> help_lines;
  for (const std::string& l : SplitLines(help)) help_lines.insert(l);
  std::vector<std::string> out;
  for (const std::string& l : SplitLines(text)) {
    if (l.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (help_lines.count(l) == 0) out.push_back(l);
  }
  return out;
}

LoopbackReceiver::LoopbackReceiver(int port) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw std::runtime_error("socket failed");
  const int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(listen_fd_, 4) != 0) {
    throw std::runtime_error("bind/listen failed");
  }
  socklen_t len = sizeof addr;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
}

LoopbackReceiver::~LoopbackReceiver() {
  if (conn_fd_ >= 0) close(conn_fd_);
  if (listen_fd_ >= 0) close(listen_fd_);
}

bool LoopbackReceiver::accept_one(int seconds) {
  pollfd p{listen_fd_, POLLIN, 0};
  if (poll(&p, 1, seconds * 1000) <= 0) return false;
  conn_fd_ = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
  return conn_fd_ >= 0;
}

std::string LoopbackReceiver::read_available(int ms) {
  if (conn_fd_ < 0) return data_;
  char buf[65536];
  for (;;) {
    pollfd p{conn_fd_, POLLIN, 0};
    if (poll(&p, 1, ms) <= 0) break;
    const ssize_t n = read(conn_fd_, buf, sizeof buf);
    if (n <= 0) break;
    data_.append(buf, static_cast<size_t>(n));
  }
  return data_;
}

std::string LoopbackReceiver::read_to_eof(JavaProcess& jvm) {
  if (conn_fd_ < 0) return data_;
  char buf[65536];
  for (;;) {
    pollfd p{conn_fd_, POLLIN, 0};
    const int ready = poll(&p, 1, 100);
    if (ready < 0) break;
    if (ready == 0) {
      if (!jvm.running()) break;  // ended (or killed at its time limit) and nothing is left
      continue;
    }
    const ssize_t n = read(conn_fd_, buf, sizeof buf);
    if (n <= 0) break;
    data_.append(buf, static_cast<size_t>(n));
  }
  return data_;
}

void LoopbackReceiver::send(const std::string& bytes) {
  if (conn_fd_ >= 0) (void)!write(conn_fd_, bytes.data(), bytes.size());
}

int ClosedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace hproftest
