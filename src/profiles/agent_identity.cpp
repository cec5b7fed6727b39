// SPDX-License-Identifier: Apache-2.0
// The IDENTITY report of HPROF under net=: "pid=P host=H main=M vm=V start=MS labels=k=v;k2=v2",
// each value with '%', spaces and control characters as %XX.
#include <string>

#include "profiles.h"

namespace profiles {
namespace {

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool unescape(std::string_view in, std::string& out) {
  out.clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out += in[i];
      continue;
    }
    if (i + 2 >= in.size()) return false;
    const int hi = hex(in[i + 1]), lo = hex(in[i + 2]);
    if (hi < 0 || lo < 0) return false;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return true;
}

}  // namespace

bool parse_agent_identity(std::string_view text, JavaProfile& p) {
  constexpr size_t kMaxWords = 16, kMaxWord = 4096;
  std::map<std::string, std::string> identity;
  size_t words = 0;
  while (!text.empty()) {
    const size_t space = text.find(' ');
    const std::string_view word = text.substr(0, space);
    text.remove_prefix(space == std::string_view::npos ? text.size() : space + 1);
    if (word.empty()) continue;
    const size_t eq = word.find('=');
    if (eq == 0 || eq == std::string_view::npos || ++words > kMaxWords || word.size() > kMaxWord)
      return false;
    std::string value;
    if (!unescape(word.substr(eq + 1), value)) return false;
    identity[std::string(word.substr(0, eq))] = value == "-" ? std::string() : value;
  }
  if (!identity.count("pid")) return false;
  p.agent_identity = std::move(identity);
  p.agent_labels.clear();
  std::string_view labels = p.agent_identity["labels"];
  while (!labels.empty()) {
    const size_t semi = labels.find(';');
    const std::string_view pair = labels.substr(0, semi);
    labels.remove_prefix(semi == std::string_view::npos ? labels.size() : semi + 1);
    const size_t eq = pair.find('=');
    if (eq == 0 || eq == std::string_view::npos) continue;
    p.agent_labels[std::string(pair.substr(0, eq))] = std::string(pair.substr(eq + 1));
  }
  ++p.identity_reports;
  return true;
}

}  // namespace profiles
