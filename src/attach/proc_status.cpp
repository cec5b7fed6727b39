// SPDX-License-Identifier: Apache-2.0
#include "proc_status.h"

#include <dirent.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace attach {

std::optional<ProcStatus> read_proc_status(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  if (!in) return std::nullopt;
  ProcStatus s;
  std::string line;
  bool any = false;
  while (std::getline(in, line)) {
    any = true;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, colon);
    std::istringstream value(line.substr(colon + 1));
    if (key == "Name") {
      value >> s.name;
    } else if (key == "State") {
      value >> s.state;
    } else if (key == "Uid" || key == "Gid") {
      unsigned long real = 0, effective = 0;
      value >> real >> effective;
      (key == "Uid" ? s.uid : s.gid) = static_cast<uid_t>(effective);
    } else if (key == "NSpid") {
      long v = 0;
      while (value >> v) s.ns_pid = static_cast<pid_t>(v);
    } else if (key == "SigCgt") {
      std::string hex;
      value >> hex;
      s.caught = std::strtoull(hex.c_str(), nullptr, 16);
    }
  }
  if (!any) return std::nullopt;
  if (s.ns_pid == 0) s.ns_pid = pid;  // kernels before 4.1 have no NSpid line
  return s;
}

std::optional<bool> maps_libjvm(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  if (!in) return std::nullopt;
  std::string line;
  bool any = false;
  while (std::getline(in, line)) {
    any = true;
    if (line.ends_with("/libjvm.so")) return true;
  }
  // An unreadable maps file opens but reads nothing; a process always maps something.
  if (!any) return std::nullopt;
  return false;
}

std::string find_perf_data(pid_t pid, pid_t ns_pid) {
  const std::string tmp = "/proc/" + std::to_string(pid) + "/root/tmp";
  DIR* dir = opendir(tmp.c_str());
  if (!dir) return {};
  std::string found;
  while (const dirent* e = readdir(dir)) {
    const std::string name = e->d_name;
    if (!name.starts_with("hsperfdata_")) continue;
    const std::string path = tmp + "/" + name + "/" + std::to_string(ns_pid);
    struct stat st {};
    if (stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      found = path;
      break;
    }
  }
  closedir(dir);
  return found;
}

bool process_alive(pid_t pid) {
  const auto s = read_proc_status(pid);
  return s && s->state != 'Z' && s->state != 'X';
}

std::string command_line(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!raw.empty() && raw.back() == '\0') raw.pop_back();
  for (char& c : raw)
    if (c == '\0') c = ' ';
  return raw;
}

}  // namespace attach
