// SPDX-License-Identifier: Apache-2.0
#include "spool_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

namespace jvmprof {
namespace {

constexpr char kPrefix[] = "jvmprof-serve-";
constexpr char kOwnerFile[] = "owner.pid";

// Whether `pid` is a running jvmprof (a pid reused by another program does not keep the
// directory alive).
bool owner_running(pid_t pid) {
  if (pid <= 0) return false;
  if (pid == ::getpid()) return true;
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  if (!std::getline(comm, name)) return true;  // no /proc: trust the signal check
  return name == "jvmprof";
}

// Removes the regular files directly inside `dir` (the spool never makes subdirectories), then
// the directory. Symbolic links are unlinked, never followed.
bool remove_dir(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return false;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    ::unlinkat(::dirfd(d), name.c_str(), 0);
  }
  ::closedir(d);
  return ::rmdir(dir.c_str()) == 0;
}

}  // namespace

std::string make_spool_dir(const std::string& parent) {
  std::string path = parent + "/" + kPrefix + "XXXXXX";
  if (::mkdtemp(path.data()) == nullptr) return {};
  const std::string owner = path + "/" + kOwnerFile;
  const int fd = ::open(owner.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd >= 0) {
    const std::string pid = std::to_string(::getpid()) + "\n";
    const bool ok = ::write(fd, pid.data(), pid.size()) == static_cast<ssize_t>(pid.size());
    ::close(fd);
    if (ok) return path;
  }
  remove_dir(path);
  return {};
}

int remove_stale_spool_dirs(const std::string& parent) {
  DIR* d = ::opendir(parent.c_str());
  if (d == nullptr) return 0;
  int removed = 0;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind(kPrefix, 0) != 0) continue;
    const std::string dir = parent + "/" + name;
    struct stat st {};
    // Only real directories of this user (never through a link someone else planted).
    if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid()) continue;
    std::ifstream owner(dir + "/" + kOwnerFile);
    long pid = 0;
    if (!(owner >> pid)) continue;
    if (owner_running(static_cast<pid_t>(pid))) continue;
    if (remove_dir(dir)) ++removed;
  }
  ::closedir(d);
  return removed;
}

void remove_spool_dir(const std::string& dir) {
  if (dir.empty()) return;
  ::unlink((dir + "/" + kOwnerFile).c_str());
  ::rmdir(dir.c_str());
}

}  // namespace jvmprof
