// SPDX-License-Identifier: Apache-2.0
// `jvmprof install-agent`: makes `-agentlib:hprof` and `-Xrunhprof` work with a JDK without
// LD_LIBRARY_PATH. The JVM looks for agent libraries in its own lib/ directory, so the installed
// agents are linked there (symbolic links named as the files they point to). A link is ours when
// it points into our agent directory; nothing else is ever replaced or removed.
#include "install_agent.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace jvmprof {
namespace {

namespace fs = std::filesystem;

// What a JDK's lib/ needs: HPROF, the runtime it loads from beside itself, and the runtime's
// tracker classes, which it also finds beside itself.
constexpr const char* kAgentFiles[] = {"libhprof.so", "libjvmpi.so", "jvmpi-tracker.jar"};
constexpr const char* kDefaultJvmRoot = "/usr/lib/jvm";

void print_help(std::FILE* out) {
  std::fprintf(out,
               "usage: jvmprof install-agent [--jdk PATH]... [--all] [--dry-run] [--remove]\n"
               "                             [--agents DIR]\n\n"
               "Links the installed HPROF agent (libhprof.so, libjvmpi.so, jvmpi-tracker.jar)\n"
               "into each JDK's lib/ directory, so `java -agentlib:hprof=...` and\n"
               "`-Xrunhprof:...` work without LD_LIBRARY_PATH; --remove takes the links away.\n"
               "A file in lib/ that is not our link is never replaced or removed.\n\n"
               "  --jdk PATH    a JDK home (the directory holding bin/java and lib/)\n"
               "  --all         every JDK under %s\n"
               "  --dry-run     print what would be done, change nothing\n"
               "  --remove      remove the links this command made\n"
               "  --agents DIR  where the agents are (default: lib/jvmprof beside this program's\n"
               "                bin/, or the build tree's lib/ when run from a build)\n",
               kDefaultJvmRoot);
}

// The directory holding the agents: <prefix>/lib/jvmprof for an installed jvmprof
// (<prefix>/bin/jvmprof), or <build>/lib for one run from the build tree.
fs::path default_agent_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const fs::path installed = exe.parent_path().parent_path() / "lib" / "jvmprof";
  if (fs::exists(installed / "libhprof.so", ec)) return installed;
  for (fs::path dir = exe.parent_path(); !dir.empty() && dir != dir.root_path();
       dir = dir.parent_path()) {
    if (fs::exists(dir / "lib" / "libhprof.so", ec)) return dir / "lib";
  }
  return installed;
}

bool is_jdk(const fs::path& home) {
  std::error_code ec;
  return fs::exists(home / "bin" / "java", ec) && fs::is_directory(home / "lib", ec);
}

std::vector<fs::path> all_jdks() {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(kDefaultJvmRoot, ec)) {
    // Debian keeps compatibility symlinks (java-17-openjdk-amd64 -> ...): one entry per JDK.
    if (entry.is_symlink(ec)) continue;
    if (is_jdk(entry.path())) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Whether `link` is a symbolic link into `agent_dir` (ours to replace or remove).
bool is_our_link(const fs::path& link, const fs::path& agent_dir) {
  std::error_code ec;
  if (!fs::is_symlink(fs::symlink_status(link, ec))) return false;
  const fs::path target = fs::read_symlink(link, ec);
  if (ec) return false;
  return target.parent_path().lexically_normal() == agent_dir.lexically_normal();
}

struct Settings {
  std::vector<fs::path> jdks;
  fs::path agent_dir;
  bool dry_run = false;
  bool remove = false;
};

// One JDK; returns false when something could not be done (each reason printed).
bool apply(const fs::path& jdk, const Settings& s) {
  bool ok = true;
  const fs::path lib = jdk / "lib";
  if (!s.remove) {
    // All or nothing: a JDK with a foreign file in the way gets none of the links.
    bool blocked = false;
    for (const char* name : kAgentFiles) {
      std::error_code ec;
      const fs::path link = lib / name;
      if (fs::exists(fs::symlink_status(link, ec)) && !is_our_link(link, s.agent_dir)) {
        std::fprintf(stderr, "install-agent: %s exists and is not ours; %s left unchanged\n",
                     link.c_str(), jdk.c_str());
        blocked = true;
      }
    }
    if (blocked) return false;
  }
  for (const char* name : kAgentFiles) {
    const fs::path link = lib / name;
    const fs::path target = s.agent_dir / name;
    std::error_code ec;
    const bool exists = fs::exists(fs::symlink_status(link, ec));
    const bool ours = exists && is_our_link(link, s.agent_dir);
    if (s.remove) {
      if (!exists) continue;
      if (!ours) {
        std::fprintf(stderr, "install-agent: leaving %s: not a link this command made\n",
                     link.c_str());
        continue;
      }
      std::printf("%s %s\n", s.dry_run ? "would remove" : "removing", link.c_str());
      if (!s.dry_run && !fs::remove(link, ec)) {
        std::fprintf(stderr, "install-agent: cannot remove %s: %s\n", link.c_str(),
                     ec.message().c_str());
        ok = false;
      }
      continue;
    }
    if (ours && fs::read_symlink(link, ec) == target) {
      std::printf("already linked: %s -> %s\n", link.c_str(), target.c_str());
      continue;
    }
    std::printf("%s %s -> %s\n", s.dry_run ? "would link" : "linking", link.c_str(),
                target.c_str());
    if (s.dry_run) continue;
    if (ours) fs::remove(link, ec);
    fs::create_symlink(target, link, ec);
    if (ec) {
      std::fprintf(stderr, "install-agent: cannot create %s: %s\n", link.c_str(),
                   ec.message().c_str());
      ok = false;
    }
  }
  return ok;
}

}  // namespace

int run_install_agent(std::span<char* const> args) {
  Settings s;
  bool all = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string a = args[i];
    auto value = [&](const char* option) -> const char* {
      if (i + 1 >= args.size()) {
        std::fprintf(stderr, "install-agent: %s needs a value (see --help)\n", option);
        return nullptr;
      }
      return args[++i];
    };
    if (a == "--help" || a == "-h") {
      print_help(stdout);
      return 0;
    } else if (a == "--jdk") {
      const char* v = value("--jdk");
      if (v == nullptr) return 2;
      s.jdks.emplace_back(v);
    } else if (a == "--agents") {
      const char* v = value("--agents");
      if (v == nullptr) return 2;
      s.agent_dir = v;
    } else if (a == "--all") {
      all = true;
    } else if (a == "--dry-run") {
      s.dry_run = true;
    } else if (a == "--remove") {
      s.remove = true;
    } else {
      std::fprintf(stderr, "install-agent: unknown argument '%s' (see --help)\n", a.c_str());
      return 2;
    }
  }
  if (all) {
    for (const fs::path& jdk : all_jdks()) s.jdks.push_back(jdk);
  }
  if (s.jdks.empty()) {
    std::fprintf(stderr, "install-agent: name a JDK with --jdk PATH, or --all (see --help)\n");
    return 2;
  }
  if (s.agent_dir.empty()) s.agent_dir = default_agent_dir();
  std::error_code ec;
  s.agent_dir = fs::absolute(s.agent_dir, ec).lexically_normal();
  if (!s.remove) {
    for (const char* name : kAgentFiles) {
      if (!fs::exists(s.agent_dir / name, ec)) {
        std::fprintf(stderr, "install-agent: %s not found (use --agents DIR)\n",
                     (s.agent_dir / name).c_str());
        return 1;
      }
    }
  }
  bool ok = true;
  for (const fs::path& jdk : s.jdks) {
    const fs::path home = fs::absolute(jdk, ec).lexically_normal();
    if (!is_jdk(home)) {
      std::fprintf(stderr, "install-agent: %s is not a JDK (no bin/java and lib/)\n", home.c_str());
      ok = false;
      continue;
    }
    ok = apply(home, s) && ok;
  }
  return ok ? 0 : 1;
}

}  // namespace jvmprof
