// SPDX-License-Identifier: Apache-2.0
// Duplicate strings: java.lang.String instances grouped by value (the bytes of their `value`
// array and their `coder`), biggest waste first, with the classes that hold them.
#include <algorithm>
#include <unordered_map>

#include "byte_reader.h"
#include "heap_dump_impl.h"

namespace analysis {

using detail::kNone;

namespace {

struct StringValue {
  const uint8_t* data = nullptr;
  uint64_t bytes = 0;
  uint8_t encoding = 0;  // 0 Latin-1 bytes, 1 UTF-16 little-endian bytes, 2 UTF-16 chars (BE)
  uint32_t array = kNone;
};

void append_utf8(std::string& out, uint32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | c >> 6);
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | c >> 12);
    out += static_cast<char>(0x80 | (c >> 6 & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | c >> 18);
    out += static_cast<char>(0x80 | (c >> 12 & 0x3F));
    out += static_cast<char>(0x80 | (c >> 6 & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

std::string to_utf8(const StringValue& v, size_t max_bytes) {
  std::string out;
  if (v.encoding == 0) {
    for (uint64_t i = 0; i < v.bytes && out.size() < max_bytes; ++i) append_utf8(out, v.data[i]);
    return out;
  }
  for (uint64_t i = 0; i + 1 < v.bytes && out.size() < max_bytes; i += 2) {
    auto unit = [&](uint64_t at) -> uint32_t {
      return v.encoding == 1 ? uint32_t{v.data[at]} | uint32_t{v.data[at + 1]} << 8
                             : uint32_t{v.data[at]} << 8 | v.data[at + 1];
    };
    uint32_t c = unit(i);
    if (c >= 0xD800 && c < 0xDC00 && i + 3 < v.bytes) {
      uint32_t low = unit(i + 2);
      if (low >= 0xDC00 && low < 0xE000) {
        c = 0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00);
        i += 2;
      }
    }
    append_utf8(out, c);
  }
  return out;
}

uint64_t fnv(const StringValue& v) {
  uint64_t h = 0xcbf29ce484222325ull ^ v.encoding;
  for (uint64_t i = 0; i < v.bytes; ++i) h = (h ^ v.data[i]) * 0x100000001b3ull;
  return h;
}

bool same(const StringValue& a, const StringValue& b) {
  return a.encoding == b.encoding && a.bytes == b.bytes &&
         (a.bytes == 0 || std::equal(a.data, a.data + a.bytes, b.data));
}

}  // namespace

StringReport HeapDump::duplicate_strings(size_t top, size_t holders_per_value) const {
  // A text dump records no array contents: every string would look alike.
  if (impl_->text_dump) return {};
  using namespace detail;
  const HeapIndex& x = impl_->ix();
  StringReport report;
  uint32_t string_class = kNone;
  for (uint32_t k = 0; k < x.classes.size(); ++k)
    if (x.classes[k].name == "java.lang.String" && x.classes[k].object != kNone) string_class = k;
  if (string_class == kNone) return report;
  const auto edge_begin = x.edge_begin();
  const auto edge_target = x.edge_target();
  const auto node_class = x.node_class();
  const auto node_offset = x.node_offset();
  // Offsets of `value` and `coder` in a String's field data.
  const uint32_t ids = x.header.id_size;
  uint64_t coder_offset = kNone, offset = 0;
  for (uint32_t k = string_class; k != kNone; k = x.classes[k].super)
    for (const FieldInfo& f : x.classes[k].fields) {
      if (f.name == "coder" && f.type == 8 && k == string_class) coder_offset = offset;
      offset += dump_value_size(f.type, ids);
    }
  std::span<const uint8_t> file = impl_->dump();
  auto value_of = [&](uint32_t s) {
    StringValue v;
    // The value array is the String's first strong reference to a primitive array.
    for (uint64_t e = edge_begin[s]; e < edge_begin[s + 1] && v.array == kNone; ++e) {
      uint32_t a = edge_target[e];
      if (x.classes[node_class[a]].kind == ClassKind::kPrimitiveArray) v.array = a;
    }
    if (v.array == kNone) return v;
    const uint64_t at = node_offset[v.array];
    Cursor c(file, at, file.size(), ids);
    c.set_record("PRIM ARRAY DUMP", at);
    c.u1("tag");
    c.id("id");
    c.u4("trace");
    const uint32_t count = c.u4("count");
    const uint8_t type = c.u1("type");
    const uint32_t size = dump_value_size(type, ids);
    c.need_items(count, size, "elements");
    v.data = c.here();
    v.bytes = uint64_t{count} * size;
    if (type == 5) {
      v.encoding = 2;
    } else if (coder_offset != kNone) {
      const uint64_t sat = node_offset[s];
      Cursor f(file, sat, file.size(), ids);
      f.set_record("INSTANCE DUMP", sat);
      f.skip(1 + ids + 4 + ids, "header");
      const uint32_t length = f.u4("length");
      if (coder_offset < length) {
        f.skip(coder_offset, "fields");
        v.encoding = f.u1("coder") == 1 ? 1 : 0;
      }
    }
    return v;
  };
  std::vector<std::pair<uint64_t, uint32_t>> hashed;  // value hash, string node
  const auto idom = x.idom();
  for (uint32_t v = 0; v < x.node_count; ++v) {
    if (node_class[v] != string_class) continue;
    ++report.strings;
    if (idom[v] == kNone) ++report.unreachable_strings;
    StringValue value = value_of(v);
    if (value.array != kNone) hashed.emplace_back(fnv(value), v);
  }
  std::sort(hashed.begin(), hashed.end());
  struct Group {
    std::vector<uint32_t> strings;
    uint64_t wasted = 0;
  };
  std::vector<Group> groups;
  for (size_t i = 0; i < hashed.size();) {
    size_t j = i;
    while (j < hashed.size() && hashed[j].first == hashed[i].first) ++j;
    // Equal hashes: split into equal values (collisions are rare, so this is short).
    std::vector<uint32_t> pending;
    for (size_t m = i; m < j; ++m) pending.push_back(hashed[m].second);
    while (!pending.empty()) {
      StringValue first = value_of(pending[0]);
      Group g;
      std::vector<uint32_t> rest;
      for (uint32_t s : pending) (same(value_of(s), first) ? g.strings : rest).push_back(s);
      pending = std::move(rest);
      ++report.distinct_values;
      if (g.strings.size() < 2) continue;
      std::vector<uint32_t> arrays;
      for (uint32_t s : g.strings) arrays.push_back(value_of(s).array);
      std::sort(arrays.begin(), arrays.end());
      arrays.erase(std::unique(arrays.begin(), arrays.end()), arrays.end());
      g.wasted = (g.strings.size() - 1) * x.shallow(g.strings[0]) +
                 (arrays.size() - 1) * x.shallow(arrays[0]);
      report.duplicated_strings += g.strings.size();
      report.wasted_bytes += g.wasted;
      groups.push_back(std::move(g));
    }
    i = j;
  }
  std::sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) {
    return a.wasted != b.wasted ? a.wasted > b.wasted : a.strings.size() > b.strings.size();
  });
  if (groups.size() > top) groups.resize(top);
  // Who holds them: the classes of the objects referring to the strings of the top groups.
  std::unordered_map<uint32_t, uint32_t> group_of;
  for (uint32_t g = 0; g < groups.size(); ++g)
    for (uint32_t s : groups[g].strings) group_of.emplace(s, g);
  std::vector<std::unordered_map<uint32_t, uint64_t>> holders(groups.size());
  if (!group_of.empty())
    for (uint32_t u = 0; u < x.node_count; ++u)
      for (uint64_t e = edge_begin[u]; e < edge_begin[u + 1]; ++e)
        if (node_class[edge_target[e]] == string_class)
          if (auto it = group_of.find(edge_target[e]); it != group_of.end())
            ++holders[it->second][node_class[u]];
  for (uint32_t g = 0; g < groups.size(); ++g) {
    DuplicateString d;
    d.value = to_utf8(value_of(groups[g].strings[0]), 200);
    d.count = groups[g].strings.size();
    d.wasted_bytes = groups[g].wasted;
    d.example_id = impl_->id_of(groups[g].strings[0]);
    for (auto& [k, count] : holders[g]) d.holders.emplace_back(x.classes[k].name, count);
    std::sort(d.holders.begin(), d.holders.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    if (d.holders.size() > holders_per_value) d.holders.resize(holders_per_value);
    report.top.push_back(std::move(d));
  }
  return report;
}

}  // namespace analysis
