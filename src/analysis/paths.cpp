// SPDX-License-Identifier: Apache-2.0
// Paths from GC roots (breadth-first over strong references) and leak suspects.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <unordered_map>

#include "byte_reader.h"
#include "heap_dump_impl.h"

namespace analysis {

using detail::kNone;

namespace {

const char* root_kind_name(uint8_t kind) {
  switch (kind) {
    case 0xFF:
      return "root: unknown";
    case 0x01:
      return "root: JNI global";
    case 0x02:
      return "root: JNI local";
    case 0x03:
      return "root: Java frame";
    case 0x04:
      return "root: native stack";
    case 0x05:
      return "root: system class";
    case 0x06:
      return "root: thread block";
    case 0x07:
      return "root: busy monitor";
    case 0x08:
      return "root: thread object";
    default:
      return "root";
  }
}

}  // namespace

std::string HeapDump::Impl::describe_reference(uint32_t from, uint32_t to) const {
  using namespace detail;
  const HeapIndex& x = ix();
  std::span<const uint8_t> file = dump();
  const uint32_t ids = x.header.id_size;
  const uint64_t target = id_of(to);
  const uint64_t start = x.node_offset()[from];
  const ClassInfo& k = x.classes[x.node_class()[from]];
  if (k.object == to && k.object != kNone) return "<class>";
  Cursor c(file, start, file.size(), ids);
  c.set_record("object", start);
  const uint8_t tag = c.u1("tag");
  if (tag == 0x21) {
    c.id("id");
    c.u4("trace");
    c.id("class");
    const uint32_t length = c.u4("length");
    c.need(length, "field data");
    const uint8_t* data = c.here();
    uint64_t offset = 0;
    for (uint32_t kk = x.node_class()[from]; kk != kNone; kk = x.classes[kk].super) {
      for (const FieldInfo& f : x.classes[kk].fields) {
        const uint32_t size = dump_value_size(f.type, ids);
        if (offset + size > length) return "?";
        if (f.type == 2 && load_be(data + offset, ids) == target) return f.name;
        offset += size;
      }
      if (offset > length) break;
    }
  } else if (tag == 0x22) {
    c.id("id");
    c.u4("trace");
    const uint32_t count = c.u4("count");
    c.id("class");
    c.need_items(count, ids, "elements");
    for (uint32_t i = 0; i < count; ++i)
      if (load_be(c.here() + uint64_t{i} * ids, ids) == target)
        return std::string("[")
            .append(std::to_string(i))
            .append("]");  // GCC 12: no false -Wrestrict
  } else if (tag == 0x20) {
    // Re-read the class dump's references; statics are named by the UTF8 records, which the
    // index does not keep, so a static is shown by its position unless it is the only match.
    c.id("class id");
    c.u4("trace");
    const char* fixed[] = {"<super>", "<class loader>", "<signers>", "<protection domain>"};
    for (const char* name : fixed)
      if (c.id("id") == target) return name;
    c.id("reserved");
    c.id("reserved");
    c.u4("instance size");
    const uint16_t constants = c.u2("constants");
    for (uint32_t i = 0; i < constants; ++i) {
      const uint16_t index = c.u2("index");
      const uint8_t type = c.u1("type");
      if (type == 2 && c.id("value") == target)
        return "<constant pool " + std::to_string(index) + ">";
      if (type != 2) c.skip(dump_value_size(type, ids), "value");
    }
    const uint16_t statics = c.u2("statics");
    for (uint32_t i = 0; i < statics; ++i) {
      const uint64_t name = c.id("name");
      const uint8_t type = c.u1("type");
      if (type == 2 && c.id("value") == target) return "static " + utf8_name(name);
      if (type != 2) c.skip(dump_value_size(type, ids), "value");
    }
  }
  return "?";
}

std::vector<RootPath> HeapDump::Impl::paths_to(uint32_t node, size_t max_paths) const {
  const detail::HeapIndex& x = ix();
  const uint32_t n = x.node_count;
  if (x.idom()[node] == kNone || max_paths == 0) return {};
  const auto edge_begin = x.edge_begin();
  const auto edge_target = x.edge_target();
  const auto roots = x.roots();
  // Breadth-first from all roots at once; parent[v] = kNone - 1 marks a root.
  constexpr uint32_t kRoot = kNone - 1;
  std::vector<uint32_t> parent(n, kNone), queue;
  queue.reserve(1024);
  for (const auto& r : roots)
    if (parent[r.node] == kNone) parent[r.node] = kRoot, queue.push_back(r.node);
  // The whole search, so that every referrer of `node` has its own shortest path.
  for (size_t head = 0; head < queue.size(); ++head) {
    const uint32_t u = queue[head];
    for (uint64_t e = edge_begin[u]; e < edge_begin[u + 1]; ++e) {
      const uint32_t w = edge_target[e];
      if (parent[w] == kNone) parent[w] = u, queue.push_back(w);
    }
  }
  auto root_name = [&](uint32_t v) -> std::string {
    for (const auto& r : roots)
      if (r.node == v) return root_kind_name(r.kind);
    return "root";
  };
  auto chain = [&](uint32_t last) {
    std::vector<uint32_t> nodes;
    for (uint32_t v = last; v != kRoot && v != kNone; v = parent[v]) {
      nodes.push_back(v);
      if (nodes.size() > n) break;
    }
    std::reverse(nodes.begin(), nodes.end());
    return nodes;
  };
  std::vector<std::vector<uint32_t>> chains;
  if (parent[node] == kRoot) chains.push_back({node});
  // One path per distinct strong referrer, each shortest through that referrer.
  std::vector<uint32_t> referrers;
  for (uint32_t u = 0; u < n; ++u)
    for (uint64_t e = edge_begin[u]; e < edge_begin[u + 1]; ++e)
      if (edge_target[e] == node && u != node && parent[u] != kNone) {
        referrers.push_back(u);
        break;
      }
  for (uint32_t u : referrers) {
    auto c = chain(u);
    if (std::find(c.begin(), c.end(), node) != c.end()) continue;
    c.push_back(node);
    chains.push_back(std::move(c));
  }
  std::stable_sort(chains.begin(), chains.end(),
                   [](const auto& a, const auto& b) { return a.size() < b.size(); });
  if (chains.size() > max_paths) chains.resize(max_paths);
  std::vector<RootPath> out;
  for (const auto& c : chains) {
    RootPath path;
    for (size_t i = 0; i < c.size(); ++i)
      path.push_back({info(c[i]), i == 0 ? root_name(c[0]) : describe_reference(c[i - 1], c[i])});
    out.push_back(std::move(path));
  }
  return out;
}

namespace {

std::string hex(uint64_t id) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(id));
  return buf;
}

// The holder first, in words: "static RESULT_CACHE of class LeakApp", "field cache of Foo 0x12",
// "element [3] of java.lang.Object[] 0x40", "GC root (JNI global)".
std::string held_by_phrase(const Suspect& s) {
  if (s.path.empty()) return "no strong path (reachable only through weak references)";
  if (!s.holder) return "GC root (" + s.holder_via + ")";
  const ObjectInfo& h = *s.holder;
  const std::string who =
      h.class_name.starts_with("class ") ? h.class_name : h.class_name + " " + hex(h.id);
  const std::string& via = s.holder_via;
  if (via.starts_with("static ") || via.starts_with("<")) return via + " of " + who;
  if (via.starts_with("[")) return "element " + via + " of " + who;
  return "field " + via + " of " + who;
}

}  // namespace

// Suspects are ranked by the bytes each alone accounts for. Object suspects are disjoint (none
// is below another: its child on the way would retain the threshold too); a class suspect
// counts only its instances' bytes outside them, and a class whose bytes are mostly inside
// object suspects is the same memory: merged into them, not listed again.
std::vector<Suspect> HeapDump::suspects(double threshold) const {
  const auto& x = impl_->ix();
  const uint32_t n = x.node_count;
  const auto idom = x.idom();
  const auto retained = x.retained();
  const auto node_class = x.node_class();
  const uint64_t total = impl_->reachable_bytes();
  const uint64_t limit = static_cast<uint64_t>(static_cast<double>(total) * threshold);
  std::vector<Suspect> out;
  if (total == 0) return out;
  const auto& t = impl_->tree();
  auto share = [&](uint64_t bytes) {
    return static_cast<double>(bytes) / static_cast<double>(total);
  };
  // The top of the chain of single-child dominators above v, below any class object (a class
  // is a holder, not the leak): the HashMap above its table, the list above its array.
  auto chain_top = [&](uint32_t v) {
    for (size_t depth = 0; depth < n; ++depth) {
      const uint32_t p = idom[v];
      if (p == n || p == kNone || t.begin[p + 1] - t.begin[p] != 1 ||
          node_class[p] == x.class_class)
        break;
      v = p;
    }
    return v;
  };
  // The path to `at` and, on it, who refers to `top` (which dominates `at`, so every path
  // to `at` passes through it) and how.
  auto set_holder = [&](Suspect& s, uint32_t top, uint32_t at) {
    auto paths = impl_->paths_to(at, 1);
    if (!paths.empty()) s.path = std::move(paths[0]);
    const uint64_t top_id = impl_->id_of(top);
    for (size_t i = 0; i < s.path.size(); ++i) {
      if (s.path[i].object.id != top_id) continue;
      s.holder_via = s.path[i].via;
      if (i > 0) s.holder = s.path[i - 1].object;
      break;
    }
    s.held_by = held_by_phrase(s);
  };

  // Objects: where retained bytes accumulate — the deepest objects of the dominator tree that
  // still retain the threshold (none of their children does).
  std::vector<uint32_t> points;
  std::vector<std::vector<ClassStats>> full_content;
  for (uint32_t v = 0; v < n; ++v) {
    if (idom[v] == kNone || retained[v] < limit || retained[v] == 0) continue;
    bool deeper = false;
    for (uint32_t j = t.begin[v]; j < t.begin[v + 1] && !deeper; ++j)
      deeper = retained[t.child[j]] >= limit;
    if (deeper) continue;
    const uint32_t top = chain_top(v);
    Suspect s;
    s.kind = Suspect::Kind::kObject;
    s.object = impl_->info(top);
    s.distinct_bytes = retained[v];
    s.heap_share = share(retained[v]);
    s.accumulation_point = impl_->info(v);
    full_content.push_back(impl_->retained_by_class(v, SIZE_MAX, nullptr));
    s.content.assign(full_content.back().begin(),
                     full_content.back().begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(
                                                       5, full_content.back().size())));
    set_holder(s, top, v);
    points.push_back(v);
    out.push_back(std::move(s));
  }

  // Classes whose instances together retain the threshold.
  const auto& stats = impl_->class_stats();
  std::vector<char> candidate(stats.size(), 0);
  bool any = false;
  for (size_t k = 0; k < stats.size(); ++k)
    if (stats[k].retained_bytes >= limit && stats[k].retained_bytes > 0 &&
        stats[k].instances >= 2 && k != x.class_class)
      candidate[k] = 1, any = true;
  if (any) {
    // Each object's retained bytes outside the object suspects: its own less those of the
    // accumulation points below it (few: walked up once each).
    std::unordered_map<uint32_t, uint64_t> inside_below;
    std::vector<char> is_point(n, 0);
    for (uint32_t a : points) {
      is_point[a] = 1;
      for (uint32_t v = idom[a]; v != n && v != kNone; v = idom[v]) inside_below[v] += retained[a];
    }
    auto outside_of = [&](uint32_t v) {
      auto it = inside_below.find(v);
      return retained[v] - (it == inside_below.end() ? 0 : it->second);
    };
    // One walk of the tree outside the accumulation points; per candidate class, the bytes of
    // its instances with no instance of it above them (the class retained size's rule).
    std::vector<uint64_t> outside(stats.size(), 0);
    std::vector<uint32_t> on_branch(stats.size(), 0), biggest(stats.size(), kNone);
    std::vector<std::pair<uint32_t, bool>> stack{{n, false}};
    while (!stack.empty()) {
      const auto [v, leaving] = stack.back();
      stack.pop_back();
      if (leaving) {
        --on_branch[node_class[v]];
        continue;
      }
      if (v != n) {
        if (is_point[v]) continue;
        const uint32_t k = node_class[v];
        if (candidate[k]) {
          if (on_branch[k] == 0) outside[k] += outside_of(v);
          if (biggest[k] == kNone || outside_of(v) > outside_of(biggest[k])) biggest[k] = v;
          ++on_branch[k];
          stack.push_back({v, true});
        }
      }
      for (uint32_t j = t.begin[v]; j < t.begin[v + 1]; ++j) stack.push_back({t.child[j], false});
    }
    for (size_t k = 0; k < stats.size(); ++k) {
      if (!candidate[k]) continue;
      if (outside[k] < limit) {
        // The same memory as the object suspects: said there.
        for (size_t i = 0; i < points.size(); ++i)
          for (const ClassStats& c : full_content[i])
            if (c.name == stats[k].name && c.instances > 0) out[i].merged_classes.push_back(c);
        continue;
      }
      Suspect s;
      s.kind = Suspect::Kind::kClass;
      s.object.class_name = stats[k].name;
      s.object.retained_bytes = stats[k].retained_bytes;
      s.object.shallow_bytes = stats[k].shallow_bytes;
      s.instances = stats[k].instances;
      s.distinct_bytes = outside[k];
      s.heap_share = share(outside[k]);
      if (biggest[k] != kNone) {
        s.accumulation_point = impl_->info(biggest[k]);
        s.content = impl_->retained_by_class(biggest[k], 5, nullptr);
        set_holder(s, chain_top(biggest[k]), biggest[k]);
      }
      out.push_back(std::move(s));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Suspect& a, const Suspect& b) {
    return a.distinct_bytes > b.distinct_bytes;
  });
  return out;
}

}  // namespace analysis
