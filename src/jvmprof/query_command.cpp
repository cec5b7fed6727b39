// SPDX-License-Identifier: Apache-2.0
// jvmprof query: every period of every matching JVM in a time range of a profile store, merged
// into one profile and written as HTML, collapsed stacks, pprof or speedscope JSON; with
// --diff-from/--diff-to, a differential flame graph of that range against another.
#include "query_command.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "convert_command.h"
#include "profiles.h"
#include "store.h"

namespace jvmprof {
namespace {

void usage(std::FILE* out) {
  std::fprintf(
      out,
      "usage: jvmprof query [--store S] [--from T1] [--to T2] [--match KEY=VALUE]...\n"
      "                     [--measure M] [--diff-from T3 --diff-to T4] -o OUT\n"
      "       jvmprof query [--store S] --jvms [--connections]\n\n"
      "Merges every stored period of every matching JVM that starts in [T1, T2) into one\n"
      "profile. OUT's name says its format: .html (flame graph), .collapsed (folded stacks),\n"
      ".pb.gz or .pb (pprof), .json (speedscope); '-' writes collapsed stacks to stdout.\n\n"
      "  --store S          a SQLite file or a postgresql:// URI (default:\n"
      "                     $XDG_DATA_HOME/jvmprof/profiles.db)\n"
      "  --from T1, --to T2 RFC 3339 ('2026-11-27T14:00:00Z'), relative to now ('-1h',\n"
      "                     '-30m', '-2d', 'now') or ms since the epoch (default: -1h, now)\n"
      "  --match KEY=VALUE  only JVMs with this label (repeatable: all must hold)\n"
      "  --measure M        cpu-samples (default), cpu-calls, cpu-time, alloc-bytes,\n"
      "                     alloc-objects, live-bytes, live-objects, monitor-time\n"
      "  --diff-from T3, --diff-to T4\n"
      "                     compare [T1, T2) (after) with [T3, T4) (before): .html gives\n"
      "                     a differential flame graph, .collapsed 'a;b;c BEFORE AFTER'\n"
      "  --jvms             list the stored JVMs with their labels and time ranges\n"
      "  --connections      with --jvms: under each JVM its connections to collectors\n"
      "                     (serve --store; the newest 100), ended or not\n");
}

std::string rfc3339(int64_t ms) {
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "  connection N  FROM .. TO  CAUSE, P periods, B bytes, D events dropped  (collector C)".
void print_connection(const store::Connection& c) {
  const std::string end = c.ended_ms == 0 ? std::string("(no end recorded)") : rfc3339(c.ended_ms);
  const std::string how = c.ended_ms == 0
                              ? std::string("not ended, or its collector stopped first")
                              : c.end_cause + ", " + std::to_string(c.periods) + " periods, " +
                                    std::to_string(c.bytes) + " bytes, " +
                                    std::to_string(c.dropped_events) + " events dropped in all";
  std::printf("  connection %lld  %s .. %s  %s  (collector %s)\n",
              static_cast<long long>(c.connection), rfc3339(c.connected_ms).c_str(), end.c_str(),
              how.c_str(), c.collector.c_str());
}

int list_jvms(store::ProfileStore& s, bool with_connections) {
  const auto stored = s.jvms();
  std::vector<store::Connection> connections;
  if (with_connections) {
    std::vector<store::JvmIdentity> ids;
    for (const auto& j : stored) ids.push_back(j.identity);
    connections = s.connections(ids, 100);
  }
  size_t next = 0;  // connections come JVM by JVM, in the order asked
  for (const auto& j : stored) {
    std::string labels;
    for (const auto& [k, v] : j.identity.labels)
      labels += (labels.empty() ? "" : ",") + k + "=" + v;
    std::printf("%s pid %lld %s (JVM %s) %s .. %s, %llu periods%s%s\n", j.identity.host.c_str(),
                static_cast<long long>(j.identity.pid), j.identity.main.c_str(),
                j.identity.jvm_version.c_str(), rfc3339(j.first_ms).c_str(),
                rfc3339(j.last_ms).c_str(), static_cast<unsigned long long>(j.periods),
                labels.empty() ? "" : " ", labels.c_str());
    for (; next < connections.size() && connections[next].jvm.host == j.identity.host &&
           connections[next].jvm.pid == j.identity.pid &&
           connections[next].jvm.start_ms == j.identity.start_ms;
         ++next)
      print_connection(connections[next]);
  }
  return 0;
}

}  // namespace

int run_query(std::span<char* const> args) {
  std::string store_location, out, from = "-1h", to = "now", diff_from, diff_to;
  std::vector<store::LabelMatcher> match;
  profiles::Measure measure = profiles::Measure::kCpuSamples;
  bool jvms = false, with_connections = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string a = args[i];
    const bool has_value = i + 1 < args.size();
    if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    } else if (a == "--jvms") {
      jvms = true;
    } else if (a == "--connections") {
      with_connections = true;
    } else if (a == "--store" && has_value) {
      store_location = args[++i];
    } else if ((a == "-o" || a == "--output") && has_value) {
      out = args[++i];
    } else if (a == "--from" && has_value) {
      from = args[++i];
    } else if (a == "--to" && has_value) {
      to = args[++i];
    } else if (a == "--diff-from" && has_value) {
      diff_from = args[++i];
    } else if (a == "--diff-to" && has_value) {
      diff_to = args[++i];
    } else if (a == "--match" && has_value) {
      auto m = store::parse_matcher(args[++i]);
      if (!m) {
        std::fprintf(stderr, "jvmprof query: --match takes KEY=VALUE, not '%s'\n", args[i]);
        return 2;
      }
      match.push_back(*m);
    } else if (a == "--measure" && has_value) {
      auto m = profiles::parse_measure(args[++i]);
      if (!m) {
        std::fprintf(stderr, "jvmprof query: unknown measure '%s' (see --help)\n", args[i]);
        return 2;
      }
      measure = *m;
    } else {
      std::fprintf(stderr, "jvmprof query: unknown or incomplete option '%s' (see --help)\n",
                   a.c_str());
      return 2;
    }
  }
  const int64_t now = profiles::wall_clock_ms();
  auto when = [&](const std::string& text, const char* option, int64_t& ms) {
    auto t = store::parse_time(text, now);
    if (!t) {
      std::fprintf(stderr,
                   "jvmprof query: %s takes an RFC 3339 time, '-1h' or ms since the epoch, not "
                   "'%s'\n",
                   option, text.c_str());
      return false;
    }
    ms = *t;
    return true;
  };
  store::Query q, base;
  q.match = base.match = match;
  q.measure = base.measure = measure;
  if (!when(from, "--from", q.from_ms) || !when(to, "--to", q.to_ms)) return 2;
  const bool diff = !diff_from.empty() || !diff_to.empty();
  if (diff && (diff_from.empty() || diff_to.empty())) {
    std::fprintf(stderr, "jvmprof query: --diff-from and --diff-to go together\n");
    return 2;
  }
  if (diff &&
      (!when(diff_from, "--diff-from", base.from_ms) || !when(diff_to, "--diff-to", base.to_ms)))
    return 2;
  if (q.from_ms >= q.to_ms || (diff && base.from_ms >= base.to_ms)) {
    std::fprintf(stderr, "jvmprof query: a range's start must come before its end\n");
    return 2;
  }
  const bool html = ends_with(out, ".html"), collapsed = ends_with(out, ".collapsed") || out == "-";
  const bool pprof = ends_with(out, ".pb.gz") || ends_with(out, ".pb");
  const bool json = ends_with(out, ".json");
  if (with_connections && !jvms) {
    std::fprintf(stderr, "jvmprof query: --connections goes with --jvms\n");
    return 2;
  }
  if (!jvms && !html && !collapsed && !pprof && !json) {
    std::fprintf(stderr,
                 "jvmprof query: -o OUT must end in .html, .collapsed, .pb.gz, .pb or .json "
                 "(see --help)\n");
    return 2;
  }
  if (diff && !html && !collapsed) {
    std::fprintf(stderr, "jvmprof query: a diff is written as .html or .collapsed\n");
    return 2;
  }
  try {
    if (store_location.empty()) store_location = store::default_store_path();
    auto s = store::open_store(store_location);
    if (jvms) return list_jvms(*s, with_connections);
    const auto stacks = s->query(q);
    const std::string name = std::string(profiles::measure_name(measure));
    const std::string range = rfc3339(q.from_ms) + " .. " + rfc3339(q.to_ms);
    if (stacks.empty())
      std::fprintf(stderr, "jvmprof query: no %s in %s between %s\n", name.c_str(),
                   store_location.c_str(), range.c_str());
    const auto profile = store::profile_from_stacks(measure, stacks, store_location);
    std::string bytes;
    if (diff) {
      const auto base_stacks = s->query(base);
      const std::string base_range = rfc3339(base.from_ms) + " .. " + rfc3339(base.to_ms);
      bytes = html ? profiles::to_diff_html(
                         store::profile_from_stacks(measure, base_stacks, store_location), profile,
                         measure, base_range, range)
                   : profiles::to_diff_collapsed(base_stacks, stacks);
    } else if (collapsed) {
      bytes = profiles::to_collapsed(stacks);
    } else if (pprof) {
      bytes = profiles::to_pprof(profile, {measure});
    } else if (json) {
      bytes = profiles::to_speedscope(profile, {measure});
    } else {
      profiles::HtmlOptions options;
      options.context = {{"store", s->describe()}, {"range", range}};
      std::string labels;
      for (const auto& m : match) labels += (labels.empty() ? "" : ", ") + m.key + "=" + m.value;
      if (!labels.empty()) options.context.emplace_back("labels", labels);
      bytes = profiles::to_html(profile, {measure}, "jvmprof: " + name + " " + range, options);
    }
    if (!write_output(out, bytes, ends_with(out, ".gz"))) {
      std::fprintf(stderr, "jvmprof query: cannot write %s: %s\n", out.c_str(),
                   std::strerror(errno));
      return 1;
    }
  } catch (const store::StoreError& e) {
    std::fprintf(stderr, "jvmprof query: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace jvmprof
