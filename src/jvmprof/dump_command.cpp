// SPDX-License-Identifier: Apache-2.0
// `jvmprof dump PID -o FILE.hprof[.gz]`: a binary heap dump of a running JVM from HotSpot's own
// dumper (the attach protocol's `jcmd` command GC.heap_dump, what `jcmd PID GC.heap_dump` runs),
// compressed by the JVM while it writes for .gz. A dump through JVMTI would have to tag every
// object (tens of bytes each in HotSpot's tag map); HotSpot's dumper walks the heap at a
// safepoint with no such cost. --with-sites takes HPROF's dump instead, whose objects carry the
// allocation traces HPROF recorded after the attach.
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "attach.h"
#include "attach_commands.h"
#include "attach_support.h"

namespace jvmprof {
namespace {

namespace fs = std::filesystem;

void usage(std::FILE* out) {
  std::fprintf(
      out,
      "usage: jvmprof dump PID -o FILE.hprof[.gz] [--all] [--with-sites] [--agent LIB]\n"
      "                    [--timeout SECONDS]\n\n"
      "Writes a binary heap dump (HPROF format) of the running JVM PID with HotSpot's own\n"
      "dumper, as `jcmd PID GC.heap_dump` does; FILE ending in .gz is compressed while\n"
      "written. The JVM runs a full GC first and dumps the live objects.\n\n"
      "  --all              every object, also unreachable ones not yet collected\n"
      "  --with-sites       attach HPROF (heap=all,format=b) and take its dump and\n"
      "                     allocation sites instead; objects allocated before the attach\n"
      "                     have no allocation trace\n"
      "  --agent LIB        the HPROF library for --with-sites (default: jvmprof's)\n"
      "  --timeout SECONDS  how long the JVM may take to start its attach listener\n"
      "                     (default 10)\n");
}

// Moves `from` to `to`, copying when they are on different file systems.
bool move_file(const fs::path& from, const fs::path& to, std::string& error) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (!ec) return true;
  if (ec != std::errc::cross_device_link) {
    error = ec.message();
    return false;
  }
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  if (ec) {
    error = ec.message();
    return false;
  }
  fs::remove(from, ec);
  return true;
}

bool gzip_file(const fs::path& from, const fs::path& to, std::string& error) {
  std::ifstream in(from, std::ios::binary);
  gzFile out = gzopen(to.c_str(), "wb1");
  if (!in || out == nullptr) {
    error = std::strerror(errno);
    if (out) gzclose(out);
    return false;
  }
  std::vector<char> buf(1 << 20);
  bool ok = true;
  while (ok && in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto n = static_cast<unsigned>(in.gcount());
    if (n > 0 && gzwrite(out, buf.data(), n) != static_cast<int>(n)) ok = false;
  }
  if (gzclose(out) != Z_OK) ok = false;
  if (!ok) error = "compression failed";
  return ok;
}

struct Settings {
  pid_t pid = 0;
  std::string out;
  bool all = false, with_sites = false, gz = false;
  std::string agent;
  double timeout_s = 10;
};

// Where the JVM writes (its path) and where we find the result (our path).
struct Placement {
  std::string jvm_path, our_path;
};

Placement place(const attach::Target& target, const fs::path& out, const std::string& suffix) {
  // The JVM writes the file as its own user and in its own mount namespace: beside FILE when it
  // sees our files and is our user, else in its /tmp, moved here afterwards.
  if (same_mount_namespace(target) && target.uid == geteuid()) {
    const std::string p = out.string() + ".jvmprof-partial" + suffix;
    return {p, p};
  }
  const std::string name = "jvmprof-dump-" + std::to_string(target.ns_pid) + "-" +
                           std::to_string(getpid()) + ".hprof" + suffix;
  return {"/tmp/" + name, target.tmp_dir + "/" + name};
}

int dump_with_hotspot(const Settings& s, const attach::Target& target, const fs::path& out,
                      const attach::Timeouts& timeouts) {
  const Placement at = place(target, out, s.gz ? ".gz" : "");
  std::error_code ec;
  fs::remove(at.our_path, ec);  // HotSpot refuses to overwrite a file
  std::string command = "GC.heap_dump";
  if (s.all) command += " -all";
  if (s.gz) command += " -gz=1";
  command += " " + at.jvm_path;
  std::string reply;
  try {
    reply = attach::diagnostic_command(target, command, timeouts);
  } catch (const attach::AttachError& e) {
    fs::remove(at.our_path, ec);
    std::fprintf(stderr, "jvmprof dump: %s\n", e.what());
    return 1;
  }
  // HotSpot reports its own failures (no space, not writable) as text after a success code.
  if (reply.find("Heap dump file created") == std::string::npos) {
    fs::remove(at.our_path, ec);
    std::string line = reply.substr(0, reply.find('\n'));
    if (reply.find('\n') + 1 < reply.size()) line = reply.substr(reply.find('\n') + 1);
    while (!line.empty() && line.back() == '\n') line.pop_back();
    std::fprintf(stderr, "jvmprof dump: JVM %d did not write the dump: %s\n",
                 static_cast<int>(s.pid), line.c_str());
    return 1;
  }
  std::string error;
  if (!move_file(at.our_path, out, error)) {
    std::fprintf(stderr, "jvmprof dump: cannot move %s to %s: %s\n", at.our_path.c_str(),
                 out.c_str(), error.c_str());
    return 1;
  }
  return 0;
}

int dump_with_hprof(const Settings& s, const attach::Target& target, const fs::path& out,
                    const attach::Timeouts& timeouts) {
  const Placement at = place(target, out, "");
  std::error_code ec;
  fs::remove(at.our_path, ec);
  try {
    const std::string library = agent_path_for(target, s.agent);
    if (attach::load_agent(target, library, "heap=all,format=b,file=" + at.jvm_path, timeouts) !=
        0) {
      std::fprintf(stderr, "jvmprof dump: HPROF could not start in JVM %d (see its output)\n",
                   static_cast<int>(s.pid));
      return 1;
    }
    attach::Timeouts stop = timeouts;
    stop.reply = std::chrono::milliseconds(0);  // the report takes as long as the heap is big
    if (attach::load_agent(target, library, "stop", stop) != 0) {
      std::fprintf(stderr, "jvmprof dump: HPROF in JVM %d did not stop\n", static_cast<int>(s.pid));
      return 1;
    }
  } catch (const attach::AttachError& e) {
    std::fprintf(stderr, "jvmprof dump: %s\n", e.what());
    return 1;
  }
  std::string error;
  const bool ok = s.gz ? gzip_file(at.our_path, out, error) : move_file(at.our_path, out, error);
  if (s.gz) fs::remove(at.our_path, ec);
  if (!ok) {
    std::fprintf(stderr, "jvmprof dump: cannot write %s: %s\n", out.c_str(), error.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int run_dump(std::span<char* const> args) {
  Settings s;
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string a = args[i];
    const bool has_value = i + 1 < args.size();
    if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    } else if ((a == "-o" || a == "--output") && has_value) {
      s.out = args[++i];
    } else if (a == "--agent" && has_value) {
      s.agent = args[++i];
    } else if (a == "--timeout" && has_value) {
      const auto v = parse_seconds(args[++i]);
      if (!v) {
        std::fprintf(stderr, "jvmprof dump: --timeout takes seconds, not '%s'\n", args[i]);
        return 2;
      }
      s.timeout_s = *v;
    } else if (a == "--all") {
      s.all = true;
    } else if (a == "--with-sites") {
      s.with_sites = true;
    } else if (a.starts_with("-")) {
      std::fprintf(stderr, "jvmprof dump: unknown or incomplete option '%s' (see --help)\n",
                   a.c_str());
      return 2;
    } else {
      positional.push_back(a);
    }
  }
  if (positional.size() != 1 || s.out.empty()) {
    std::fprintf(stderr, "jvmprof dump: expected PID -o FILE.hprof[.gz] (see --help)\n");
    return 2;
  }
  const auto pid = parse_pid("dump", positional[0]);
  if (!pid) return 2;
  s.pid = *pid;
  s.gz = s.out.ends_with(".hprof.gz");
  if (!s.gz && !s.out.ends_with(".hprof")) {
    std::fprintf(stderr, "jvmprof dump: %s: the name must end in .hprof or .hprof.gz\n",
                 s.out.c_str());
    return 2;
  }
  if (s.with_sites && s.all) {
    std::fprintf(stderr, "jvmprof dump: --all is HotSpot's dumper's; --with-sites takes HPROF's\n");
    return 2;
  }
  if (s.agent.empty()) s.agent = default_agent_library();
  std::error_code ec;
  const fs::path out = fs::absolute(s.out, ec);
  attach::Timeouts timeouts;
  timeouts.attach = std::chrono::milliseconds(static_cast<long long>(s.timeout_s * 1000));
  attach::Target target;
  try {
    target = attach::find_target(s.pid);
  } catch (const attach::AttachError& e) {
    std::fprintf(stderr, "jvmprof dump: %s\n", e.what());
    return 1;
  }
  const int rc = s.with_sites ? dump_with_hprof(s, target, out, timeouts)
                              : dump_with_hotspot(s, target, out, timeouts);
  if (rc != 0) return rc;
  std::printf("wrote %s (%ju bytes)\n", s.out.c_str(),
              static_cast<uintmax_t>(fs::file_size(out, ec)));
  return 0;
}

}  // namespace jvmprof
