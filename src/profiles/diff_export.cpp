// SPDX-License-Identifier: Apache-2.0
// Differential exports of two profiles: two-column folded stacks and a self-contained HTML page
// with web/diff-flame.js.
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "html_page.h"
#include "profiles.h"
#include "web_assets.h"

namespace profiles {
namespace {

// to_collapsed's lines ("stack weight") as a map; the stack text is already sanitised.
std::map<std::string, uint64_t> folded(const std::vector<Stack>& stacks) {
  std::map<std::string, uint64_t> out;
  const std::string text = to_collapsed(stacks);
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    const std::string_view line(text.data() + at, nl - at);
    const size_t space = line.rfind(' ');
    if (space != std::string_view::npos)
      out[std::string(line.substr(0, space))] += std::stoull(std::string(line.substr(space + 1)));
    at = nl + 1;
  }
  return out;
}

uint64_t total_of(const std::vector<Stack>& stacks) {
  uint64_t t = 0;
  for (const Stack& s : stacks) t += s.weight;
  return t;
}

}  // namespace

std::string to_diff_collapsed(const std::vector<Stack>& base, const std::vector<Stack>& target,
                              bool normalise) {
  std::map<std::string, std::pair<uint64_t, uint64_t>> rows;
  for (const auto& [stack, w] : folded(base)) rows[stack].first = w;
  for (const auto& [stack, w] : folded(target)) rows[stack].second = w;
  const uint64_t base_total = total_of(base), target_total = total_of(target);
  const double scale = normalise && base_total > 0
                           ? static_cast<double>(target_total) / static_cast<double>(base_total)
                           : 1.0;
  std::string out;
  for (const auto& [stack, w] : rows) {
    const auto b = static_cast<uint64_t>(std::llround(static_cast<double>(w.first) * scale));
    out += stack + " " + std::to_string(b) + " " + std::to_string(w.second) + "\n";
  }
  return out;
}

std::string to_diff_html(const JavaProfile& base, const JavaProfile& target, Measure m,
                         const std::string& base_name, const std::string& target_name) {
  const std::string title = "jvmprof: " + target_name + " against " + base_name;
  std::string html;
  html += html_page_head(title, ".diff-up{color:#c62828}.diff-down{color:#1565c0}");
  html += "\n<div id=\"graph\"></div>\n";
  html += "<script type=\"application/json\" id=\"jvmprof-base\">" +
          script_safe(flame_json(base, m)) + "</script>\n";
  html += "<script type=\"application/json\" id=\"jvmprof-target\">" +
          script_safe(flame_json(target, m)) + "</script>\n";
  // The names go through JSON too, so that the script only ever sets them as text.
  const nlohmann::json names = {base_name, target_name};
  html += "<script type=\"application/json\" id=\"jvmprof-names\">" +
          script_safe(names.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) +
          "</script>\n<script>\n";
  html += flamegraph_js();
  html += "\n";
  html += diff_flame_js();
  html += R"JS(
(function () {
  function data(id) { return JSON.parse(document.getElementById(id).textContent); }
  var names = data('jvmprof-names');
  new JvmprofDiff.DiffFlame(document.getElementById('graph'), data('jvmprof-base'),
                            data('jvmprof-target'), { baseName: names[0], targetName: names[1] });
})();
</script></body></html>
)JS";
  return html;
}

std::string_view diff_flame_js() {
  return web_assets::kDiffFlameJs;
}

}  // namespace profiles
