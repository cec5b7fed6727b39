// SPDX-License-Identifier: Apache-2.0
#include "attach_support.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <vector>

namespace jvmprof {
namespace {

namespace fs = std::filesystem;

// What libhprof.so opens from its own directory (the JVMPI runtime and its tracker classes).
constexpr const char* kAgentSiblings[] = {"libjvmpi.so", "jvmpi-tracker.jar"};

bool same_contents(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (!fs::exists(b, ec) || fs::file_size(a, ec) != fs::file_size(b, ec) || ec) return false;
  std::ifstream x(a, std::ios::binary), y(b, std::ios::binary);
  std::vector<char> bx(1 << 16), by(1 << 16);
  while (x && y) {
    x.read(bx.data(), static_cast<std::streamsize>(bx.size()));
    y.read(by.data(), static_cast<std::streamsize>(by.size()));
    if (x.gcount() != y.gcount() || !std::equal(bx.begin(), bx.begin() + x.gcount(), by.begin()))
      return false;
  }
  return !x.bad() && !y.bad();
}

}  // namespace

std::optional<pid_t> parse_pid(const char* command, const std::string& text) {
  char* end = nullptr;
  const long pid = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || pid <= 0 || pid > 0x3fffffff) {
    std::fprintf(stderr, "jvmprof %s: not a process id: '%s'\n", command, text.c_str());
    return std::nullopt;
  }
  return static_cast<pid_t>(pid);
}

std::optional<double> parse_seconds(const std::string& text) {
  char* end = nullptr;
  const double s = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(s > 0) || s > 7 * 24 * 3600) return std::nullopt;
  return s;
}

std::string default_agent_library() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "libhprof.so";
  const fs::path installed = exe.parent_path().parent_path() / "lib" / "jvmprof" / "libhprof.so";
  if (fs::exists(installed, ec)) return installed;
  for (fs::path dir = exe.parent_path(); !dir.empty() && dir != dir.root_path();
       dir = dir.parent_path()) {
    if (fs::exists(dir / "lib" / "libhprof.so", ec)) return dir / "lib" / "libhprof.so";
  }
  return installed;
}

bool same_mount_namespace(const attach::Target& target) {
  struct stat ours {
  }, theirs{};
  const std::string path = "/proc/" + std::to_string(target.pid) + "/ns/mnt";
  if (stat("/proc/self/ns/mnt", &ours) != 0 || stat(path.c_str(), &theirs) != 0) return true;
  return ours.st_ino == theirs.st_ino && ours.st_dev == theirs.st_dev;
}

std::string agent_path_for(const attach::Target& target, const std::string& library) {
  std::error_code ec;
  const fs::path absolute = fs::canonical(library, ec);
  if (ec) throw attach::AttachError("agent library " + library + ": " + ec.message());
  if (same_mount_namespace(target)) return absolute;
  // A container sees its own files: put a copy where it can read it, owned by its user.
  const std::string dir_name = "jvmprof-agent-" + std::to_string(target.uid);
  const fs::path outside = fs::path(target.tmp_dir) / dir_name;
  fs::create_directories(outside, ec);
  if (ec) throw attach::AttachError("cannot create " + outside.string() + ": " + ec.message());
  if (chown(outside.c_str(), target.uid, target.gid) != 0 && geteuid() == 0)
    throw attach::AttachError("cannot hand " + outside.string() + " to the JVM's user");
  std::vector<fs::path> files{absolute};
  for (const char* sibling : kAgentSiblings)
    if (fs::exists(absolute.parent_path() / sibling, ec))
      files.push_back(absolute.parent_path() / sibling);
  for (const auto& f : files) {
    const fs::path copy = outside / f.filename();
    // The JVM may have this file mapped from an earlier attach: never write into it (that
    // changes code under a running program). An identical copy is kept; a different one is
    // replaced by rename, which leaves a mapped old file intact.
    if (same_contents(f, copy)) continue;
    const fs::path staged = outside / (f.filename().string() + ".new-" + std::to_string(getpid()));
    fs::copy_file(f, staged, fs::copy_options::overwrite_existing, ec);
    if (!ec && geteuid() == 0 && chown(staged.c_str(), target.uid, target.gid) != 0)
      ec = std::error_code(errno, std::generic_category());
    if (!ec) fs::rename(staged, copy, ec);
    if (ec) {
      std::error_code ignored;
      fs::remove(staged, ignored);
      throw attach::AttachError("cannot copy " + f.string() +
                                " into the JVM's /tmp: " + ec.message());
    }
  }
  return "/tmp/" + dir_name + "/" + absolute.filename().string();
}

}  // namespace jvmprof
