// SPDX-License-Identifier: Apache-2.0
// `jvmprof attach PID OPTIONS` and `jvmprof stop PID`: load the HPROF agent into a running JVM
// with HPROF's option string, and have it write its final report and detach (options `stop`).
#include <cstdio>
#include <string>
#include <vector>

#include "attach.h"
#include "attach_commands.h"
#include "attach_support.h"

namespace jvmprof {
namespace {

struct Parsed {
  std::vector<std::string> positional;
  std::string agent;
  double timeout_s = 10;
  bool help = false;
  bool ok = true;
};

Parsed parse(const char* command, std::span<char* const> args) {
  Parsed p;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string a = args[i];
    if (a == "--help" || a == "-h") {
      p.help = true;
    } else if (a == "--agent" && i + 1 < args.size()) {
      p.agent = args[++i];
    } else if (a == "--timeout" && i + 1 < args.size()) {
      const auto s = parse_seconds(args[++i]);
      if (!s) {
        std::fprintf(stderr, "jvmprof %s: --timeout takes seconds, not '%s'\n", command, args[i]);
        p.ok = false;
      } else {
        p.timeout_s = *s;
      }
    } else if (a.starts_with("--")) {
      std::fprintf(stderr, "jvmprof %s: unknown or incomplete option '%s' (see --help)\n", command,
                   a.c_str());
      p.ok = false;
    } else {
      p.positional.push_back(a);
    }
  }
  return p;
}

attach::Timeouts timeouts_of(const Parsed& p) {
  attach::Timeouts t;
  t.attach = std::chrono::milliseconds(static_cast<long long>(p.timeout_s * 1000));
  return t;
}

// Loads `library` with `options`; prints one line and returns false on any failure.
bool load(const char* command, pid_t pid, const std::string& library, const std::string& options,
          const attach::Timeouts& timeouts, int& result) {
  try {
    const attach::Target target = attach::find_target(pid);
    result = attach::load_agent(target, agent_path_for(target, library), options, timeouts);
    return true;
  } catch (const attach::AttachError& e) {
    std::fprintf(stderr, "jvmprof %s: %s\n", command, e.what());
    return false;
  }
}

}  // namespace

int run_attach(std::span<char* const> args) {
  const Parsed p = parse("attach", args);
  if (p.help) {
    std::printf(
        "usage: jvmprof attach PID HPROF-OPTIONS [--agent LIB] [--timeout SECONDS]\n\n"
        "Loads HPROF into the running JVM PID with HPROF's option string (as after\n"
        "-agentlib:hprof=), e.g. cpu=samples,heap=sites,file=p.txt or net=127.0.0.1:7370,\n"
        "and returns once it profiles. `jvmprof stop PID` writes the report and detaches.\n\n"
        "  --agent LIB        load another agent library, with its own option string\n"
        "                     (libjvmpi.so takes <agent>[:<options>])\n"
        "  --timeout SECONDS  how long the JVM may take to start its attach listener\n"
        "                     (default 10)\n");
    return 0;
  }
  if (!p.ok) return 2;
  if (p.positional.size() != 2) {
    std::fprintf(stderr, "jvmprof attach: expected PID and HPROF-OPTIONS (see --help)\n");
    return 2;
  }
  const auto pid = parse_pid("attach", p.positional[0]);
  if (!pid) return 2;
  const std::string& options = p.positional[1];
  if (options == "stop") {
    std::fprintf(stderr, "jvmprof attach: 'stop' is `jvmprof stop PID`\n");
    return 2;
  }
  const std::string library = p.agent.empty() ? default_agent_library() : p.agent;
  int result = 0;
  if (!load("attach", *pid, library, options, timeouts_of(p), result)) return 1;
  if (result != 0) {
    std::fprintf(stderr,
                 "jvmprof attach: the agent refused the options '%s' (Agent_OnAttach "
                 "returned %d; the JVM's output says why)\n",
                 options.c_str(), result);
    return 1;
  }
  std::printf("attached to JVM %d: %s\n", static_cast<int>(*pid), options.c_str());
  return 0;
}

int run_stop(std::span<char* const> args) {
  const Parsed p = parse("stop", args);
  if (p.help) {
    std::printf(
        "usage: jvmprof stop PID [--agent LIB] [--timeout SECONDS]\n\n"
        "Has the agent that `jvmprof attach` loaded into JVM PID write its complete report\n"
        "(to its file= or net=) and detach; the program runs on unprofiled.\n\n"
        "  --agent LIB        the agent library that was attached (default: HPROF)\n"
        "  --timeout SECONDS  how long the JVM may take to start its attach listener\n"
        "                     (default 10)\n");
    return 0;
  }
  if (!p.ok) return 2;
  if (p.positional.size() != 1) {
    std::fprintf(stderr, "jvmprof stop: expected PID (see --help)\n");
    return 2;
  }
  const auto pid = parse_pid("stop", p.positional[0]);
  if (!pid) return 2;
  const std::string library = p.agent.empty() ? default_agent_library() : p.agent;
  int result = 0;
  if (!load("stop", *pid, library, "stop", timeouts_of(p), result)) return 1;
  if (result != 0) {
    std::fprintf(stderr, "jvmprof stop: JVM %d has no profiling session of %s to stop\n",
                 static_cast<int>(*pid), library.c_str());
    return 1;
  }
  std::printf("stopped profiling JVM %d\n", static_cast<int>(*pid));
  return 0;
}

}  // namespace jvmprof
