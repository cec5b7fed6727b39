// JSON embedded in an HTML <script> block by the HTML exports.
#pragma once

#include <string>

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

}  // namespace profiles
