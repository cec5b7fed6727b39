// SPDX-License-Identifier: Apache-2.0
#include "local_jvm_routes.h"

#include <httplib.h>
#include <unistd.h>

#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

#include "attach.h"
#include "attach_support.h"
#include "json_reply.h"
#include "serve_assets.h"

namespace jvmprof {
namespace {

// What "profile" asks of HPROF; net= is added.
constexpr char kProfileOptions[] = "cpu=samples,heap=sites,sample=512k,monitor=y";

bool from_loopback(const httplib::Request& req) {
  const std::string& a = req.remote_addr;
  return a.rfind("127.", 0) == 0 || a == "::1" || a.rfind("::ffff:127.", 0) == 0;
}

// The pids this serve attached HPROF to and has not stopped.
struct Attached {
  std::mutex mutex;
  std::set<pid_t> pids;
};

// Loads HPROF into `pid` with `options`; returns Agent_OnAttach's result, throws AttachError.
int load_hprof(pid_t pid, const std::string& options) {
  const attach::Target target = attach::find_target(pid);
  return attach::load_agent(target, agent_path_for(target, default_agent_library()), options);
}

}  // namespace

void add_local_jvm_routes(httplib::Server& server, const std::string& agent_address) {
  auto attached = std::make_shared<Attached>();
  server.Get("/local-jvms.js", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(web_assets::kLocalJvmsJs), "text/javascript; charset=utf-8");
  });

  server.Get("/api/local-jvms", [attached](const httplib::Request& req, httplib::Response& res) {
    if (!from_loopback(req))
      return error_reply(res, 403, "local JVMs are listed to this machine only");
    nlohmann::json list = nlohmann::json::array();
    std::lock_guard lock(attached->mutex);
    std::set<pid_t> alive;
    for (const attach::LocalJvm& j : attach::local_jvms()) {
      if (j.pid == getpid()) continue;
      if (attached->pids.count(j.pid) != 0) alive.insert(j.pid);
      list.push_back({{"pid", j.pid},
                      {"main", j.main},
                      {"javaVersion", j.java_version},
                      {"attachable", j.attachable},
                      {"whyNot", j.why_not},
                      {"profiling", attached->pids.count(j.pid) != 0}});
    }
    attached->pids = std::move(alive);  // JVMs that ended are forgotten
    json_reply(res, list);
  });

  server.Post(R"(/api/local-jvms/(\d+)/(profile|stop))",
              [attached, agent_address](const httplib::Request& req, httplib::Response& res) {
                if (!from_loopback(req)) {
                  return error_reply(res, 403, "JVMs can be attached from this machine only");
                }
                const std::string what = req.matches[2];
                pid_t pid = 0;
                try {
                  pid = static_cast<pid_t>(std::stol(req.matches[1]));
                } catch (const std::exception&) {
                  return error_reply(res, 400, "not a pid");
                }
                const bool profile = what == "profile";
                const std::string options =
                    profile ? std::string(kProfileOptions) + ",net=" + agent_address : "stop";
                int result = 0;
                try {
                  result = load_hprof(pid, options);
                } catch (const attach::AttachError& e) {
                  return error_reply(res, 409, e.what());
                }
                if (result != 0) {
                  return error_reply(
                      res, 409,
                      profile ? "HPROF refused to start in JVM " + std::to_string(pid) +
                                    " (is it profiled already? its output says why)"
                              : "JVM " + std::to_string(pid) + " has no HPROF session to stop");
                }
                std::lock_guard lock(attached->mutex);
                if (profile) {
                  attached->pids.insert(pid);
                } else {
                  attached->pids.erase(pid);
                }
                json_reply(res, {{"pid", pid}, {"profiling", profile}, {"options", options}});
              });
}

}  // namespace jvmprof
