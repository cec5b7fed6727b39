// SPDX-License-Identifier: Apache-2.0
#include "heap_object_routes.h"

#include <httplib.h>

#include <cstdio>
#include <functional>

#include "json_reply.h"
#include "session_registry.h"

namespace jvmprof {
namespace {

constexpr uint64_t kMaxPage = 1000;

std::string hex(uint64_t id) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(id));
  return buf;
}

nlohmann::json object_json(const analysis::ObjectInfo& o) {
  return {{"id", hex(o.id)},
          {"class", o.class_name},
          {"shallow", o.shallow_bytes},
          {"retained", o.retained_bytes}};
}

nlohmann::json slots_json(const std::vector<analysis::SlotValue>& slots) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : slots) {
    nlohmann::json j{{"name", s.name}, {"type", s.type}, {"value", s.value}};
    if (!s.declared_by.empty()) j["declaredBy"] = s.declared_by;
    if (s.reference && s.target != 0) {
      j["ref"] = hex(s.target);
      if (s.target_info) j["target"] = object_json(*s.target_info);
    }
    out.push_back(std::move(j));
  }
  return out;
}

const char* kind_name(analysis::ObjectDetail::Kind k) {
  switch (k) {
    case analysis::ObjectDetail::Kind::kObjectArray:
      return "object array";
    case analysis::ObjectDetail::Kind::kPrimitiveArray:
      return "primitive array";
    case analysis::ObjectDetail::Kind::kClass:
      return "class";
    default:
      return "instance";
  }
}

// A number parameter; `fallback` when absent, false when malformed.
bool number_param(const httplib::Request& req, const char* name, uint64_t fallback, uint64_t& out) {
  out = fallback;
  if (!req.has_param(name)) return true;
  try {
    size_t used = 0;
    const std::string v = req.get_param_value(name);
    out = std::stoull(v, &used, 0);
    return used == v.size() && !v.empty() && v[0] != '-';
  } catch (const std::exception&) {
    return false;
  }
}

struct Routes {
  SessionRegistry& registry;

  std::shared_ptr<const analysis::HeapDump> heap(uint32_t id, httplib::Response& res) {
    auto s = registry.find(id);
    if (!s) {
      error_reply(res, 404, "no such profile");
      return nullptr;
    }
    std::string message;
    auto h = s->heap(message);
    if (!h) error_reply(res, 404, message);
    return h;
  }

  // Parses the profile number, id=, offset= and limit=, and runs `f` on the profile's heap.
  void with_object(const httplib::Request& req, httplib::Response& res,
                   const std::function<nlohmann::json(const analysis::HeapDump&, uint64_t id,
                                                      uint64_t offset, uint64_t limit)>& f,
                   bool root_ok = false) {
    uint64_t profile = 0, id = 0, offset = 0, limit = 0;
    // id=root (where allowed): the dominator tree's top, passed on as id 0 (never an object's).
    const bool root = root_ok && req.get_param_value("id") == "root";
    if (!root && (!number_param(req, "id", 0, id) || !req.has_param("id") || id == 0))
      return error_reply(res, 400,
                         root_ok ? "id= must be an object id (0x...) or root"
                                 : "id= must be an object id (0x...)");
    if (!number_param(req, "offset", 0, offset) || !number_param(req, "limit", 100, limit) ||
        limit == 0 || limit > kMaxPage)
      return error_reply(res, 400, "offset= and limit= must be numbers, limit 1..1000");
    try {
      profile = std::stoull(req.matches[1].str());
    } catch (const std::exception&) {
      return error_reply(res, 404, "no such profile");
    }
    auto h = heap(static_cast<uint32_t>(profile), res);
    if (!h) return;
    try {
      json_reply(res, f(*h, id, offset, limit));
    } catch (const analysis::Error& e) {
      error_reply(res, 404, e.what());
    } catch (const std::exception& e) {
      error_reply(res, 500, e.what());
    }
  }

  static nlohmann::json object(const analysis::HeapDump& h, uint64_t id, uint64_t offset,
                               uint64_t limit) {
    const auto d = h.object_detail(id, offset, limit);
    if (!d) throw analysis::Error("no object with id " + hex(id) + " in the dump");
    nlohmann::json j{{"object", object_json(d->object)}, {"kind", kind_name(d->kind)},
                     {"reachable", d->reachable},        {"gcRoots", d->gc_roots},
                     {"fields", slots_json(d->fields)},  {"textDump", h.summary().text_dump}};
    if (d->class_id) j["classId"] = hex(d->class_id);
    if (d->dominator) j["dominator"] = object_json(*d->dominator);
    if (d->kind == analysis::ObjectDetail::Kind::kObjectArray ||
        d->kind == analysis::ObjectDetail::Kind::kPrimitiveArray) {
      j["length"] = d->length;
      j["elementOffset"] = d->element_offset;
      j["elements"] = slots_json(d->elements);
    }
    if (d->kind == analysis::ObjectDetail::Kind::kClass) {
      j["className"] = d->class_name;
      if (d->super_id) j["superId"] = hex(d->super_id);
      if (d->loader_id) j["loaderId"] = hex(d->loader_id);
      j["instanceSize"] = d->instance_size;
      j["statics"] = slots_json(d->statics);
    }
    return j;
  }

  static nlohmann::json referrers(const analysis::HeapDump& h, uint64_t id, uint64_t offset,
                                  uint64_t limit) {
    const auto page = h.referrers(id, offset, limit);
    nlohmann::json list = nlohmann::json::array();
    for (const auto& r : page.referrers)
      list.push_back({{"object", object_json(r.object)}, {"via", r.via}, {"weak", r.weak}});
    return {{"total", page.total}, {"offset", offset}, {"referrers", std::move(list)}};
  }

  // Going down the dominator tree: the objects `id` (0: the GC roots as a whole) immediately
  // dominates, biggest retained first.
  static nlohmann::json dominated(const analysis::HeapDump& h, uint64_t id, uint64_t offset,
                                  uint64_t limit) {
    const auto page = id == 0 ? h.dominator_roots(offset, limit) : h.dominated(id, offset, limit);
    nlohmann::json list = nlohmann::json::array();
    for (const auto& o : page.children) list.push_back(object_json(o));
    return {{"id", id == 0 ? std::string("root") : hex(id)},
            {"total", page.total},
            {"offset", offset},
            {"children", std::move(list)}};
  }

  void diff(const httplib::Request& req, httplib::Response& res) {
    uint64_t before = 0, after = 0;
    if (!number_param(req, "before", 0, before) || !number_param(req, "after", 0, after) ||
        !req.has_param("before") || !req.has_param("after"))
      return error_reply(res, 400, "before= and after= must be profile numbers");
    auto old_heap = heap(static_cast<uint32_t>(before), res);
    if (!old_heap) return;
    auto new_heap = heap(static_cast<uint32_t>(after), res);
    if (!new_heap) return;
    try {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& d : analysis::diff_classes(*old_heap, *new_heap))
        list.push_back({{"class", d.name},
                        {"instancesBefore", d.instances_before},
                        {"instancesAfter", d.instances_after},
                        {"shallowBefore", d.shallow_before},
                        {"shallowAfter", d.shallow_after},
                        {"retainedBefore", d.retained_before},
                        {"retainedAfter", d.retained_after}});
      json_reply(res, {{"before", before}, {"after", after}, {"classes", std::move(list)}});
    } catch (const std::exception& e) {
      error_reply(res, 500, e.what());
    }
  }
};

}  // namespace

void add_heap_object_routes(httplib::Server& server, SessionRegistry& registry) {
  auto routes = std::make_shared<Routes>(Routes{registry});
  server.Get(R"(/api/profiles/(\d+)/heap/object)",
             [routes](const httplib::Request& req, httplib::Response& res) {
               routes->with_object(req, res, &Routes::object);
             });
  server.Get(R"(/api/profiles/(\d+)/heap/referrers)",
             [routes](const httplib::Request& req, httplib::Response& res) {
               routes->with_object(req, res, &Routes::referrers);
             });
  server.Get(R"(/api/profiles/(\d+)/heap/dominated)",
             [routes](const httplib::Request& req, httplib::Response& res) {
               routes->with_object(req, res, &Routes::dominated, true);
             });
  server.Get("/api/heap/diff", [routes](const httplib::Request& req, httplib::Response& res) {
    routes->diff(req, res);
  });
}

}  // namespace jvmprof
