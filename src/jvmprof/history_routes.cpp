// SPDX-License-Identifier: Apache-2.0
// The History view's routes: every answer comes from the profile store's query API (the one
// jvmprof query uses); the store's reader connection serialises queries, so requests from several
// browser tabs queue there rather than open connections of their own.
#include "history_routes.h"

#include <httplib.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "json_reply.h"
#include "profiles.h"
#include "store.h"

namespace jvmprof {
namespace {

constexpr int64_t kMaxBuckets = 10'000;  // an explicit bucket= may ask for this many at most

// A request's range, matchers and measure, or the one-line reason it has none.
struct HistoryRequest {
  store::Query query;
  store::Query base;  // diff only: the "before" range, same matchers and measure
  std::string error;
  bool all = false;

  static bool time(const httplib::Request& req, const char* name, const char* fallback, int64_t now,
                   int64_t& out, std::string& error) {
    const std::string text = req.has_param(name) ? req.get_param_value(name) : fallback;
    if (text.empty()) {
      error = std::string(name) + "= is required";
      return false;
    }
    auto t = store::parse_time(text, now);
    if (!t) {
      error = std::string(name) + "= takes an RFC 3339 time, '-1h', 'now' or ms since the epoch";
      return false;
    }
    out = *t;
    return true;
  }

  // `all_measures`: measure=all is allowed (the timeline of every measure); `all` is then set.
  bool parse(const httplib::Request& req, bool with_base, bool all_measures = false) {
    const int64_t now = profiles::wall_clock_ms();
    if (!time(req, "from", "-1h", now, query.from_ms, error) ||
        !time(req, "to", "now", now, query.to_ms, error))
      return false;
    if (query.from_ms >= query.to_ms) {
      error = "from= must come before to=";
      return false;
    }
    if (all_measures && req.get_param_value("measure") == "all") {
      all = true;
    } else if (req.has_param("measure")) {
      auto m = profiles::parse_measure(req.get_param_value("measure"));
      if (!m) {
        error = "unknown measure";
        return false;
      }
      query.measure = *m;
    }
    for (size_t i = 0, n = req.get_param_value_count("match"); i < n; ++i) {
      auto m = store::parse_matcher(req.get_param_value("match", i));
      if (!m) {
        error = "match= takes KEY=VALUE";
        return false;
      }
      query.match.push_back(*m);
    }
    if (!with_base) return true;
    base = query;
    if (!time(req, "baseFrom", "", now, base.from_ms, error) ||
        !time(req, "baseTo", "", now, base.to_ms, error))
      return false;
    if (base.from_ms >= base.to_ms) {
      error = "baseFrom= must come before baseTo=";
      return false;
    }
    return true;
  }
};

std::string flame_of(const store::Query& q, const std::vector<profiles::Stack>& stacks) {
  return profiles::flame_json(store::profile_from_stacks(q.measure, stacks, "profile history"),
                              q.measure);
}

nlohmann::json jvm_json(const store::StoredJvm& j) {
  return {{"host", j.identity.host},
          {"pid", j.identity.pid},
          {"main", j.identity.main},
          {"jvmVersion", j.identity.jvm_version},
          {"startMs", j.identity.start_ms},
          {"labels", j.identity.labels},
          {"firstMs", j.first_ms},
          {"lastMs", j.last_ms},
          {"periods", j.periods}};
}

std::vector<profiles::Measure> all_measures() {
  std::vector<profiles::Measure> out;
  for (int m = 0; m <= static_cast<int>(profiles::Measure::kMonitorTimeMs); ++m)
    out.push_back(static_cast<profiles::Measure>(m));
  return out;
}

// One measure's bars as JSON; the label values seen are added to `values`.
nlohmann::json timeline_points(store::ProfileStore& s, const store::Query& q, int64_t bucket,
                               const std::string& group, std::set<std::string>& values) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : s.timeline(q, bucket, group)) {
    values.insert(p.value);
    points.push_back({{"t", p.bucket_ms}, {"value", p.value}, {"total", p.total}});
  }
  return points;
}

}  // namespace

int64_t history_bucket_ms(int64_t range_ms, int64_t max_buckets) {
  static constexpr int64_t kSteps[] = {1'000,      5'000,      10'000,    30'000,    60'000,
                                       300'000,    600'000,    1'800'000, 3'600'000, 10'800'000,
                                       21'600'000, 43'200'000, 86'400'000};
  for (int64_t step : kSteps)
    if (range_ms <= step * max_buckets) return step;
  // Longer than max_buckets days: whole days, as few as give max_buckets.
  const int64_t day = kSteps[std::size(kSteps) - 1];
  return (range_ms / max_buckets + day - 1) / day * day;
}

void add_history_routes(httplib::Server& server, store::ProfileStore* store) {
  // Without a store every route is 404 (before its parameters are looked at); `answer` runs
  // against the store, and a store error is 500 with its one line.
  auto missing = [store](httplib::Response& res) {
    if (store) return false;
    error_reply(res, 404,
                "no profile history: jvmprof serve runs without --store (see "
                "docs/profile-store.md)");
    return true;
  };
  using Answer = std::function<void(store::ProfileStore&, httplib::Response&)>;
  auto with_store = [store, missing](httplib::Response& res, const Answer& answer) {
    if (missing(res)) return;
    try {
      answer(*store, res);
    } catch (const store::StoreError& e) {
      error_reply(res, 500, e.what());
    }
  };

  server.Get("/api/history", [=](const httplib::Request&, httplib::Response& res) {
    with_store(res, [](store::ProfileStore& s, httplib::Response& r) {
      nlohmann::json measures = nlohmann::json::array();
      for (profiles::Measure m : all_measures()) measures.push_back(profiles::measure_name(m));
      json_reply(r, {{"store", s.describe()},
                     {"measures", std::move(measures)},
                     {"serverNowMs", profiles::wall_clock_ms()}});
    });
  });
  server.Get("/api/history/jvms", [=](const httplib::Request&, httplib::Response& res) {
    with_store(res, [](store::ProfileStore& s, httplib::Response& r) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& j : s.jvms()) list.push_back(jvm_json(j));
      json_reply(r, list);
    });
  });
  server.Get("/api/history/labels", [=](const httplib::Request&, httplib::Response& res) {
    with_store(res,
               [](store::ProfileStore& s, httplib::Response& r) { json_reply(r, s.labels()); });
  });
  server.Get("/api/history/timeline", [=](const httplib::Request& req, httplib::Response& res) {
    if (missing(res)) return;
    HistoryRequest h;
    if (!h.parse(req, false, true)) return error_reply(res, 400, h.error);
    const int64_t range = h.query.to_ms - h.query.from_ms;
    int64_t bucket = history_bucket_ms(range);
    if (req.has_param("bucket")) {
      const std::string b = req.get_param_value("bucket");
      if (b.empty() || b.size() > 12 || b.find_first_not_of("0123456789") != std::string::npos ||
          std::stoll(b) <= 0 || range / std::stoll(b) > kMaxBuckets)
        return error_reply(res, 400,
                           "bucket= must be ms, at most " + std::to_string(kMaxBuckets) +
                               " buckets over the range");
      bucket = std::stoll(b);
    }
    const std::string group = req.get_param_value("group");
    with_store(res, [&](store::ProfileStore& s, httplib::Response& r) {
      nlohmann::json reply = {{"fromMs", h.query.from_ms},
                              {"toMs", h.query.to_ms},
                              {"bucketMs", bucket},
                              {"group", group}};
      if (!h.all) {
        std::set<std::string> values;
        reply["points"] = timeline_points(s, h.query, bucket, group, values);
        reply["measure"] = profiles::measure_name(h.query.measure);
        reply["unit"] = profiles::measure_unit(h.query.measure);
        reply["values"] = values;
        return json_reply(r, reply);
      }
      // Every measure with something in the window, in the measures' order, from one store
      // query; the label values of all of them, so that one value has one colour on every
      // timeline.
      std::set<std::string> values;
      nlohmann::json timelines = nlohmann::json::array();
      for (const auto& [m, bars] : s.timelines(h.query, bucket, group)) {
        if (bars.empty()) continue;
        nlohmann::json points = nlohmann::json::array();
        uint64_t total = 0;
        for (const auto& p : bars) {
          values.insert(p.value);
          total += p.total;
          points.push_back({{"t", p.bucket_ms}, {"value", p.value}, {"total", p.total}});
        }
        timelines.push_back({{"measure", profiles::measure_name(m)},
                             {"unit", profiles::measure_unit(m)},
                             {"total", total},
                             {"points", std::move(points)}});
      }
      reply["measure"] = "all";
      reply["values"] = values;
      reply["timelines"] = std::move(timelines);
      json_reply(r, reply);
    });
  });
  server.Get("/api/history/flame", [=](const httplib::Request& req, httplib::Response& res) {
    if (missing(res)) return;
    HistoryRequest h;
    if (!h.parse(req, false)) return error_reply(res, 400, h.error);
    const std::string format = req.get_param_value("format");
    if (!format.empty() && format != "json" && format != "collapsed")
      return error_reply(res, 400, "format= must be json or collapsed");
    with_store(res, [&](store::ProfileStore& s, httplib::Response& r) {
      const auto stacks = s.query(h.query);
      if (format == "collapsed")
        return r.set_content(profiles::to_collapsed(stacks), "text/plain; charset=utf-8");
      r.set_content(flame_of(h.query, stacks), "application/json");
    });
  });
  server.Get("/api/history/diff", [=](const httplib::Request& req, httplib::Response& res) {
    if (missing(res)) return;
    HistoryRequest h;
    if (!h.parse(req, true)) return error_reply(res, 400, h.error);
    with_store(res, [&](store::ProfileStore& s, httplib::Response& r) {
      // Built as text: each tree is already JSON.
      r.set_content("{\"base\":" + flame_of(h.base, s.query(h.base)) +
                        ",\"target\":" + flame_of(h.query, s.query(h.query)) + "}",
                    "application/json");
    });
  });
}

}  // namespace jvmprof
