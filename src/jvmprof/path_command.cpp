// SPDX-License-Identifier: Apache-2.0
// jvmprof path DUMP OBJECT: shortest paths from GC roots to an object.
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "heap_cli.h"
#include "heap_commands.h"

namespace jvmprof {

namespace {

const HeapCommand kCommand{
    "path", "DUMP OBJECT-ID",
    "Shortest paths from GC roots to the object, over strong references only, one per\n"
    "distinct referrer of the object, shortest first. The id is hexadecimal, as every jvmprof\n"
    "command prints ids, with or without 0x (0x7f0012a8 and 7f0012a8 are the same object);\n"
    "there is no decimal form.",
    kPaths, 2};

int run(const HeapArgs& args) {
  const std::string& text = args.positional[1];
  // One form only: hexadecimal (a hex id pasted without 0x must not be read as decimal).
  const bool prefixed = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const std::string digits = prefixed ? text.substr(2) : text;
  errno = 0;
  char* end = nullptr;
  unsigned long long id = std::strtoull(digits.c_str(), &end, 16);
  if (errno != 0 || digits.empty() || end != digits.c_str() + digits.size() ||
      !std::isxdigit(static_cast<unsigned char>(digits[0]))) {
    std::fprintf(stderr,
                 "jvmprof path: '%s' is not an object id (hexadecimal, as jvmprof prints ids; "
                 "see jvmprof path --help)\n",
                 text.c_str());
    return 2;
  }
  auto dump = open_dump(kCommand, args.positional[0], args);
  if (!dump) return 1;
  auto object = dump->object(id);
  if (!object) {
    std::fprintf(stderr, "jvmprof path: no object %s in %s (the id is read as hexadecimal)\n",
                 hex_id(id).c_str(), args.positional[0].c_str());
    return 1;
  }
  auto paths = dump->paths_to(id, args.paths);
  if (args.json) {
    Json list = Json::array();
    for (const auto& p : paths) list.push_back(path_json(p));
    Json j{{"dump", args.positional[0]},
           {"object", object_json(*object)},
           {"reachable", !paths.empty()},
           {"paths", std::move(list)}};
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("object %s %s (shallow %llu, retained %llu)\n", object->class_name.c_str(),
              hex_id(object->id).c_str(), static_cast<unsigned long long>(object->shallow_bytes),
              static_cast<unsigned long long>(object->retained_bytes));
  if (paths.empty()) {
    std::printf("not reachable from any GC root over strong references\n");
    return 0;
  }
  for (size_t i = 0; i < paths.size(); ++i) {
    std::printf("\npath %zu (%zu steps):\n", i + 1, paths[i].size() - 1);
    print_path(paths[i], "  ");
  }
  return 0;
}

}  // namespace

int run_path(std::span<char* const> args) {
  return run_heap_command(kCommand, args, run);
}

}  // namespace jvmprof
