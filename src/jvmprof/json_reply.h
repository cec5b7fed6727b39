// SPDX-License-Identifier: Apache-2.0
// JSON answers of serve's HTTP routes, shared by every route file.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>

namespace jvmprof {

// Names and strings from profiles and dumps may be any bytes: invalid UTF-8 is replaced, never
// sent raw.
inline void json_reply(httplib::Response& res, const nlohmann::json& j, int status = 200) {
  res.status = status;
  res.set_content(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                  "application/json");
}

inline void error_reply(httplib::Response& res, int status, const std::string& message) {
  json_reply(res, {{"error", message}}, status);
}

}  // namespace jvmprof
