// SPDX-License-Identifier: Apache-2.0
// Pieces shared by the self-contained HTML exports (flame graph, differential flame graph).
#pragma once

#include <string>
#include <string_view>

namespace profiles {

// '<', '>' and '&' only occur inside JSON strings, where \u escapes mean the same, so a name
// holding "</script>" cannot end the block.
inline std::string script_safe(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    if (c == '<')
      out += "\\u003c";
    else if (c == '>')
      out += "\\u003e";
    else if (c == '&')
      out += "\\u0026";
    else
      out.push_back(c);
  }
  return out;
}

// The page up to and including its <h2> heading: doctype, a CSP that allows only the page's own
// inline script and style, the escaped title, the flame graph's CSS and `extra_css`.
std::string html_page_head(const std::string& title, std::string_view extra_css);

}  // namespace profiles
