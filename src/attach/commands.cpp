// SPDX-License-Identifier: Apache-2.0
// The attach commands jvmprof uses, with their replies read as the JDK's client reads them.
#include <cstdlib>
#include <string>

#include "attach.h"

namespace attach {
namespace {

std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.empty()) return "no message";
  return line;
}

}  // namespace

int load_agent(const Target& target, const std::string& library, const std::string& options,
               const Timeouts& timeouts) {
  // HotSpot's protocol version 1 limits each argument to 1024 bytes.
  if (library.size() > 1024 || options.size() > 1024)
    throw AttachError("an agent path or option string longer than 1024 bytes cannot be sent");
  const Reply r = execute(target, "load", {library, "true", options}, timeouts);
  if (r.code != 0)
    throw AttachError("JVM " + std::to_string(target.pid) + " could not load " + library + ": " +
                      first_line(r.text));
  // JDK 17 answers Agent_OnAttach's result as a bare number, later JDKs as "return code: N".
  std::string text = first_line(r.text);
  constexpr std::string_view kPrefix = "return code: ";
  if (text.starts_with(kPrefix)) text.erase(0, kPrefix.size());
  char* end = nullptr;
  const long result = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0')
    throw AttachError("JVM " + std::to_string(target.pid) + " loaded " + library +
                      " but gave no result: " + text);
  return static_cast<int>(result);
}

std::string diagnostic_command(const Target& target, const std::string& command_line,
                               const Timeouts& timeouts) {
  if (command_line.size() > 1024)
    throw AttachError("a diagnostic command longer than 1024 bytes cannot be sent");
  const Reply r = execute(target, "jcmd", {command_line}, timeouts);
  if (r.code != 0)
    throw AttachError("JVM " + std::to_string(target.pid) + ": " +
                      command_line.substr(0, command_line.find(' ')) +
                      " failed: " + first_line(r.text));
  return r.text;
}

}  // namespace attach
