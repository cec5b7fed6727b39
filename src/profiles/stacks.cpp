// SPDX-License-Identifier: Apache-2.0
// A profile's report rows as weighted root-first stacks, and the two text exports built straight
// from them: collapsed stacks and the flame-graph tree as JSON.
#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "profiles.h"

namespace profiles {
namespace {

struct MeasureInfo {
  Measure measure;
  std::string_view name, unit;
};
constexpr MeasureInfo kMeasures[] = {
    {Measure::kCpuSamples, "cpu-samples", "samples"},
    {Measure::kCpuCalls, "cpu-calls", "calls"},
    {Measure::kCpuTimeMs, "cpu-time", "ms"},
    {Measure::kAllocBytes, "alloc-bytes", "bytes"},
    {Measure::kAllocObjects, "alloc-objects", "objects"},
    {Measure::kLiveBytes, "live-bytes", "bytes"},
    {Measure::kLiveObjects, "live-objects", "objects"},
    {Measure::kMonitorTimeMs, "monitor-time", "ms"},
};

// A trace's frames root first; a missing trace becomes one frame naming it.
std::vector<std::string> root_first(const JavaProfile& p, uint32_t serial) {
  std::vector<std::string> out;
  const Trace* t = p.trace(serial);
  if (t == nullptr) {
    out.push_back("<unknown trace " + std::to_string(serial) + ">");
    return out;
  }
  for (auto it = t->frames.rbegin(); it != t->frames.rend(); ++it)
    out.push_back(normalized_method(frame_label(*it)));
  if (out.empty()) out.push_back("<empty trace>");
  return out;
}

void add_thread_root(const JavaProfile& p, Stack& s, uint32_t serial) {
  const Trace* t = p.trace(serial);
  s.thread = t == nullptr ? 0 : t->thread;
}

uint64_t share_of(const CostSection& c, const CostRow& r) {
  return static_cast<uint64_t>(std::llround(r.self_percent * static_cast<double>(c.total) / 100.0));
}

}  // namespace

std::string_view measure_name(Measure m) {
  for (const auto& i : kMeasures)
    if (i.measure == m) return i.name;
  return "?";
}

std::string_view measure_unit(Measure m) {
  for (const auto& i : kMeasures)
    if (i.measure == m) return i.unit;
  return "?";
}

std::optional<Measure> parse_measure(std::string_view name) {
  for (const auto& i : kMeasures)
    if (i.name == name) return i.measure;
  return std::nullopt;
}

bool has_measure(const JavaProfile& p, Measure m) {
  switch (m) {
    case Measure::kCpuSamples:
      return p.cpu_samples.has_value();
    case Measure::kCpuCalls:
    case Measure::kCpuTimeMs:
      return p.cpu_time.has_value();
    case Measure::kAllocBytes:
    case Measure::kAllocObjects:
    case Measure::kLiveBytes:
    case Measure::kLiveObjects:
      return p.sites.has_value();
    case Measure::kMonitorTimeMs:
      return p.monitor_time.has_value();
  }
  return false;
}

std::vector<Measure> available_measures(const JavaProfile& p) {
  std::vector<Measure> out;
  for (const auto& i : kMeasures)
    if (has_measure(p, i.measure)) out.push_back(i.measure);
  return out;
}

std::string frame_label(const Frame& f, bool with_lines) {
  if (!with_lines) return f.method;
  // Appended piece by piece: ":" + string makes GCC 12 at -O3 warn (a false -Wrestrict).
  std::string label = f.method;
  label += '(';
  label += f.source.empty() ? "<Unknown Source>" : f.source;
  if (f.line > 0) {
    label += ':';
    label += std::to_string(f.line);
  }
  label += ')';
  return label;
}

namespace {
bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_letter(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

// Where the run-specific part of a hidden class's name starts in `name[0, end)`, which holds a
// hidden class name up to its ".0x..." / "/0x..." suffix: "...$$Lambda$14" (JDK 17) or
// "...$$Lambda" (JDK 21 and later) drop to "...$$Lambda"; "...LambdaForm$MH" keeps its kind.
std::optional<size_t> hidden_class_cut(std::string_view name, size_t end) {
  constexpr std::string_view kLambda = "$$Lambda";
  size_t i = end;
  while (i > 0 && is_digit(name[i - 1])) --i;
  if (i < end && i > 0 && name[i - 1] == '$') {
    if (name.substr(0, i - 1).ends_with(kLambda)) return i - 1;
  }
  if (name.substr(0, end).ends_with(kLambda)) return end;
  i = end;
  while (i > 0 && is_letter(name[i - 1])) --i;
  if (i < end && name.substr(0, i).ends_with("LambdaForm$")) return end;
  return std::nullopt;
}
}  // namespace

std::string normalized_method(std::string_view method) {
  std::string out;
  size_t copied = 0;
  for (size_t at = method.find("0x"); at != std::string_view::npos;
       at = method.find("0x", at + 2)) {
    if (at == 0 || (method[at - 1] != '.' && method[at - 1] != '/')) continue;
    size_t hex_end = at + 2;
    while (hex_end < method.size() && is_hex(method[hex_end])) ++hex_end;
    if (hex_end == at + 2) continue;
    const auto cut = hidden_class_cut(method, at - 1);
    if (!cut || *cut < copied) continue;
    out.append(method.substr(copied, *cut - copied));
    copied = hex_end;
  }
  if (copied == 0) return std::string(method);
  out.append(method.substr(copied));
  return out;
}

std::string truncated_frame(size_t cut_depth) {
  return "[truncated at depth " + std::to_string(cut_depth) + "]";
}

std::vector<Stack> stacks(const JavaProfile& p, Measure m, bool thread_root) {
  std::vector<Stack> out;
  auto cost = [&](const std::optional<CostSection>& section, bool by_time, bool leaf_name) {
    if (!section) return;
    for (const CostRow& r : section->rows) {
      Stack s;
      s.weight = by_time ? share_of(*section, r) : r.count;
      if (s.weight == 0) continue;
      s.frames = root_first(p, r.trace);
      s.trace_frames = s.frames.size();
      if (leaf_name) s.frames.push_back(r.name);
      add_thread_root(p, s, r.trace);
      out.push_back(std::move(s));
    }
  };
  switch (m) {
    case Measure::kCpuSamples:
      cost(p.cpu_samples, false, false);
      break;
    case Measure::kCpuCalls:
      cost(p.cpu_time, false, false);
      break;
    case Measure::kCpuTimeMs:
      cost(p.cpu_time, true, false);
      break;
    case Measure::kMonitorTimeMs:
      cost(p.monitor_time, true, true);
      break;
    case Measure::kAllocBytes:
    case Measure::kAllocObjects:
    case Measure::kLiveBytes:
    case Measure::kLiveObjects:
      if (!p.sites) break;
      for (const Site& site : *p.sites) {
        Stack s;
        s.weight = m == Measure::kAllocBytes     ? site.alloc_bytes
                   : m == Measure::kAllocObjects ? site.alloc_objects
                   : m == Measure::kLiveBytes    ? site.live_bytes
                                                 : site.live_objects;
        if (s.weight == 0) continue;
        s.frames = root_first(p, site.trace);
        s.trace_frames = s.frames.size();
        s.frames.push_back(site.class_name);
        add_thread_root(p, s, site.trace);
        out.push_back(std::move(s));
      }
      break;
  }
  if (thread_root) {
    for (Stack& s : out) {
      std::string name = p.thread_name(s.thread);
      s.frames.insert(s.frames.begin(), s.thread == 0  ? std::string("all threads")
                                        : name.empty() ? "thread " + std::to_string(s.thread)
                                                       : "thread " + name);
    }
  }
  return out;
}

std::string to_collapsed(const std::vector<Stack>& stacks) {
  std::map<std::string, uint64_t> folded;
  for (const Stack& s : stacks) {
    std::string line;
    for (const std::string& f : s.frames) {
      if (!line.empty()) line.push_back(';');
      for (char c : f) line.push_back(c == ';' || c == '\n' || c == '\r' ? '_' : c);
    }
    folded[line] += s.weight;
  }
  std::string out;
  for (const auto& [line, weight] : folded) out += line + " " + std::to_string(weight) + "\n";
  return out;
}

namespace {
struct Node {
  uint64_t value = 0;
  std::map<std::string, Node> children;
};

nlohmann::json node_json(const std::string& name, const Node& n) {
  nlohmann::json j = {{"n", name}, {"v", n.value}};
  if (!n.children.empty()) {
    nlohmann::json c = nlohmann::json::array();
    for (const auto& [child_name, child] : n.children) c.push_back(node_json(child_name, child));
    j["c"] = std::move(c);
  }
  return j;
}
}  // namespace

std::string flame_json(const JavaProfile& p, Measure m, bool thread_root, size_t cut_depth) {
  Node root;
  const std::string truncated = truncated_frame(cut_depth);
  for (const Stack& s : stacks(p, m, thread_root)) {
    root.value += s.weight;
    Node* n = &root;
    // A cut stack goes under the marker, after its thread frame when there is one.
    const bool cut = cut_depth > 0 && s.trace_frames >= cut_depth;
    for (size_t i = 0; i < s.frames.size(); ++i) {
      const std::string& f = s.frames[i];
      if (cut && i == (thread_root ? 1 : 0)) {
        n = &n->children[truncated];
        n->value += s.weight;
      }
      n = &n->children[f];
      n->value += s.weight;
    }
  }
  nlohmann::json j = {{"measure", measure_name(m)},
                      {"unit", measure_unit(m)},
                      {"total", root.value},
                      {"root", node_json("all", root)}};
  // Invalid UTF-8 in names (a dump's strings are untrusted) becomes U+FFFD, not an exception.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {
struct MultiNode {
  std::vector<uint64_t> values;
  std::map<std::string, MultiNode> children;
};

nlohmann::json multi_node_json(const std::string& name, const MultiNode& n) {
  nlohmann::json j = {{"n", name}, {"v", n.values}};
  if (!n.children.empty()) {
    nlohmann::json c = nlohmann::json::array();
    for (const auto& [child_name, child] : n.children)
      c.push_back(multi_node_json(child_name, child));
    j["c"] = std::move(c);
  }
  return j;
}
}  // namespace

std::string flame_json(const JavaProfile& p, const std::vector<Measure>& measures,
                       bool thread_root) {
  const size_t k = measures.size();
  MultiNode root;
  root.values.assign(k, 0);
  for (size_t i = 0; i < k; ++i) {
    for (const Stack& s : stacks(p, measures[i], thread_root)) {
      root.values[i] += s.weight;
      MultiNode* n = &root;
      for (const std::string& f : s.frames) {
        n = &n->children[f];
        if (n->values.empty()) n->values.assign(k, 0);
        n->values[i] += s.weight;
      }
    }
  }
  nlohmann::json names = nlohmann::json::array(), units = nlohmann::json::array();
  for (Measure m : measures) {
    names.push_back(measure_name(m));
    units.push_back(measure_unit(m));
  }
  nlohmann::json j = {{"measures", std::move(names)},
                      {"units", std::move(units)},
                      {"totals", root.values},
                      {"root", multi_node_json("all", root)}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

}  // namespace profiles
