// SPDX-License-Identifier: Apache-2.0
#include "heap_cli.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace jvmprof {

namespace {

void print_help(const HeapCommand& c, std::FILE* out) {
  std::fprintf(out, "usage: jvmprof %s [OPTIONS] %s\n\n%s\n\noptions:\n", c.name, c.usage,
               c.describe);
  std::fprintf(out, "  --json          machine-readable output\n");
  if (c.options & kTop)
    std::fprintf(out, "  --top N         list at most N entries (default 20)\n");
  if (c.options & kPaths) std::fprintf(out, "  --paths N       show at most N paths (default 3)\n");
  if (c.options & kThreshold)
    std::fprintf(out,
                 "  --threshold P   report what retains at least P%% of the heap (default 10)\n");
  if (c.options & kFlat)
    std::fprintf(out,
                 "  --flat          list every object apart (by default an object and the chain\n"
                 "                  of single-child dominators below it are one entry)\n");
  std::fprintf(out,
               "  --index-dir DIR write the index file in DIR, not beside the dump\n"
               "  --no-index      neither reuse nor write the index file DUMP.jvmprof-index\n"
               "  --help          this text\n");
}

bool parse_number(const char* text, double min, double max, double* out) {
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !(v >= min && v <= max)) return false;
  *out = v;
  return true;
}

}  // namespace

bool parse_heap_args(const HeapCommand& c, std::span<char* const> args, HeapArgs& out,
                     int* exit_code) {
  auto bad = [&](const std::string& why) {
    std::fprintf(stderr, "jvmprof %s: %s (see jvmprof %s --help)\n", c.name, why.c_str(), c.name);
    *exit_code = 2;
    return false;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    auto value = [&](double min, double max, double* v) {
      if (i + 1 >= args.size()) return false;
      return parse_number(args[++i], min, max, v);
    };
    double v = 0;
    if (a == "--help" || a == "-h") {
      print_help(c, stdout);
      *exit_code = 0;
      return false;
    } else if (a == "--json") {
      out.json = true;
    } else if (a == "--no-index") {
      out.use_index = false;
    } else if (a == "--index-dir") {
      if (i + 1 >= args.size() || args[i + 1][0] == '\0')
        return bad("--index-dir needs a directory");
      out.index_dir = args[++i];
    } else if (a == "--flat" && (c.options & kFlat)) {
      out.flat = true;
    } else if (a == "--top" && (c.options & kTop)) {
      if (!value(1, 1e9, &v) || v != static_cast<uint64_t>(v))
        return bad("--top needs a count >= 1");
      out.top = static_cast<uint64_t>(v);
    } else if (a == "--paths" && (c.options & kPaths)) {
      if (!value(1, 1e6, &v) || v != static_cast<uint64_t>(v))
        return bad("--paths needs a count >= 1");
      out.paths = static_cast<uint64_t>(v);
    } else if (a == "--threshold" && (c.options & kThreshold)) {
      if (!value(0.01, 100, &v)) return bad("--threshold needs a percentage in (0, 100]");
      out.threshold = v / 100;
    } else if (a.size() > 1 && a[0] == '-') {
      return bad("unknown option " + a);
    } else {
      out.positional.push_back(a);
    }
  }
  if (out.positional.size() != c.positional) return bad(std::string("expected ") + c.usage);
  return true;
}

std::unique_ptr<analysis::HeapDump> open_dump(const HeapCommand& c, const std::string& path,
                                              const HeapArgs& args) {
  try {
    analysis::OpenOptions options;
    options.use_index_file = args.use_index;
    options.index_dir = args.index_dir;
    options.progress = true;
    options.on_notice = [&c](const std::string& line) {
      std::fprintf(stderr, "jvmprof %s: %s\n", c.name, line.c_str());
    };
    auto dump = analysis::HeapDump::open(path, options);
    // Damage never goes unsaid, whatever the command prints.
    const std::string warning = dump->summary().damage_warning;
    if (!warning.empty())
      std::fprintf(stderr, "jvmprof %s: %s: warning: %s\n", c.name, path.c_str(), warning.c_str());
    return dump;
  } catch (const analysis::Error& e) {
    std::fprintf(stderr, "jvmprof %s: %s\n", c.name, e.what());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "jvmprof %s: %s: out of memory\n", c.name, path.c_str());
  }
  return nullptr;
}

int run_heap_command(const HeapCommand& command, std::span<char* const> args,
                     const std::function<int(const HeapArgs&)>& body) {
  HeapArgs parsed;
  int code = 0;
  if (!parse_heap_args(command, args, parsed, &code)) return code;
  try {
    return body(parsed);
  } catch (const analysis::Error& e) {
    std::fprintf(stderr, "jvmprof %s: %s\n", command.name, e.what());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "jvmprof %s: out of memory\n", command.name);
  }
  return 1;
}

std::string hex_id(uint64_t id) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(id));
  return buf;
}

Json object_json(const analysis::ObjectInfo& o) {
  return Json{{"id", hex_id(o.id)},
              {"class", o.class_name},
              {"shallow_bytes", o.shallow_bytes},
              {"retained_bytes", o.retained_bytes}};
}

Json path_json(const analysis::RootPath& path) {
  Json steps = Json::array();
  for (const auto& s : path) {
    Json j = object_json(s.object);
    j["via"] = s.via;
    steps.push_back(std::move(j));
  }
  return steps;
}

void print_path(const analysis::RootPath& path, const char* indent) {
  for (size_t i = 0; i < path.size(); ++i) {
    const auto& s = path[i];
    std::printf("%s%*s%s %s %s (shallow %llu, retained %llu)\n", indent, static_cast<int>(2 * i),
                "", i == 0 ? ("[" + s.via + "]").c_str() : ("." + s.via + " ->").c_str(),
                s.object.class_name.c_str(), hex_id(s.object.id).c_str(),
                static_cast<unsigned long long>(s.object.shallow_bytes),
                static_cast<unsigned long long>(s.object.retained_bytes));
  }
}

}  // namespace jvmprof
