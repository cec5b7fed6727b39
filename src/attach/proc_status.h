// SPDX-License-Identifier: Apache-2.0
// What /proc/PID tells about a process that attach needs: its ids, its state, whether it has
// HotSpot loaded and where its performance-data file is.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace attach {

struct ProcStatus {
  std::string name;  // comm
  char state = '?';  // R, S, D, T, Z, ...
  uid_t uid = 0;     // effective
  gid_t gid = 0;
  pid_t ns_pid = 0;               // innermost pid namespace's pid (NSpid's last field)
  unsigned long long caught = 0;  // SigCgt: the signals it handles
};

// nullopt when there is no such process.
std::optional<ProcStatus> read_proc_status(pid_t pid);

// Whether libjvm.so is mapped into the process; nullopt when its maps cannot be read.
std::optional<bool> maps_libjvm(pid_t pid);

// The process's hsperfdata file (under /proc/PID/root/tmp/hsperfdata_*/NSPID), "" if none.
std::string find_perf_data(pid_t pid, pid_t ns_pid);

// Whether the process is still there and not a zombie.
bool process_alive(pid_t pid);

// The process's command line, arguments separated by spaces.
std::string command_line(pid_t pid);

}  // namespace attach
