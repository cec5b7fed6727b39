// SPDX-License-Identifier: Apache-2.0
// HotSpot's attach protocol on Linux, as the JDK's own client speaks it: if the JVM has no attach
// socket yet, create the trigger file .attach_pid<nspid> (in its working directory, else its
// /tmp) and send SIGQUIT; its signal thread sees the file and starts the attach listener, which
// binds /tmp/.java_pid<nspid>. A request is "1\0<command>\0<arg1>\0<arg2>\0<arg3>\0" (protocol
// version 1, always three arguments); the reply is the completion code on the first line, then
// the command's text, up to the end of the connection.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "attach.h"
#include "proc_status.h"

namespace attach {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string errno_text() {
  return std::strerror(errno);
}

// As root, act with the target's effective uid and gid while the trigger file is created and
// the connection made: HotSpot only answers peers of its own user (or root, but a root peer in
// another user namespace is not root there), and the JDK's client does the same. The saved uid
// stays root, so the switch is undone afterwards. As another user the attach is refused.
class TargetCredentials {
 public:
  explicit TargetCredentials(const Target& t) {
    const uid_t self = geteuid();
    if (self == t.uid) return;
    if (self != 0)
      throw AttachError("JVM " + std::to_string(t.pid) + " runs as uid " + std::to_string(t.uid) +
                        " and jvmprof as uid " + std::to_string(self) +
                        ": attach needs the JVM's user or root");
    if (setegid(t.gid) != 0 || seteuid(t.uid) != 0) {
      const std::string why = errno_text();
      restore();
      throw AttachError("cannot switch to the JVM's uid " + std::to_string(t.uid) + ": " + why);
    }
    switched_ = true;
  }
  ~TargetCredentials() {
    if (switched_) restore();
  }
  TargetCredentials(const TargetCredentials&) = delete;
  TargetCredentials& operator=(const TargetCredentials&) = delete;

 private:
  static void restore() {
    // Back to root: both calls can only fail if the saved ids are not root, which they are.
    if (seteuid(0) != 0 || setegid(0) != 0) std::abort();
  }
  bool switched_ = false;
};

bool is_socket(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

// The JDK's client refuses a socket that someone else could have put there.
void check_socket_owner(const std::string& path, const Target& t) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) throw AttachError("cannot stat " + path + ": " + errno_text());
  if (st.st_uid != geteuid() || st.st_gid != getegid())
    throw AttachError(path + " is owned by uid " + std::to_string(st.st_uid) + ", not by JVM " +
                      std::to_string(t.pid) + "'s uid " + std::to_string(geteuid()) +
                      ": not connecting");
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0)
    throw AttachError(path + " is open to other users: not connecting");
}

void check_alive(const Target& t, const char* when) {
  if (!process_alive(t.pid)) throw AttachError("JVM " + std::to_string(t.pid) + " exited " + when);
}

// Starts the target's attach listener and waits for its socket.
void trigger_listener(const Target& t, const std::string& socket_path, milliseconds timeout) {
  const auto status = read_proc_status(t.pid);
  if (!status) throw AttachError("JVM " + std::to_string(t.pid) + " exited before the attach");
  // SIGQUIT's default action ends the process: only send it to a JVM whose handler is installed
  // (not one still starting, not one run with -Xrs). The JDK's client checks SigCgt the same way.
  const auto deadline = Clock::now() + timeout;
  while ((read_proc_status(t.pid).value_or(ProcStatus{}).caught & (1ULL << (SIGQUIT - 1))) == 0) {
    check_alive(t, "before the attach");
    if (Clock::now() > deadline)
      throw AttachError("JVM " + std::to_string(t.pid) +
                        " does not handle SIGQUIT (started with -Xrs?): not sending it");
    std::this_thread::sleep_for(milliseconds(20));
  }
  const std::string name = ".attach_pid" + std::to_string(t.ns_pid);
  std::string trigger = "/proc/" + std::to_string(t.pid) + "/cwd/" + name;
  int fd = open(trigger.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) {
    trigger = t.tmp_dir + "/" + name;
    fd = open(trigger.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
  }
  if (fd < 0) throw AttachError("cannot create " + trigger + ": " + errno_text());
  close(fd);
  struct RemoveTrigger {
    const std::string& path;
    ~RemoveTrigger() { unlink(path.c_str()); }
  } remove_trigger{trigger};
  if (kill(t.pid, SIGQUIT) != 0)
    throw AttachError("cannot signal JVM " + std::to_string(t.pid) + ": " + errno_text());
  // Poll with a growing step; half-way the signal is sent again, in case the first one arrived
  // while the JVM was busy starting its signal thread.
  const auto start = Clock::now();
  bool resent = false;
  milliseconds step(10);
  while (!is_socket(socket_path)) {
    check_alive(t, "during the attach");
    const auto now = Clock::now();
    if (now >= start + timeout)
      throw AttachError("JVM " + std::to_string(t.pid) + " did not start its attach listener in " +
                        std::to_string(timeout.count()) + " ms (timeout)");
    if (!resent && now >= start + timeout / 2) {
      kill(t.pid, SIGQUIT);
      resent = true;
    }
    std::this_thread::sleep_for(step);
    step = std::min(step * 2, milliseconds(200));
  }
}

void send_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw AttachError("cannot send the attach request: " + errno_text());
    done += static_cast<size_t>(n);
  }
}

std::string read_reply(int fd, const Target& t, milliseconds timeout) {
  std::string text;
  const auto deadline = Clock::now() + timeout;
  char buf[8192];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, 200);
    if (ready < 0 && errno != EINTR) throw AttachError("poll: " + errno_text());
    if (ready > 0) {
      const ssize_t n = recv(fd, buf, sizeof buf, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0)
        throw AttachError("reading the reply of JVM " + std::to_string(t.pid) + ": " +
                          errno_text());
      if (n == 0) return text;
      text.append(buf, static_cast<size_t>(n));
      if (text.size() > (size_t{256} << 20))
        throw AttachError("the reply of JVM " + std::to_string(t.pid) + " exceeds 256 MiB");
      continue;
    }
    if (!process_alive(t.pid))
      throw AttachError("JVM " + std::to_string(t.pid) + " exited before it replied");
    if (timeout.count() > 0 && Clock::now() > deadline)
      throw AttachError("JVM " + std::to_string(t.pid) + " did not reply in " +
                        std::to_string(timeout.count()) + " ms (timeout)");
  }
}

}  // namespace

Reply execute(const Target& target, const std::string& command,
              const std::vector<std::string>& args, const Timeouts& timeouts) {
  if (args.size() > 3) throw AttachError("an attach command takes at most three arguments");
  const std::string socket_path = target.tmp_dir + "/.java_pid" + std::to_string(target.ns_pid);
  sockaddr_un addr{};
  if (socket_path.size() >= sizeof addr.sun_path)
    throw AttachError("socket path too long: " + socket_path);
  int fd = -1;
  {
    TargetCredentials as_target(target);
    if (!is_socket(socket_path)) trigger_listener(target, socket_path, timeouts.attach);
    check_socket_owner(socket_path, target);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw AttachError("socket: " + errno_text());
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
    if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
      const std::string why = errno_text();
      close(fd);
      check_alive(target, "during the attach");
      throw AttachError("cannot connect to " + socket_path + ": " + why);
    }
  }
  struct CloseFd {
    int fd;
    ~CloseFd() { close(fd); }
  } close_fd{fd};
  std::string request("1", 1);
  request.push_back('\0');
  request += command;
  request.push_back('\0');
  for (size_t i = 0; i < 3; ++i) {
    if (i < args.size()) request += args[i];
    request.push_back('\0');
  }
  send_all(fd, request);
  const std::string text = read_reply(fd, target, timeouts.reply);
  const size_t nl = text.find('\n');
  const std::string first = text.substr(0, nl);
  char* end = nullptr;
  const long code = std::strtol(first.c_str(), &end, 10);
  if (first.empty() || *end != '\0')
    throw AttachError("JVM " + std::to_string(target.pid) + " gave no completion code" +
                      (text.empty() ? "" : ": " + first));
  Reply r;
  r.code = static_cast<int>(code);
  r.text = nl == std::string::npos ? "" : text.substr(nl + 1);
  return r;
}

}  // namespace attach
