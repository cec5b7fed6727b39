// SPDX-License-Identifier: Apache-2.0
// pprof, speedscope and HTML exports of a profile's stacks.
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "html_page.h"
#include "profile.pb.h"
#include "profiles.h"
#include "web_assets.h"

namespace profiles {
namespace {

// pprof's conventional names for each measure's sample type.
std::pair<std::string, std::string> pprof_type(Measure m) {
  switch (m) {
    case Measure::kCpuSamples:
      return {"samples", "count"};
    case Measure::kCpuCalls:
      return {"calls", "count"};
    case Measure::kCpuTimeMs:
      return {"cpu", "milliseconds"};
    case Measure::kAllocBytes:
      return {"alloc_space", "bytes"};
    case Measure::kAllocObjects:
      return {"alloc_objects", "count"};
    case Measure::kLiveBytes:
      return {"inuse_space", "bytes"};
    case Measure::kLiveObjects:
      return {"inuse_objects", "count"};
    case Measure::kMonitorTimeMs:
      return {"delay", "milliseconds"};
  }
  return {"unknown", "count"};
}

// speedscope's unit enumeration has no "count": counts are "none".
std::string speedscope_unit(Measure m) {
  const std::string_view u = measure_unit(m);
  if (u == "bytes") return "bytes";
  if (u == "ms") return "milliseconds";
  return "none";
}

class StringTable {
 public:
  explicit StringTable(perftools::profiles::Profile& p) : p_(p) { index(""); }
  int64_t index(const std::string& s) {
    auto [it, added] = ids_.emplace(s, static_cast<int64_t>(ids_.size()));
    if (added) p_.add_string_table(s);
    return it->second;
  }

 private:
  perftools::profiles::Profile& p_;
  std::map<std::string, int64_t> ids_;
};

// Invalid UTF-8 is replaced: protobuf strings must be valid UTF-8.
std::string valid_utf8(const std::string& s) {
  using nlohmann::json;
  return json::parse(json(s).dump(-1, ' ', false, json::error_handler_t::replace))
      .get<std::string>();
}

}  // namespace

std::string to_pprof(const JavaProfile& p, const std::vector<Measure>& measures) {
  perftools::profiles::Profile out;
  StringTable strings(out);
  for (Measure m : measures) {
    auto [type, unit] = pprof_type(m);
    auto* vt = out.add_sample_type();
    vt->set_type(strings.index(type));
    vt->set_unit(strings.index(unit));
  }
  // pprof opens on the default sample type, and without one on the last; the measures come CPU
  // first, so the first (CPU when the profile has it) is named the default.
  if (!measures.empty())
    out.set_default_sample_type(strings.index(pprof_type(measures.front()).first));
  // One sample per distinct (thread, stack), a value per measure.
  std::map<std::pair<uint32_t, std::vector<std::string>>, std::vector<int64_t>> samples;
  for (size_t i = 0; i < measures.size(); ++i) {
    for (Stack& s : stacks(p, measures[i])) {
      auto& values = samples[{s.thread, std::move(s.frames)}];
      values.resize(measures.size());
      values[i] += static_cast<int64_t>(s.weight);
    }
  }
  std::map<std::string, uint64_t> locations;  // frame name -> location id (= function id)
  auto location = [&](const std::string& name) {
    auto [it, added] = locations.emplace(name, locations.size() + 1);
    if (added) {
      auto* f = out.add_function();
      f->set_id(it->second);
      f->set_name(strings.index(valid_utf8(name)));
      f->set_system_name(f->name());
      auto* l = out.add_location();
      l->set_id(it->second);
      l->add_line()->set_function_id(it->second);
    }
    return it->second;
  };
  const int64_t thread_key = strings.index("thread");
  for (const auto& [key, values] : samples) {
    auto* s = out.add_sample();
    const auto& frames = key.second;
    for (auto it = frames.rbegin(); it != frames.rend(); ++it) s->add_location_id(location(*it));
    for (int64_t v : values) s->add_value(v);
    if (key.first != 0) {
      auto* label = s->add_label();
      label->set_key(thread_key);
      std::string name = p.thread_name(key.first);
      label->set_str(strings.index(valid_utf8(name.empty() ? std::to_string(key.first) : name)));
    }
  }
  out.add_comment(strings.index(valid_utf8("converted by jvmprof from " + p.source)));
  return out.SerializeAsString();
}

std::string to_speedscope(const JavaProfile& p, const std::vector<Measure>& measures) {
  using nlohmann::json;
  std::map<std::string, size_t> frame_index;
  json frames = json::array();
  json profiles_json = json::array();
  for (Measure m : measures) {
    json samples = json::array(), weights = json::array();
    uint64_t total = 0;
    for (const Stack& s : stacks(p, m)) {
      json indices = json::array();
      for (const std::string& f : s.frames) {
        auto [it, added] = frame_index.emplace(f, frame_index.size());
        if (added) frames.push_back({{"name", f}});
        indices.push_back(it->second);
      }
      samples.push_back(std::move(indices));
      weights.push_back(s.weight);
      total += s.weight;
    }
    profiles_json.push_back({{"type", "sampled"},
                             {"name", std::string(measure_name(m))},
                             {"unit", speedscope_unit(m)},
                             {"startValue", 0},
                             {"endValue", total},
                             {"samples", std::move(samples)},
                             {"weights", std::move(weights)}});
  }
  json doc = {{"$schema", "https://www.speedscope.app/file-format-schema.json"},
              {"shared", {{"frames", std::move(frames)}}},
              {"profiles", std::move(profiles_json)},
              {"name", p.source},
              {"activeProfileIndex", 0},
              {"exporter", "jvmprof"}};
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

// What became of the CPU-time sampler's signals (cpu=samples), one paragraph; "" without them.
static std::string cpu_sampler_line(const JavaProfile& p) {
  const auto& c = p.cpu_sampler;
  if (!c.contains("signals")) return "";
  auto get = [&c](const char* k) {
    const auto it = c.find(k);
    return std::to_string(it == c.end() ? 0 : it->second);
  };
  std::string line = "\n<p id=\"cpu-sampler\">CPU sampler: " + get("signals") + " signals, " +
                     get("taken") + " samples taken (" + get("recovered") +
                     " recovered from stubs), " + get("unattributable") + " unattributable";
  if (c.contains("lost") && c.at("lost") != 0) line += ", " + get("lost") + " lost";
  return line + "</p>";
}

std::string to_html(const JavaProfile& p, const std::vector<Measure>& measures,
                    const std::string& title, const HtmlOptions& options) {
  std::string data = "[";
  for (size_t i = 0; i < measures.size(); ++i) {
    if (i) data += ",";
    data += flame_json(p, measures[i], false, options.cut_depth);
  }
  data += "]";
  std::string html;
  html += html_page_head(title,
                         ".tabs button.on{font-weight:bold}"
                         "\n.context{border-collapse:collapse;margin:0 0 10px}"
                         "\n.context th{text-align:left;padding:1px 12px 1px 0;color:#555;"
                         "font-weight:normal}\n.context td{padding:1px 0}");
  // What was profiled, when and how: the page must make sense away from the run that made it.
  auto context = options.context;
  if (options.cut_depth > 0) {
    context.emplace_back("stacks", "cut at " + std::to_string(options.cut_depth) +
                                       " frames (depth=); cut stacks are drawn under \"" +
                                       truncated_frame(options.cut_depth) + "\"");
  }
  if (!context.empty()) {
    html += "\n<table class=\"context\" id=\"context\">";
    for (const auto& [label, value] : context)
      html += "\n<tr><th>" + html_escape(label) + "</th><td>" + html_escape(value) + "</td></tr>";
    html += "\n</table>";
  }
  html += cpu_sampler_line(p);
  html +=
      "\n<div class=\"tabs\" id=\"tabs\"></div>\n"
      "<div id=\"graph\"></div>\n<script type=\"application/json\" "
      "id=\"jvmprof-data\">" +
      script_safe(data) + "</script>\n<script>\n";
  html += flamegraph_js();
  html += R"JS(
(function () {
  var views = JSON.parse(document.getElementById('jvmprof-data').textContent);
  var tabs = document.getElementById('tabs'), box = document.getElementById('graph');
  if (!views.length) { box.textContent = 'This profile holds no CPU, allocation or monitor data.'; return; }
  function show(i) {
    Array.prototype.forEach.call(tabs.children, function (b, k) { b.className = k === i ? 'on' : ''; });
    new JvmprofFlame.FlameGraph(box, views[i], {});
  }
  views.forEach(function (v, i) {
    var b = document.createElement('button');
    b.textContent = v.measure + ' (' + JvmprofFlame.count(v.total, v.unit) + ')';
    b.addEventListener('click', function () { show(i); });
    tabs.appendChild(b);
  });
  show(0);
})();
</script></body></html>
)JS";
  return html;
}

std::string html_page_head(const std::string& title, std::string_view extra_css) {
  std::string head = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  head +=
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "script-src 'unsafe-inline'; style-src 'unsafe-inline'\">\n";
  head += "<title>" + html_escape(title) + "</title>\n<style>\n";
  head += flamegraph_css();
  head += "\nbody{margin:12px;font:13px system-ui,sans-serif}";
  head += extra_css;
  head += "\n</style></head><body>\n<h2>" + html_escape(title) + "</h2>";
  return head;
}

std::string_view flamegraph_js() {
  return web_assets::kFlamegraphJs;
}
std::string_view flamegraph_css() {
  return web_assets::kFlamegraphCss;
}

}  // namespace profiles
