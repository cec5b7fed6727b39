// SPDX-License-Identifier: Apache-2.0
#include "web_server.h"

#include <httplib.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>
#include <set>

#include "heap_object_routes.h"
#include "history_routes.h"
#include "json_reply.h"
#include "jvm_connections.h"
#include "local_jvm_routes.h"
#include "profiles.h"
#include "serve_assets.h"
#include "tls_pipe.h"

namespace jvmprof {
namespace {

constexpr char kCookie[] = "jvmprof_token";

bool same_secret(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;  // constant time: no early exit on the first difference
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::string cookie_token(const httplib::Request& req) {
  const std::string cookies = req.get_header_value("Cookie");
  const std::string key = std::string(kCookie) + "=";
  size_t at = 0;
  while ((at = cookies.find(key, at)) != std::string::npos) {
    if (at == 0 || cookies[at - 1] == ' ' || cookies[at - 1] == ';') {
      const size_t start = at + key.size();
      const size_t end = cookies.find(';', start);
      return cookies.substr(start, end == std::string::npos ? std::string::npos : end - start);
    }
    at += key.size();
  }
  return {};
}

// GET .../heap/classes?filter=TEXT&sort=name|instances|shallow|retained&order=asc|desc
// &offset=K&limit=L (L <= 1000, default 100; default: by shallow size, as the summary's list;
// numbers sort biggest first, names A-Z unless order= says otherwise).
struct HistogramQuery {
  std::string filter, sort = "shallow";
  bool descending = true;
  size_t offset = 0, limit = 100;

  static std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }
  static bool count(const httplib::Request& req, const char* name, size_t max, size_t& out) {
    if (!req.has_param(name)) return true;
    const std::string v = req.get_param_value(name);
    if (v.empty() || v.size() > 12 || v.find_first_not_of("0123456789") != std::string::npos)
      return false;
    out = std::stoull(v);
    return out <= max;
  }
  bool parse(const httplib::Request& req, std::string& error) {
    filter = lower(req.get_param_value("filter"));
    if (req.has_param("sort")) sort = req.get_param_value("sort");
    if (sort != "name" && sort != "instances" && sort != "shallow" && sort != "retained") {
      error = "sort= must be name, instances, shallow or retained";
      return false;
    }
    descending = sort != "name";
    if (req.has_param("order")) {
      const std::string o = req.get_param_value("order");
      if (o != "asc" && o != "desc") {
        error = "order= must be asc or desc";
        return false;
      }
      descending = o == "desc";
    }
    if (!count(req, "offset", size_t{1} << 40, offset) || !count(req, "limit", 1000, limit)) {
      error = "offset= and limit= must be counts (limit at most 1000)";
      return false;
    }
    return true;
  }
  nlohmann::json answer(const analysis::HeapDump& h) const {
    auto all = h.class_histogram();
    const size_t total = all.size();
    std::vector<analysis::ClassStats> rows;
    for (auto& c : all)
      if (filter.empty() || lower(c.name).find(filter) != std::string::npos)
        rows.push_back(std::move(c));
    auto key = [this](const analysis::ClassStats& c) -> uint64_t {
      return sort == "instances" ? c.instances
             : sort == "shallow" ? c.shallow_bytes
                                 : c.retained_bytes;
    };
    // Ties in order of name, so pages never overlap.
    std::stable_sort(rows.begin(), rows.end(),
                     [&](const analysis::ClassStats& a, const analysis::ClassStats& b) {
                       if (sort != "name" && key(a) != key(b))
                         return descending ? key(a) > key(b) : key(a) < key(b);
                       return (sort == "name" && descending) ? b.name < a.name : a.name < b.name;
                     });
    nlohmann::json page = nlohmann::json::array();
    for (size_t i = offset; i < rows.size() && i < offset + limit; ++i)
      page.push_back({{"name", rows[i].name},
                      {"instances", rows[i].instances},
                      {"shallow", rows[i].shallow_bytes},
                      {"retained", rows[i].retained_bytes}});
    return {{"total", total},
            {"matched", rows.size()},
            {"offset", offset},
            {"sort", sort},
            {"order", descending ? "desc" : "asc"},
            {"classes", std::move(page)}};
  }
};

// Plain HTTP, or HTTPS with the agent port's certificate and key, held to the agent port's rules
// (TLS 1.2 at least; the key must be the certificate's). Why it cannot be made goes to `error`.
std::unique_ptr<httplib::Server> make_http_server(const WebOptions& o, std::string& error) {
  if (o.tls_cert_file.empty()) return std::make_unique<httplib::Server>();
  return std::make_unique<httplib::SSLServer>([&o, &error](SSL_CTX& ctx) {
    SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(&ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
    if (SSL_CTX_use_certificate_chain_file(&ctx, o.tls_cert_file.c_str()) != 1) {
      error = "cannot use --tls-cert " + o.tls_cert_file +
              " for the web UI: " + tls::error_text("no certificate in it");
      return false;
    }
    if (SSL_CTX_use_PrivateKey_file(&ctx, o.tls_key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(&ctx) != 1) {
      error = "cannot use --tls-key " + o.tls_key_file +
              " for the web UI: " + tls::error_text("not the certificate's key");
      return false;
    }
    return true;
  });
}

}  // namespace

struct WebServer::Impl {
  SessionRegistry& registry;
  WebOptions options;
  const bool tls;
  std::string tls_error;  // why the HTTPS server could not be made
  std::unique_ptr<httplib::Server> http;
  httplib::Server& server;
  std::set<std::string> allowed_hosts;  // Host header values, with port

  Impl(SessionRegistry& r, WebOptions o)
      : registry(r),
        options(std::move(o)),
        tls(!options.tls_cert_file.empty()),
        http(make_http_server(options, tls_error)),
        server(*http) {}

  // An Origin header names this server: its scheme and an allowed Host.
  bool origin_allowed(const std::string& origin) const {
    const std::string scheme = tls ? "https://" : "http://";
    return origin.starts_with(scheme) && host_allowed(origin.substr(scheme.size()));
  }

  bool host_allowed(const std::string& host) const { return allowed_hosts.count(host) != 0; }

  httplib::Server::HandlerResponse check(const httplib::Request& req, httplib::Response& res) {
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("X-Frame-Options", "DENY");
    res.set_header("Referrer-Policy", "no-referrer");
    res.set_header("Cache-Control", "no-store");
    res.set_header("Content-Security-Policy",
                   "default-src 'self'; img-src 'self' data:; style-src 'self'; "
                   "script-src 'self'; connect-src 'self'; frame-ancestors 'none'");
    if (!host_allowed(req.get_header_value("Host"))) {
      error_reply(res, 403, "Host not allowed (jvmprof serve answers to its own address only)");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.has_header("Origin") && !origin_allowed(req.get_header_value("Origin"))) {
      error_reply(res, 403, "cross-origin request refused");
      return httplib::Server::HandlerResponse::Handled;
    }
    std::string token = req.get_param_value("token");
    if (token.empty()) token = req.get_header_value("X-Jvmprof-Token");
    if (token.empty()) token = cookie_token(req);
    if (!same_secret(token, options.token)) {
      error_reply(res, 401, "missing or wrong token: open the URL jvmprof serve printed");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.has_param("token")) {
      // The page's own requests then carry the token as a cookie, never in URLs it builds.
      // Over HTTPS the browser must never send it back over plain HTTP (Secure).
      res.set_header("Set-Cookie", std::string(kCookie) + "=" + options.token +
                                       "; Path=/; HttpOnly; SameSite=Strict" +
                                       (tls ? "; Secure" : ""));
    }
    return httplib::Server::HandlerResponse::Unhandled;
  }

  std::shared_ptr<Session> session(const httplib::Request& req, httplib::Response& res) {
    uint32_t id = 0;
    try {
      id = static_cast<uint32_t>(std::stoul(req.matches[1].str()));
    } catch (const std::exception&) {
    }
    auto s = registry.find(id);
    if (!s) error_reply(res, 404, "no such profile");
    return s;
  }

  static nlohmann::json object_json(const analysis::ObjectInfo& o) {
    char id[32];
    std::snprintf(id, sizeof id, "0x%llx", static_cast<unsigned long long>(o.id));
    return {{"id", id},
            {"class", o.class_name},
            {"shallow", o.shallow_bytes},
            {"retained", o.retained_bytes}};
  }

  // Heap views over the analysis library; each opens (indexes) the newest dump on first use.
  void heap_routes() {
    auto with_heap = [this](const httplib::Request& req, httplib::Response& res,
                            const std::function<nlohmann::json(const analysis::HeapDump&)>& f) {
      auto s = session(req, res);
      if (!s) return;
      std::string error;
      uint64_t serial = 0;
      auto heap = s->heap(error, &serial);
      if (!heap) return error_reply(res, 404, error);
      try {
        nlohmann::json answer = f(*heap);
        // Which dump answered: the page's poll may not know of it yet (a live stream's newest).
        if (answer.is_object()) answer["dumpSerial"] = serial;
        json_reply(res, answer);
      } catch (const std::exception& e) {
        error_reply(res, 500, e.what());
      }
    };
    server.Get(R"(/api/profiles/(\d+)/heap/summary)",
               [=](const httplib::Request& req, httplib::Response& res) {
                 with_heap(req, res, [](const analysis::HeapDump& h) {
                   const auto s = h.summary();
                   nlohmann::json classes = nlohmann::json::array();
                   auto histogram = h.class_histogram();
                   if (histogram.size() > 300) histogram.resize(300);
                   for (const auto& c : histogram)
                     classes.push_back({{"name", c.name},
                                        {"instances", c.instances},
                                        {"shallow", c.shallow_bytes},
                                        {"retained", c.retained_bytes}});
                   return nlohmann::json{{"objects", s.objects},
                                         {"instances", s.instances},
                                         {"classes", s.classes},
                                         {"shallowBytes", s.shallow_bytes},
                                         {"reachableBytes", s.reachable_bytes},
                                         {"unreachableObjects", s.unreachable_objects},
                                         {"gcRoots", s.gc_roots},
                                         {"danglingReferences", s.dangling_references},
                                         {"unknownClassObjects", s.unknown_class_objects},
                                         {"damageWarning", s.damage_warning},
                                         {"fillerObjects", s.filler_objects},
                                         {"fillerBytes", s.filler_bytes},
                                         {"histogram", std::move(classes)}};
                 });
               });
    // The class histogram, every class reachable: filtered by a substring of the name (any
    // case), sorted by any column, a page at a time.
    server.Get(R"(/api/profiles/(\d+)/heap/classes)",
               [=](const httplib::Request& req, httplib::Response& res) {
                 HistogramQuery q;
                 std::string error;
                 if (!q.parse(req, error)) return error_reply(res, 400, error);
                 with_heap(req, res, [&q](const analysis::HeapDump& h) { return q.answer(h); });
               });
    server.Get(R"(/api/profiles/(\d+)/heap/dominators)", [=](const httplib::Request& req,
                                                             httplib::Response& res) {
      with_heap(req, res, [](const analysis::HeapDump& h) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& b : h.biggest_objects(30, 6, true)) {  // chains grouped, as the CLI
          nlohmann::json by_class = nlohmann::json::array();
          for (const auto& c : b.retained_by_class)
            by_class.push_back(
                {{"name", c.name}, {"instances", c.instances}, {"shallow", c.shallow_bytes}});
          nlohmann::json chain = nlohmann::json::array();
          for (const auto& c : b.chain) chain.push_back(object_json(c));
          list.push_back({{"object", object_json(b.object)},
                          {"chain", std::move(chain)},
                          {"chainLength", b.chain_length},
                          {"retainedObjects", b.retained_objects},
                          {"retainedByClass", std::move(by_class)}});
        }
        return list;
      });
    });
    server.Get(R"(/api/profiles/(\d+)/heap/instances)",
               [=](const httplib::Request& req, httplib::Response& res) {
                 const std::string cls = req.get_param_value("class");
                 with_heap(req, res, [&cls](const analysis::HeapDump& h) {
                   nlohmann::json list = nlohmann::json::array();
                   for (const auto& o : h.instances_of(cls, 50)) list.push_back(object_json(o));
                   return list;
                 });
               });
    server.Get(R"(/api/profiles/(\d+)/heap/path)",
               [=](const httplib::Request& req, httplib::Response& res) {
                 uint64_t id = 0;
                 try {
                   id = std::stoull(req.get_param_value("id"), nullptr, 0);
                 } catch (const std::exception&) {
                   return error_reply(res, 400, "id= must be an object id (0x...)");
                 }
                 with_heap(req, res, [id](const analysis::HeapDump& h) {
                   nlohmann::json paths = nlohmann::json::array();
                   for (const auto& path : h.paths_to(id, 3)) {
                     nlohmann::json steps = nlohmann::json::array();
                     for (const auto& step : path)
                       steps.push_back({{"object", object_json(step.object)}, {"via", step.via}});
                     paths.push_back(std::move(steps));
                   }
                   return paths;
                 });
               });
    server.Get(R"(/api/profiles/(\d+)/heap/strings)", [=](const httplib::Request& req,
                                                          httplib::Response& res) {
      with_heap(req, res, [](const analysis::HeapDump& h) {
        const auto r = h.duplicate_strings(30, 3);
        nlohmann::json top = nlohmann::json::array();
        for (const auto& d : r.top)
          top.push_back({{"value", d.value},
                         {"count", d.count},
                         {"wasted", d.wasted_bytes},
                         {"example", object_json({d.example_id, "java.lang.String", 0, 0})["id"]}});
        return nlohmann::json{{"strings", r.strings},
                              {"unreachable", r.unreachable_strings},
                              {"wasted", r.wasted_bytes},
                              {"top", std::move(top)}};
      });
    });
  }

  void routes() {
    server.set_pre_routing_handler(
        [this](const httplib::Request& req, httplib::Response& res) { return check(req, res); });
    auto asset = [this](const char* path, std::string_view content, const char* type) {
      server.Get(path, [content, type](const httplib::Request&, httplib::Response& res) {
        res.set_content(std::string(content), type);
      });
    };
    asset("/", web_assets::kIndexHtml, "text/html; charset=utf-8");
    asset("/dom.js", web_assets::kDomJs, "text/javascript; charset=utf-8");
    asset("/app.js", web_assets::kAppJs, "text/javascript; charset=utf-8");
    asset("/app.css", web_assets::kAppCss, "text/css; charset=utf-8");
    asset("/heap-object.js", web_assets::kHeapObjectJs, "text/javascript; charset=utf-8");
    asset("/heap-diff.js", web_assets::kHeapDiffJs, "text/javascript; charset=utf-8");
    asset("/history.js", web_assets::kHistoryJs, "text/javascript; charset=utf-8");
    asset("/flamegraph.js", profiles::flamegraph_js(), "text/javascript; charset=utf-8");
    asset("/flamegraph.css", profiles::flamegraph_css(), "text/css; charset=utf-8");
    asset("/diff-flame.js", profiles::diff_flame_js(), "text/javascript; charset=utf-8");

    server.Get("/api/profiles", [this](const httplib::Request&, httplib::Response& res) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& s : registry.all()) list.push_back(s->info());
      json_reply(res, list);
    });
    // Each JVM with its connections (a reconnect is a new session of the same identity.key).
    server.Get("/api/jvms", [this](const httplib::Request&, httplib::Response& res) {
      std::vector<ConnectionRecord> records;
      for (const auto& s : registry.all())
        records.push_back(ConnectionRecord::from_info(s->info()));
      auto jvms = group_connections(std::move(records));
      // serve --store: connections to earlier collectors, from the store.
      if (options.history) add_stored_connections(jvms, *options.history);
      nlohmann::json list = nlohmann::json::array();
      for (const auto& jvm : jvms) list.push_back(jvm.to_json());
      json_reply(res, list);
    });
    // Who the agent port let in and whom it refused, counted since serve started.
    server.Get("/api/agents", [this](const httplib::Request&, httplib::Response& res) {
      json_reply(res, options.agent_counters ? options.agent_counters() : nlohmann::json::object());
    });
    server.Get(R"(/api/profiles/(\d+))",
               [this](const httplib::Request& req, httplib::Response& res) {
                 if (auto s = session(req, res)) json_reply(res, s->info());
               });
    server.Get(R"(/api/profiles/(\d+)/flame)", [this](const httplib::Request& req,
                                                      httplib::Response& res) {
      auto s = session(req, res);
      if (!s) return;
      if (req.has_param("measures")) {
        // Every measure of a view in one tree: the UI switches between them without asking.
        std::vector<profiles::Measure> measures;
        const std::string list = req.get_param_value("measures");
        for (size_t at = 0; at <= list.size();) {
          const size_t comma = std::min(list.find(',', at), list.size());
          auto m = profiles::parse_measure(list.substr(at, comma - at));
          if (!m || measures.size() >= 8) return error_reply(res, 400, "unknown measure");
          measures.push_back(*m);
          at = comma + 1;
        }
        auto p = s->profile();
        return res.set_content(
            profiles::flame_json(*p, measures, req.get_param_value("threads") == "1"),
            "application/json");
      }
      auto m = profiles::parse_measure(req.get_param_value("measure"));
      if (!m) return error_reply(res, 400, "unknown measure");
      auto p = s->profile();
      res.set_content(profiles::flame_json(*p, *m, req.get_param_value("threads") == "1"),
                      "application/json");
    });
    // period=: the kept periods of a JVM, and one period's flame graph.
    server.Get(R"(/api/profiles/(\d+)/periods)",
               [this](const httplib::Request& req, httplib::Response& res) {
                 auto s = session(req, res);
                 if (!s) return;
                 nlohmann::json list = nlohmann::json::array();
                 for (const PeriodEntry& e : s->periods()) {
                   nlohmann::json measures = nlohmann::json::array();
                   for (auto m : profiles::available_measures(s->period_profile(e)))
                     measures.push_back(profiles::measure_name(m));
                   list.push_back({{"seq", e.seq},
                                   {"startMs", e.start_ms},
                                   {"endMs", e.end_ms},
                                   {"measures", std::move(measures)}});
                 }
                 json_reply(res, list);
               });
    server.Get(R"(/api/profiles/(\d+)/periods/(\d+)/flame)", [this](const httplib::Request& req,
                                                                    httplib::Response& res) {
      auto s = session(req, res);
      if (!s) return;
      auto m = profiles::parse_measure(req.get_param_value("measure"));
      if (!m) return error_reply(res, 400, "unknown measure");
      const std::string seq = req.matches[2].str();
      for (const PeriodEntry& e : s->periods()) {
        if (std::to_string(e.seq) != seq) continue;
        return res.set_content(profiles::flame_json(s->period_profile(e), *m), "application/json");
      }
      error_reply(res, 404, "no such period (only the latest are kept)");
    });
    server.Get(R"(/api/profiles/(\d+)/threads)",
               [this](const httplib::Request& req, httplib::Response& res) {
                 auto s = session(req, res);
                 if (!s) return;
                 auto p = s->profile();
                 nlohmann::json list = nlohmann::json::array();
                 // Start/end times only for a live stream: a file's are when it was read, not when
                 // they ran.
                 const bool live = s->live();
                 for (const auto& [serial, t] : p->threads)
                   list.push_back({{"serial", serial},
                                   {"name", t.name},
                                   {"group", t.group},
                                   {"ended", t.ended},
                                   {"startMs", live ? t.start_read_ms : 0},
                                   {"endMs", live ? t.end_read_ms : 0}});
                 json_reply(res, list);
               });
    server.Get(R"(/api/profiles/(\d+)/monitors)", [this](const httplib::Request& req,
                                                         httplib::Response& res) {
      auto s = session(req, res);
      if (!s) return;
      auto p = s->profile();
      nlohmann::json rows = nlohmann::json::array();
      if (p->monitor_time) {
        for (const auto& r : p->monitor_time->rows) {
          nlohmann::json frames = nlohmann::json::array();
          if (const auto* t = p->trace(r.trace))
            for (const auto& f : t->frames) frames.push_back(profiles::frame_label(f, true));
          const uint64_t ms = static_cast<uint64_t>(
              r.self_percent * static_cast<double>(p->monitor_time->total) / 100.0 + 0.5);
          rows.push_back({{"monitor", r.name},
                          {"count", r.count},
                          {"percent", r.self_percent},
                          {"ms", ms},
                          {"trace", r.trace},
                          {"frames", std::move(frames)}});
        }
      }
      // The monitor dump as a table, and its deadlocks as cycles with each thread's trace.
      const auto dump = profiles::parse_monitor_dump(p->monitor_dump);
      auto thread_json = [&](uint32_t serial) {
        uint32_t trace = 0;
        std::string status;
        for (const auto& t : dump.threads)
          if (t.serial == serial) trace = t.trace, status = t.status;
        nlohmann::json frames = nlohmann::json::array();
        if (const auto* t = p->trace(trace))
          for (const auto& f : t->frames) frames.push_back(profiles::frame_label(f, true));
        std::string name = p->thread_name(serial);
        return nlohmann::json{{"serial", serial},
                              {"name", name},
                              {"status", status},
                              {"trace", trace},
                              {"frames", std::move(frames)}};
      };
      nlohmann::json monitors = nlohmann::json::array();
      for (const auto& m : dump.monitors) {
        auto names = [&](const std::vector<uint32_t>& list) {
          nlohmann::json out = nlohmann::json::array();
          for (uint32_t t : list)
            out.push_back(thread_json(t)["name"].get<std::string>() + " (" + std::to_string(t) +
                          ")");
          return out;
        };
        monitors.push_back({{"monitor", m.signature},
                            {"owner", m.owner ? thread_json(*m.owner)["name"].get<std::string>() +
                                                    " (" + std::to_string(*m.owner) + ")"
                                              : std::string()},
                            {"entryCount", m.entry_count},
                            {"waitingToEnter", names(m.waiting_to_enter)},
                            {"waitingToBeNotified", names(m.waiting_to_be_notified)}});
      }
      nlohmann::json deadlocks = nlohmann::json::array();
      for (const auto& cycle : profiles::deadlock_cycles(dump)) {
        nlohmann::json steps = nlohmann::json::array();
        for (const auto& [thread, m] : cycle)
          steps.push_back({{"thread", thread_json(thread)},
                           {"monitor", dump.monitors[m].signature},
                           {"owner", *dump.monitors[m].owner}});
        deadlocks.push_back(std::move(steps));
      }
      json_reply(res, {{"totalMs", p->monitor_time ? p->monitor_time->total : 0},
                       {"rows", std::move(rows)},
                       {"monitors", std::move(monitors)},
                       {"deadlocks", std::move(deadlocks)},
                       {"dump", p->monitor_dump}});
    });
    server.Get(R"(/api/profiles/(\d+)/export)", [this](const httplib::Request& req,
                                                       httplib::Response& res) {
      auto s = session(req, res);
      if (!s) return;
      auto p = s->profile();
      const std::string to = req.get_param_value("to");
      auto measures = profiles::available_measures(*p);
      if (measures.empty()) return error_reply(res, 404, "nothing to export yet");
      const std::string base = "jvmprof-profile-" + std::to_string(s->id());
      if (to == "collapsed") {
        auto m = profiles::parse_measure(req.get_param_value("measure"));
        res.set_content(profiles::to_collapsed(profiles::stacks(*p, m ? *m : measures[0])),
                        "text/plain; charset=utf-8");
        res.set_header("Content-Disposition", "attachment; filename=\"" + base + ".collapsed\"");
      } else if (to == "pprof") {
        res.set_content(profiles::to_pprof(*p, measures), "application/octet-stream");
        res.set_header("Content-Disposition", "attachment; filename=\"" + base + ".pb\"");
      } else if (to == "speedscope") {
        res.set_content(profiles::to_speedscope(*p, measures), "application/json");
        res.set_header("Content-Disposition",
                       "attachment; filename=\"" + base + ".speedscope.json\"");
      } else if (to == "html") {
        res.set_content(
            profiles::to_html(*p, measures, "jvmprof: profile " + std::to_string(s->id())),
            "text/html; charset=utf-8");
        res.set_header("Content-Disposition", "attachment; filename=\"" + base + ".html\"");
      } else {
        error_reply(res, 400, "to= must be collapsed, pprof, speedscope or html");
      }
    });
    server.Post(R"(/api/profiles/(\d+)/command)", [this](const httplib::Request& req,
                                                         httplib::Response& res) {
      auto s = session(req, res);
      if (!s) return;
      nlohmann::json body;
      try {
        body = nlohmann::json::parse(req.body);
      } catch (const nlohmann::json::exception&) {
        return error_reply(res, 400, "the body must be JSON: {\"command\": ...}");
      }
      if (!body.is_object() || !body.contains("command") || !body["command"].is_string())
        return error_reply(res, 400, "the body must be JSON: {\"command\": ...}");
      try {
        json_reply(res, s->command(body["command"].get<std::string>(), body));
      } catch (const std::invalid_argument& e) {
        error_reply(res, 400, e.what());
      } catch (const std::runtime_error& e) {
        error_reply(res, 409, e.what());
      }
    });
    heap_routes();
    add_heap_object_routes(server, registry);
    add_history_routes(server, options.history);
    add_local_jvm_routes(server, options.agent_address);
    server.set_payload_max_length(1 << 16);
  }
};

WebServer::WebServer(SessionRegistry& registry, WebOptions options)
    : impl_(std::make_unique<Impl>(registry, std::move(options))) {
  impl_->routes();
}

WebServer::~WebServer() = default;

int WebServer::bind(std::string& error) {
  auto& o = impl_->options;
  if (!impl_->server.is_valid()) {
    error = impl_->tls_error.empty() ? "cannot set up HTTPS for the web UI" : impl_->tls_error;
    return -1;
  }
  int port = o.port;
  if (port == 0) {
    port = impl_->server.bind_to_any_port(o.bind);
  } else if (!impl_->server.bind_to_port(o.bind, port)) {
    port = -1;
  }
  if (port < 0) {
    error = "cannot listen on " + o.bind + ":" + std::to_string(o.port);
    return -1;
  }
  // Built piece by piece: ":" + string makes GCC 12 at -O3 warn (a false -Wrestrict).
  std::string p = ":";
  p += std::to_string(port);
  for (const std::string h : {"127.0.0.1", "localhost", "[::1]"})
    impl_->allowed_hosts.insert(h + p);
  if (o.bind != "0.0.0.0" && o.bind != "::") impl_->allowed_hosts.insert(o.bind + p);
  for (const auto& h : o.extra_hosts) impl_->allowed_hosts.insert(h + p);
  return port;
}

const char* WebServer::scheme() const {
  return impl_->tls ? "https" : "http";
}

void WebServer::run() {
  impl_->server.listen_after_bind();
}
void WebServer::stop() {
  impl_->server.stop();
}

}  // namespace jvmprof
