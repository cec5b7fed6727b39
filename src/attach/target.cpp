// SPDX-License-Identifier: Apache-2.0
// Finding a JVM: /proc for the process, its namespaces' view of its files and its ids; the
// performance-data file for what HotSpot says about itself (attach disabled, main class,
// version).
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "attach.h"
#include "proc_status.h"

namespace attach {
namespace {

std::string pid_name(pid_t pid, const std::string& comm) {
  return comm.empty() ? std::to_string(pid) : std::to_string(pid) + " (" + comm + ")";
}

// sun.rt.jvmCapabilities: one '0'/'1' per capability; the first is "attach supported", which
// HotSpot clears for -XX:+DisableAttachMechanism.
bool perf_data_says_attach_disabled(const PerfData& data) {
  const auto it = data.strings.find("sun.rt.jvmCapabilities");
  return it != data.strings.end() && !it->second.empty() && it->second[0] == '0';
}

std::vector<std::string> argv_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '\0') continue;
    out.push_back(raw.substr(start, i - start));
    start = i + 1;
  }
  if (start < raw.size()) out.push_back(raw.substr(start));
  return out;
}

bool command_line_disables_attach(pid_t pid) {
  const auto argv = argv_of(pid);
  bool disabled = false;  // the last of +/- wins, as HotSpot's flag parsing does
  for (const auto& a : argv) {
    if (a == "-XX:+DisableAttachMechanism") disabled = true;
    if (a == "-XX:-DisableAttachMechanism") disabled = false;
  }
  return disabled;
}

// The main class or jar from a java launcher's arguments (when there is no perf data).
std::string main_from_argv(const std::vector<std::string>& argv) {
  static const char* const kTakesValue[] = {
      "-cp",           "-classpath",     "--class-path",    "-p",
      "--module-path", "--add-modules",  "--add-opens",     "--add-exports",
      "--add-reads",   "--patch-module", "--limit-modules", "--upgrade-module-path"};
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "-jar" || a == "-m" || a == "--module") return i + 1 < argv.size() ? argv[i + 1] : "";
    if (std::find(std::begin(kTakesValue), std::end(kTakesValue), a) != std::end(kTakesValue)) {
      ++i;
      continue;
    }
    if (!a.starts_with("-")) return a;
  }
  return {};
}

bool socket_exists(pid_t pid, pid_t ns_pid) {
  struct stat st {};
  const std::string path =
      "/proc/" + std::to_string(pid) + "/root/tmp/.java_pid" + std::to_string(ns_pid);
  return stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

std::string first_word(const std::string& s) {
  return s.substr(0, s.find(' '));
}

}  // namespace

bool jvm_alive(pid_t pid) {
  return process_alive(pid);
}

Target find_target(pid_t pid) {
  if (pid <= 0) throw AttachError("not a process id: " + std::to_string(pid));
  const auto status = read_proc_status(pid);
  if (!status) throw AttachError("no process " + std::to_string(pid));
  const std::string who = pid_name(pid, status->name);
  if (status->state == 'Z' || status->state == 'X')
    throw AttachError("process " + who + " has exited");
  // Another user's process cannot be looked into (its maps, its /proc/PID/root), let alone
  // attached to: say so rather than guess what it is.
  if (geteuid() != 0 && geteuid() != status->uid)
    throw AttachError("process " + who + " runs as uid " + std::to_string(status->uid) +
                      " and jvmprof as uid " + std::to_string(geteuid()) +
                      ": attach needs the JVM's user or root");
  Target t;
  t.pid = pid;
  t.ns_pid = status->ns_pid;
  t.uid = status->uid;
  t.gid = status->gid;
  t.root = "/proc/" + std::to_string(pid) + "/root";
  t.tmp_dir = t.root + "/tmp";
  t.perf_data = find_perf_data(pid, t.ns_pid);
  const auto jvm = maps_libjvm(pid);
  if (jvm.has_value() ? !*jvm : t.perf_data.empty())
    throw AttachError("process " + who + " is not a Java VM (no libjvm.so in its memory)");
  bool disabled = command_line_disables_attach(pid);
  if (!t.perf_data.empty()) {
    try {
      disabled = perf_data_says_attach_disabled(read_perf_data(t.perf_data));
    } catch (const AttachError&) {
      // An unreadable or half-written file: the command line is all there is to go by.
    }
  }
  if (disabled)
    throw AttachError("JVM " + std::to_string(pid) +
                      " was started with -XX:+DisableAttachMechanism: it accepts no attach");
  return t;
}

std::optional<LocalJvm> local_jvm(pid_t pid) {
  const auto status = read_proc_status(pid);
  if (!status || status->state == 'Z') return std::nullopt;
  const std::string perf = find_perf_data(pid, status->ns_pid);
  const auto jvm = maps_libjvm(pid);
  // A stale hsperfdata file can carry a recycled pid: the maps decide when they can be read.
  if (jvm.has_value() ? !*jvm : perf.empty()) return std::nullopt;
  LocalJvm j;
  j.pid = pid;
  PerfData data;
  if (!perf.empty()) {
    try {
      data = read_perf_data(perf);
    } catch (const AttachError&) {
      // Half-written or unreadable: the command line is all there is to go by.
    }
  }
  const auto command = data.strings.find("sun.rt.javaCommand");
  j.main =
      command != data.strings.end() ? first_word(command->second) : main_from_argv(argv_of(pid));
  const auto version = data.strings.find("java.property.java.version");
  if (version != data.strings.end()) j.java_version = version->second;
  const uid_t self = geteuid();
  if (perf_data_says_attach_disabled(data) ||
      (data.strings.empty() && command_line_disables_attach(pid))) {
    j.why_not = "-XX:+DisableAttachMechanism";
  } else if (self != 0 && self != status->uid) {
    j.why_not = "runs as uid " + std::to_string(status->uid);
  } else if ((status->caught & (1ULL << (SIGQUIT - 1))) == 0 &&
             !socket_exists(pid, status->ns_pid)) {
    j.why_not = "does not handle SIGQUIT (-Xrs, or still starting)";
  }
  j.attachable = j.why_not.empty();
  return j;
}

std::vector<LocalJvm> local_jvms() {
  std::vector<LocalJvm> out;
  DIR* proc = opendir("/proc");
  if (!proc) return out;
  while (const dirent* e = readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0' || pid == getpid()) continue;
    if (auto j = local_jvm(static_cast<pid_t>(pid))) out.push_back(std::move(*j));
  }
  closedir(proc);
  std::sort(out.begin(), out.end(),
            [](const LocalJvm& a, const LocalJvm& b) { return a.pid < b.pid; });
  return out;
}

}  // namespace attach
