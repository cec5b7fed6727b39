// SPDX-License-Identifier: Apache-2.0
// The object view: one object's fields, elements or statics with their values, and its
// referrers (from a reverse index of the reference graph, built on first use). Objects are
// found by id through the index's id table (id_table.h), never by a scan.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "byte_reader.h"
#include "heap_dump_impl.h"

namespace analysis {

using detail::kNone;

namespace {

std::string hex_id(uint64_t id) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, id);
  return buf;
}

const char* type_name(uint8_t type) {
  return type == 2 ? "Object" : detail::primitive_name(type);
}

// A primitive value of HPROF basic type `type` at `p`, in Java notation.
std::string primitive_text(uint8_t type, const uint8_t* p) {
  char buf[64];
  const uint64_t raw = detail::load_be(p, detail::dump_value_size(type, 8));
  switch (type) {
    case 4:
      return raw ? "true" : "false";
    case 5: {  // char: printable ASCII shown as a character, anything else as \uXXXX
      if (raw >= 0x20 && raw < 0x7f && raw != '\'' && raw != '\\')
        std::snprintf(buf, sizeof buf, "'%c'", static_cast<char>(raw));
      else
        std::snprintf(buf, sizeof buf, "'\\u%04x'", static_cast<unsigned>(raw));
      return buf;
    }
    case 6: {
      float f;
      const uint32_t bits = static_cast<uint32_t>(raw);
      std::memcpy(&f, &bits, 4);
      std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(f));
      return buf;
    }
    case 7: {
      double d;
      std::memcpy(&d, &raw, 8);
      std::snprintf(buf, sizeof buf, "%.17g", d);
      return buf;
    }
    case 8:
      return std::to_string(static_cast<int8_t>(raw));
    case 9:
      return std::to_string(static_cast<int16_t>(raw));
    case 10:
      return std::to_string(static_cast<int32_t>(raw));
    case 11:
      return std::to_string(static_cast<int64_t>(raw));
    default:
      return "?";
  }
}

const char* root_kind(uint8_t kind) {
  switch (kind) {
    case 0x01:
      return "JNI global";
    case 0x02:
      return "JNI local";
    case 0x03:
      return "Java frame";
    case 0x04:
      return "native stack";
    case 0x05:
      return "system class";
    case 0x06:
      return "thread block";
    case 0x07:
      return "busy monitor";
    case 0x08:
      return "thread object";
    default:
      return "unknown";
  }
}

}  // namespace

// A slot holding value bytes `p` of `type`; references are resolved against the dump.
static SlotValue make_slot(const HeapDump::Impl& impl, std::string name, uint8_t type,
                           const uint8_t* p) {
  SlotValue s;
  s.name = std::move(name);
  s.type = type_name(type);
  if (type == 2) {
    s.reference = true;
    s.target = detail::load_be(p, impl.ix().header.id_size);
    s.value = s.target == 0 ? "null" : hex_id(s.target);  // target_info: see resolve_targets
  } else {
    s.value = primitive_text(type, p);
  }
  return s;
}

// Fills in the referenced objects of `slots`, each looked up in the id table.
static void resolve_targets(const HeapDump::Impl& impl, const std::vector<SlotValue*>& slots) {
  for (SlotValue* s : slots) {
    if (!s->reference || s->target == 0) continue;
    const uint32_t v = impl.find_node(s->target);
    if (v != kNone) s->target_info = impl.info(v);
  }
}

std::optional<ObjectDetail> HeapDump::object_detail(uint64_t id, uint64_t element_offset,
                                                    uint64_t element_limit) const {
  using namespace detail;
  const Impl& impl = *impl_;
  const HeapIndex& x = impl.ix();
  const uint32_t v = impl.find_node(id);
  if (v == kNone) return std::nullopt;
  std::span<const uint8_t> file = impl.dump();
  const uint32_t ids = x.header.id_size;
  ObjectDetail d;
  d.object = impl.info(v);
  d.reachable = x.idom()[v] != kNone;
  if (x.idom()[v] != kNone && x.idom()[v] != x.node_count) d.dominator = impl.info(x.idom()[v]);
  for (const RootEntry& r : x.roots())
    if (r.node == v) d.gc_roots.push_back(root_kind(r.kind));
  const ClassInfo& k = x.classes[x.node_class()[v]];
  d.class_id = k.id;

  const uint64_t start = x.node_offset()[v];
  Cursor c(file, start, file.size(), ids);
  c.set_record("object", start);
  const uint8_t tag = c.u1("tag");
  if (tag == 0x21) {  // INSTANCE DUMP: the fields of each class of the chain, own class first
    d.kind = ObjectDetail::Kind::kInstance;
    c.id("id");
    c.u4("trace");
    c.id("class");
    const uint32_t length = c.u4("length");
    c.need(length, "field data");
    const uint8_t* data = c.here();
    uint64_t offset = 0;
    size_t depth = 0;
    for (uint32_t kk = x.node_class()[v]; kk != kNone && ++depth <= x.classes.size();
         kk = x.classes[kk].super) {
      for (const FieldInfo& f : x.classes[kk].fields) {
        const uint32_t size = dump_value_size(f.type, ids);
        if (size == 0 || offset + size > length) break;
        // Names that are not Java identifiers are padding for primitive data a text dump
        // does not record (see text_dump.cpp): sized in the layout, never shown as values.
        if (!f.name.starts_with('<')) {
          SlotValue s = make_slot(impl, f.name, f.type, data + offset);
          s.declared_by = x.classes[kk].name;
          d.fields.push_back(std::move(s));
        }
        offset += size;
      }
    }
  } else if (tag == 0x22 || tag == 0x23) {  // object or primitive array: one page of elements
    c.id("id");
    c.u4("trace");
    const uint32_t count = c.u4("count");
    uint8_t type = 2;
    if (tag == 0x22) {
      d.kind = ObjectDetail::Kind::kObjectArray;
      c.id("class");
    } else {
      d.kind = ObjectDetail::Kind::kPrimitiveArray;
      type = c.u1("element type");
    }
    const uint32_t size = dump_value_size(type, ids);
    if (size == 0) c.fail("invalid array element type " + std::to_string(type));
    c.need_items(count, size, "elements");
    d.length = count;
    d.element_offset = std::min<uint64_t>(element_offset, count);
    const uint64_t end = std::min<uint64_t>(count, d.element_offset + element_limit);
    for (uint64_t i = d.element_offset; i < end; ++i)
      d.elements.push_back(
          make_slot(impl, "[" + std::to_string(i) + "]", type, c.here() + i * size));
  } else if (tag == 0x20) {  // CLASS DUMP: the class behind this class object
    d.kind = ObjectDetail::Kind::kClass;
    for (const ClassInfo& ci : x.classes)
      if (ci.object == v) d.class_name = ci.name;
    c.id("class id");
    c.u4("trace");
    d.super_id = c.id("super");
    d.loader_id = c.id("loader");
    c.id("signers");
    c.id("domain");
    c.id("reserved");
    c.id("reserved");
    d.instance_size = c.u4("instance size");
    const uint16_t constants = c.u2("constants");
    for (uint32_t i = 0; i < constants; ++i) {
      c.u2("index");
      const uint8_t type = c.u1("type");
      const uint32_t size = dump_value_size(type, ids);
      if (size == 0) c.fail("invalid constant pool value type " + std::to_string(type));
      c.skip(size, "value");
    }
    const uint16_t statics = c.u2("statics");
    for (uint32_t i = 0; i < statics; ++i) {
      const uint64_t name = c.id("name");
      const uint8_t type = c.u1("type");
      const uint32_t size = dump_value_size(type, ids);
      if (size == 0) c.fail("invalid static field type " + std::to_string(type));
      c.need(size, "static value");
      d.statics.push_back(make_slot(impl, impl.utf8_name(name), type, c.here()));
      c.skip(size, "static value");
    }
  }
  std::vector<SlotValue*> all;
  for (auto* list : {&d.fields, &d.elements, &d.statics})
    for (SlotValue& s : *list) all.push_back(&s);
  resolve_targets(impl, all);
  return d;
}

const HeapDump::Impl::Referrers& HeapDump::Impl::referrer_index() const {
  std::lock_guard lock(lazy_mu);
  if (referrers_) return *referrers_;
  const detail::HeapIndex& x = ix();
  const uint32_t n = x.node_count;
  const auto edge_begin = x.edge_begin();
  const auto edge_target = x.edge_target();
  const auto weak_edges = x.weak_edges();
  auto r = std::make_unique<Referrers>();
  // Reverse CSR of the strong edges, then the weak ones appended per target (marked weak).
  r->begin.assign(static_cast<size_t>(n) + 2, 0);
  for (uint64_t e = 0; e < edge_begin[n]; ++e) ++r->begin[edge_target[e] + 2];
  for (const detail::Edge& e : weak_edges) ++r->begin[e.to + 2];
  for (size_t i = 2; i < r->begin.size(); ++i) r->begin[i] += r->begin[i - 1];
  r->from.resize(r->begin.back());
  r->weak.resize(r->begin.back());
  for (uint32_t u = 0; u < n; ++u)
    for (uint64_t e = edge_begin[u]; e < edge_begin[u + 1]; ++e)
      r->from[r->begin[edge_target[e] + 1]++] = u;
  for (const detail::Edge& e : weak_edges) {
    const uint64_t at = r->begin[e.to + 1]++;
    r->from[at] = e.from;
    r->weak[at] = true;
  }
  r->begin.pop_back();
  referrers_ = std::move(r);
  return *referrers_;
}

ReferrerPage HeapDump::referrers(uint64_t id, uint64_t offset, uint64_t limit) const {
  const Impl& impl = *impl_;
  const uint32_t v = impl.find_node(id);
  if (v == kNone) throw Error("no object with id " + hex_id(id) + " in the dump");
  const Impl::Referrers& r = impl.referrer_index();
  ReferrerPage page;
  const uint64_t begin = r.begin[v], end = r.begin[v + 1];
  page.total = end - begin;
  for (uint64_t i = begin + std::min(offset, page.total); i < end && limit > 0; ++i, --limit) {
    Referrer ref;
    ref.object = impl.info(r.from[i]);
    ref.via = r.weak[i] ? "referent" : impl.describe_reference(r.from[i], v);
    ref.weak = r.weak[i];
    page.referrers.push_back(std::move(ref));
  }
  return page;
}

}  // namespace analysis
