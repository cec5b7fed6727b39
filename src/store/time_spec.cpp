// SPDX-License-Identifier: Apache-2.0
// Times and durations as users write them on the command line and in the UI's URLs, and the
// default store's place.
#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "store.h"

namespace store {
namespace {

bool parse_int(std::string_view s, int64_t& out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// RFC 3339: YYYY-MM-DD(T| )hh:mm:ss[.fraction](Z|+hh:mm|-hh:mm).
std::optional<int64_t> parse_rfc3339(std::string_view s) {
  auto num = [&](size_t at, size_t len, int64_t& out) {
    return at + len <= s.size() && parse_int(s.substr(at, len), out);
  };
  int64_t y, mo, d, h, mi, sec;
  if (!num(0, 4, y) || s.size() < 20 || s[4] != '-' || !num(5, 2, mo) || s[7] != '-' ||
      !num(8, 2, d) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || !num(11, 2, h) ||
      s[13] != ':' || !num(14, 2, mi) || s[16] != ':' || !num(17, 2, sec))
    return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return std::nullopt;
  size_t at = 19;
  int64_t ms = 0;
  if (s[at] == '.') {
    size_t digits = 0;
    for (++at; at < s.size() && s[at] >= '0' && s[at] <= '9'; ++at, ++digits)
      if (digits < 3) ms = ms * 10 + (s[at] - '0');
    if (digits == 0) return std::nullopt;
    for (; digits < 3; ++digits) ms *= 10;
  }
  int64_t offset_min = 0;
  const std::string_view zone = s.substr(at);
  if (zone == "Z" || zone == "z") {
  } else if (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':') {
    int64_t oh, om;
    if (!parse_int(zone.substr(1, 2), oh) || !parse_int(zone.substr(4, 2), om)) return std::nullopt;
    offset_min = (zone[0] == '+' ? 1 : -1) * (oh * 60 + om);
  } else {
    return std::nullopt;
  }
  const int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
  return (secs - offset_min * 60) * 1000 + ms;
}

}  // namespace

std::optional<int64_t> parse_duration(std::string_view text) {
  static const std::pair<std::string_view, int64_t> units[] = {
      {"ms", 1},        {"s", 1000},       {"m", 60'000},
      {"h", 3'600'000}, {"d", 86'400'000}, {"w", 604'800'000}};
  for (const auto& [suffix, scale] : units) {
    if (!text.ends_with(suffix)) continue;
    int64_t n;
    if (!parse_int(text.substr(0, text.size() - suffix.size()), n) || n < 0) continue;
    if (n > INT64_MAX / scale) return std::nullopt;
    return n * scale;
  }
  return std::nullopt;
}

std::optional<int64_t> parse_time(std::string_view text, int64_t now_ms) {
  if (text == "now") return now_ms;
  if (text.starts_with('-')) {
    const auto d = parse_duration(text.substr(1));
    if (!d) return std::nullopt;
    return now_ms - *d;
  }
  int64_t epoch_ms;
  if (parse_int(text, epoch_ms)) return epoch_ms;
  return parse_rfc3339(text);
}

std::string default_store_path() {
  std::string base;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg != nullptr && xdg[0] == '/') {
    base = xdg;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && home[0] != '\0') {
    base = std::string(home) + "/.local/share";
  } else {
    throw StoreError("no default store: neither XDG_DATA_HOME nor HOME is set (give --store)");
  }
  // mkdir -p of base/jvmprof; the directory is private, profiles name a program's internals.
  std::string dir = base + "/jvmprof";
  for (size_t at = 1; at <= dir.size(); ++at) {
    if (at < dir.size() && dir[at] != '/') continue;
    const std::string part = dir.substr(0, at);
    if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST)
      throw StoreError("cannot create " + part + ": " + std::strerror(errno));
  }
  return dir + "/profiles.db";
}

}  // namespace store
