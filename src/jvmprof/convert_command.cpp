// SPDX-License-Identifier: Apache-2.0
// jvmprof convert: an HPROF profile (java.hprof.txt or java.hprof) to collapsed stacks, pprof,
// speedscope JSON or a self-contained HTML flame graph.
#include "convert_command.h"

#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "profiles.h"

namespace jvmprof {

bool write_output(const std::string& path, const std::string& bytes, bool gzip) {
  std::string data = bytes;
  if (gzip) {
    z_stream z{};
    if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
      return false;
    std::string out(deflateBound(&z, bytes.size()) + 64, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    z.avail_in = static_cast<uInt>(bytes.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    const int rc = deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    if (rc != Z_STREAM_END) return false;
    data.swap(out);
  }
  if (path == "-") return std::fwrite(data.data(), 1, data.size(), stdout) == data.size();
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(data.data(), static_cast<std::streamsize>(data.size()));
  f.close();
  return static_cast<bool>(f);
}

namespace {

void usage(std::FILE* out) {
  std::fprintf(
      out,
      "usage: jvmprof convert --to collapsed|pprof|speedscope|html [--measure M]...\n"
      "                       [--threads] [--diff BASE] [--context LABEL=VALUE]...\n"
      "                       [--depth N] IN OUT\n\n"
      "Converts an HPROF profile (java.hprof.txt from format=a, java.hprof from "
      "format=b)\nto another viewer's format. OUT '-' is stdout.\n\n"
      "  --to F        collapsed: folded stacks 'a;b;c N' (FlameGraph, speedscope, "
      "Perfetto)\n"
      "                pprof: profile.proto (gzipped when OUT ends in .gz)\n"
      "                speedscope: speedscope's JSON file format\n"
      "                html: one self-contained page with interactive flame graphs\n"
      "  --measure M   what to weigh stacks by (repeatable; collapsed takes one):\n"
      "                cpu-samples, cpu-calls, cpu-time, alloc-bytes, alloc-objects,\n"
      "                live-bytes, live-objects, monitor-time. Default: every measure\n"
      "                the profile has (collapsed: the first of them)\n"
      "  --threads     collapsed: each stack's thread as its root frame\n"
      "  --diff BASE   compare IN (after) with the profile BASE (before), one measure\n"
      "                (default: the first CPU measure both have):\n"
      "                collapsed: 'a;b;c BEFORE AFTER' per stack (FlameGraph's\n"
      "                difffolded.pl format), BEFORE scaled to AFTER's total\n"
      "                html: a differential flame graph (widths of IN, colour by the\n"
      "                change of each frame's self share) and a table of changes\n"
      "  --context LABEL=VALUE  html: a line under the page's title (repeatable), e.g.\n"
      "                'program=demo.DemoApp 12' 'JVM=OpenJDK 17.0.15'\n"
      "  --depth N     html: HPROF ran with depth=N; stacks of N frames were cut there and\n"
      "                are drawn under a '[truncated at depth N]' frame, not as roots\n");
}

// --diff: BASE (before) against IN (after), one measure.
int run_diff(const std::string& base_path, const std::string& in, const std::string& out_path,
             const std::string& to, const std::vector<profiles::Measure>& measures, bool threads) {
  if (to != "collapsed" && to != "html") {
    std::fprintf(stderr, "jvmprof convert: --diff takes --to collapsed or --to html\n");
    return 2;
  }
  if (measures.size() > 1) {
    std::fprintf(stderr, "jvmprof convert: --diff compares one measure\n");
    return 2;
  }
  profiles::JavaProfile base, target;
  try {
    base = profiles::read_profile(base_path);
    target = profiles::read_profile(in);
  } catch (const profiles::ProfileError& e) {
    std::fprintf(stderr, "jvmprof convert: %s\n", e.what());
    return 1;
  }
  std::optional<profiles::Measure> m;
  if (!measures.empty()) {
    m = measures[0];
  } else {
    for (auto c : profiles::available_measures(target))
      if (!m && profiles::has_measure(base, c)) m = c;
  }
  if (!m || !profiles::has_measure(base, *m) || !profiles::has_measure(target, *m)) {
    std::fprintf(stderr, "jvmprof convert: %s and %s have no measure in common%s\n",
                 base_path.c_str(), in.c_str(),
                 m ? (" (" + std::string(profiles::measure_name(*m)) + ")").c_str() : "");
    return 1;
  }
  auto base_name = [](const std::string& path) {
    const size_t slash = path.find_last_of('/');
    return path.substr(slash == std::string::npos ? 0 : slash + 1);
  };
  const std::string out =
      to == "collapsed"
          ? profiles::to_diff_collapsed(profiles::stacks(base, *m, threads),
                                        profiles::stacks(target, *m, threads))
          : profiles::to_diff_html(base, target, *m, base_name(base_path), base_name(in));
  if (!write_output(out_path, out, false)) {
    std::fprintf(stderr, "jvmprof convert: cannot write %s: %s\n", out_path.c_str(),
                 std::strerror(errno));
    return 1;
  }
  return 0;
}

}  // namespace

int run_convert(std::span<char* const> args) {
  std::string to;
  std::vector<profiles::Measure> measures;
  bool threads = false;
  std::string diff_base;
  profiles::HtmlOptions html_options;
  std::vector<std::string> files;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string a = args[i];
    if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    } else if ((a == "--to" || a == "--measure") && i + 1 < args.size()) {
      const std::string v = args[++i];
      if (a == "--to") {
        to = v;
      } else {
        auto m = profiles::parse_measure(v);
        if (!m) {
          std::fprintf(stderr, "jvmprof convert: unknown measure '%s' (see --help)\n", v.c_str());
          return 2;
        }
        measures.push_back(*m);
      }
    } else if (a == "--diff" && i + 1 < args.size()) {
      diff_base = args[++i];
    } else if (a == "--context" && i + 1 < args.size()) {
      const std::string v = args[++i];
      const size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0) {
        std::fprintf(stderr, "jvmprof convert: --context takes LABEL=VALUE, not '%s'\n", v.c_str());
        return 2;
      }
      html_options.context.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    } else if (a == "--depth" && i + 1 < args.size()) {
      const std::string v = args[++i];
      char* end = nullptr;
      const unsigned long depth = std::strtoul(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || depth == 0 || depth > 100000) {
        std::fprintf(stderr, "jvmprof convert: --depth takes a positive number, not '%s'\n",
                     v.c_str());
        return 2;
      }
      html_options.cut_depth = depth;
    } else if (a == "--threads") {
      threads = true;
    } else if (a.size() > 1 && a[0] == '-' && a != "-") {
      std::fprintf(stderr, "jvmprof convert: unknown or incomplete option '%s' (see --help)\n",
                   a.c_str());
      return 2;
    } else {
      files.push_back(a);
    }
  }
  if (to != "collapsed" && to != "pprof" && to != "speedscope" && to != "html") {
    std::fprintf(stderr, "jvmprof convert: --to must be collapsed, pprof, speedscope or html\n");
    return 2;
  }
  if (files.size() != 2) {
    std::fprintf(stderr, "jvmprof convert: expected IN and OUT (see --help)\n");
    return 2;
  }
  if (to == "collapsed" && measures.size() > 1) {
    std::fprintf(stderr, "jvmprof convert: collapsed stacks hold one measure\n");
    return 2;
  }
  if (!diff_base.empty()) return run_diff(diff_base, files[0], files[1], to, measures, threads);
  profiles::JavaProfile profile;
  try {
    profile = profiles::read_profile(files[0]);
  } catch (const profiles::ProfileError& e) {
    std::fprintf(stderr, "jvmprof convert: %s\n", e.what());
    return 1;
  }
  for (profiles::Measure m : measures) {
    if (!profiles::has_measure(profile, m)) {
      std::fprintf(stderr, "jvmprof convert: %s has no data for %s\n", files[0].c_str(),
                   std::string(profiles::measure_name(m)).c_str());
      return 1;
    }
  }
  if (measures.empty()) measures = profiles::available_measures(profile);
  if (measures.empty()) {
    std::fprintf(stderr,
                 "jvmprof convert: %s holds no CPU SAMPLES, CPU TIME, SITES or MONITOR TIME "
                 "section\n",
                 files[0].c_str());
    return 1;
  }
  std::string out;
  if (to == "collapsed") {
    out = profiles::to_collapsed(profiles::stacks(profile, measures[0], threads));
  } else if (to == "pprof") {
    out = profiles::to_pprof(profile, measures);
  } else if (to == "speedscope") {
    out = profiles::to_speedscope(profile, measures);
  } else {
    const size_t slash = files[0].find_last_of('/');
    out = profiles::to_html(
        profile, measures,
        "jvmprof: " + files[0].substr(slash == std::string::npos ? 0 : slash + 1), html_options);
  }
  const bool gzip =
      to == "pprof" && files[1].size() > 3 && files[1].compare(files[1].size() - 3, 3, ".gz") == 0;
  if (!write_output(files[1], out, gzip)) {
    std::fprintf(stderr, "jvmprof convert: cannot write %s: %s\n", files[1].c_str(),
                 std::strerror(errno));
    return 1;
  }
  return 0;
}

}  // namespace jvmprof
