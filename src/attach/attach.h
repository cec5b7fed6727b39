// SPDX-License-Identifier: Apache-2.0
// attach: HotSpot's dynamic attach protocol spoken directly (what jcmd and the Attach API do,
// without a JDK on this side), and the local JVMs as HotSpot's performance-data files and /proc
// describe them. Linux only. Every failure is an AttachError whose message is one line.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace attach {

class AttachError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A process that may be a HotSpot JVM, as seen from this process.
struct Target {
  pid_t pid = 0;     // in our pid namespace
  pid_t ns_pid = 0;  // in its own (a container's) pid namespace: the name of its files
  uid_t uid = 0;     // effective ids: what HotSpot checks a peer against
  gid_t gid = 0;
  std::string root;       // /proc/PID/root: its mount namespace's root, seen from here
  std::string tmp_dir;    // where HotSpot puts the attach socket and hsperfdata (root + /tmp)
  std::string perf_data;  // its hsperfdata file, empty when it runs with -XX:-UsePerfData
};

// Looks the pid up. Throws AttachError: no such process, not a Java VM, a JVM that refuses
// attach (-XX:+DisableAttachMechanism), a JVM that has exited.
Target find_target(pid_t pid);

// Whether the process is still there (not gone, not a zombie).
bool jvm_alive(pid_t pid);

// One reply to an attach command: HotSpot's completion code (0: done) and the text after it.
struct Reply {
  int code = -1;
  std::string text;
};

struct Timeouts {
  // From the SIGQUIT until the attach socket appears (the JDK's default is 10 s).
  std::chrono::milliseconds attach{10000};
  // From the request until the reply is complete; 0 waits as long as the JVM is alive (heap
  // dumps, a profiler's final report).
  std::chrono::milliseconds reply{0};
};

// Sends one command of protocol version 1 (at most three arguments) and reads the whole reply.
// As root, the connection is made with the target's uid and gid (HotSpot accepts peers of its
// own effective user); as another user than the target's it throws. Throws AttachError for
// everything but the command's own failure, which is Reply::code.
Reply execute(const Target& target, const std::string& command,
              const std::vector<std::string>& args, const Timeouts& timeouts = {});

// `load`: the agent library at `library` (an absolute path the target can read) with `options`
// for its Agent_OnAttach. Returns Agent_OnAttach's result; throws when HotSpot cannot load it.
int load_agent(const Target& target, const std::string& library, const std::string& options,
               const Timeouts& timeouts = {});

// `jcmd`: a diagnostic command line ("GC.heap_dump -gz=1 /tmp/x.hprof"); returns its output.
// Throws with the JVM's message when the command fails.
std::string diagnostic_command(const Target& target, const std::string& command_line,
                               const Timeouts& timeouts = {});

// ---- Local JVMs ----

// A performance-data file's entries: longs and strings by name ("sun.rt.javaCommand").
struct PerfData {
  std::map<std::string, long long> longs;
  std::map<std::string, std::string> strings;
};
// Parses an hsperfdata file (HotSpot's PerfDataPrologue and PerfDataEntry layout, version 2).
// Throws AttachError when it is not one.
PerfData read_perf_data(const std::string& path);

struct LocalJvm {
  pid_t pid = 0;
  std::string main;          // main class or jar, as `jps -l` shows it ("" when unknown)
  std::string java_version;  // "17.0.15" ("" when unknown)
  bool attachable = false;
  std::string why_not;  // when not attachable: one short reason
};
// Every JVM this process can see, by pid.
std::vector<LocalJvm> local_jvms();
// One of them; nullopt when `pid` is not a JVM this process can see.
std::optional<LocalJvm> local_jvm(pid_t pid);

}  // namespace attach
