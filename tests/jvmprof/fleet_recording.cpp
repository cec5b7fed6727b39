// SPDX-License-Identifier: Apache-2.0
// Reads a recorded format=a stream and writes it back as another JVM's (fleet_recording.h).
#include "fleet_recording.h"

#include <fstream>
#include <iterator>
#include <string_view>

namespace fleet {
namespace {

constexpr std::string_view kBegin = "PERIOD BEGIN: ";
constexpr std::string_view kEnd = "PERIOD END: ";
constexpr std::string_view kIdentity = "IDENTITY: ";

// "seq=S start=A end=B": S, or empty when the line is not that.
std::string begin_seq(std::string_view rest) {
  if (!rest.starts_with("seq=")) return {};
  rest.remove_prefix(4);
  const size_t space = rest.find(' ');
  const std::string_view seq = rest.substr(0, space);
  if (seq.empty() || seq.find_first_not_of("0123456789") != std::string_view::npos) return {};
  rest.remove_prefix(space == std::string_view::npos ? rest.size() : space);
  return rest.starts_with(" start=") && rest.find(" end=") != std::string_view::npos
             ? std::string(seq)
             : std::string();
}

}  // namespace

bool read_recording(const std::string& path, Recording& out, std::string& why) {
  out = {};
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    why = "cannot read " + path;
    return false;
  }
  const std::string data{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (!data.starts_with("JAVA PROFILE ")) {
    why = path + " is not a stream in HPROF's text format (format=a)";
    return false;
  }
  enum class Part { kHead, kHello, kRecords, kBlock } part = Part::kHead;
  std::string records, block_seq;
  size_t block_from = 0;  // where the current block's body starts in `data`
  for (size_t at = 0; at < data.size();) {
    const size_t nl = data.find('\n', at);
    if (nl == std::string::npos) break;  // a last line cut off by the end of the recording
    const std::string_view line(data.data() + at, nl - at);
    const std::string_view whole(data.data() + at, nl + 1 - at);
    at = nl + 1;
    if (part == Part::kBlock) {
      if (line.starts_with(kEnd)) {
        out.periods.push_back(
            {std::move(records), block_seq, data.substr(block_from, at - block_from)});
        records.clear();
        part = Part::kRecords;
      }
      continue;
    }
    if (line.starts_with(kBegin)) {
      if (part == Part::kHead) {
        why = path + ": a PERIOD block before the IDENTITY line (not recorded with net=)";
        return false;
      }
      block_seq = begin_seq(line.substr(kBegin.size()));
      if (block_seq.empty()) {
        why = path + ": bad PERIOD BEGIN line: " + std::string(line);
        return false;
      }
      block_from = at;
      part = Part::kBlock;
      continue;
    }
    if (part != Part::kHead && line.starts_with(kIdentity)) {
      // A second hello (a reconnect): replayed, it would make every agent the recorded JVM.
      why = path + ": a second IDENTITY line (record one connection only)";
      return false;
    }
    if (line.starts_with(kIdentity)) {
      std::string_view words = line.substr(kIdentity.size());
      while (!words.empty()) {
        const size_t space = words.find(' ');
        const std::string_view w = words.substr(0, space);
        words.remove_prefix(space == std::string_view::npos ? words.size() : space + 1);
        const size_t eq = w.find('=');
        if (eq == 0 || eq == std::string_view::npos) continue;
        out.identity.emplace_back(std::string(w.substr(0, eq)), std::string(w.substr(eq + 1)));
      }
      part = Part::kHello;
      continue;
    }
    (part == Part::kHead    ? out.head
     : part == Part::kHello ? out.rest_of_hello
                            : records)
        .append(whole);
  }
  if (part == Part::kHead) {
    why = path + ": no IDENTITY line (not recorded with net=)";
    return false;
  }
  return true;
}

std::string replay_hello(const Recording& r,
                         const std::vector<std::pair<std::string, std::string>>& own) {
  auto words = r.identity;
  for (const auto& [key, value] : own) {
    bool found = false;
    for (auto& w : words) {
      if (w.first == key) {
        w.second = value;
        found = true;
      }
    }
    if (!found) words.emplace_back(key, value);
  }
  std::string s = r.head + std::string(kIdentity);
  for (size_t i = 0; i < words.size(); ++i)
    s += (i ? " " : "") + words[i].first + "=" + words[i].second;
  return s + "\n" + r.rest_of_hello;
}

std::string replay_period(const Recording& r, size_t k, int64_t start_ms, int64_t end_ms) {
  const RecordedPeriod& p = r.periods[k];
  return p.records + std::string(kBegin) + "seq=" + p.seq + " start=" + std::to_string(start_ms) +
         " end=" + std::to_string(end_ms) + "\n" + p.body;
}

}  // namespace fleet
