// SPDX-License-Identifier: Apache-2.0
#include "dump_parser.h"

#include <jvmpi.h>

#include <cstring>
#include <fstream>
#include <sstream>

namespace jvmpiheap {

// ---- agent tables ----

Id AgentTables::class_id(const std::string& name) const {
  auto it = class_by_name.find(name);
  return it == class_by_name.end() ? 0 : it->second;
}

Id AgentTables::thread_env(const std::string& name) const {
  for (const auto& [env, n] : threads) {
    if (n == name) return env;
  }
  return 0;
}

AgentTables read_agent_tables(const std::string& path) {
  AgentTables t;
  std::ifstream in(path);
  std::string line;
  ClassInfo* current = nullptr;
  std::vector<Frame>* trace = nullptr;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string kind;
    s >> kind;
    if (kind == "class") {
      ClassInfo c;
      std::string id;
      int ns = 0, ni = 0;
      s >> id >> c.num_interfaces >> ns >> ni >> c.name;
      c.id = std::stoull(id, nullptr, 0);
      auto [it, inserted] = t.classes.emplace(c.id, c);
      current = &it->second;
      if (inserted) t.class_by_name.emplace(c.name, c.id);
    } else if (kind == "s" && current != nullptr) {
      FieldInfo f;
      s >> f.name >> f.signature;
      current->statics.push_back(f);
    } else if (kind == "f" && current != nullptr) {
      FieldInfo f;
      s >> f.name >> f.signature;
      current->instances.push_back(f);
    } else if (kind == "thread") {
      std::string env;
      s >> env;
      std::string name;
      std::getline(s, name);
      if (!name.empty() && name[0] == ' ') name.erase(0, 1);
      t.threads[std::stoull(env, nullptr, 0)] = name;
    } else if (kind == "trace") {
      std::string env;
      s >> env;
      trace = &t.traces[std::stoull(env, nullptr, 0)];
      trace->clear();
    } else if (kind == "frame" && trace != nullptr) {
      int index = 0;
      std::string method;
      Frame f;
      s >> index >> method >> f.line >> f.name;
      f.method = std::stoull(method, nullptr, 0);
      trace->push_back(f);
    } else if (!kind.empty()) {
      std::string rest;
      std::getline(s, rest);
      if (!rest.empty() && rest[0] == ' ') rest.erase(0, 1);
      t.values[kind] = rest;
    }
  }
  return t;
}

// ---- values ----

int type_of_signature(const std::string& signature) {
  switch (signature.empty() ? 'L' : signature[0]) {
    case 'Z':
      return JVMPI_BOOLEAN;
    case 'B':
      return JVMPI_BYTE;
    case 'C':
      return JVMPI_CHAR;
    case 'S':
      return JVMPI_SHORT;
    case 'I':
      return JVMPI_INT;
    case 'J':
      return JVMPI_LONG;
    case 'F':
      return JVMPI_FLOAT;
    case 'D':
      return JVMPI_DOUBLE;
    default:
      return JVMPI_CLASS;
  }
}

size_t value_size(int type) {
  switch (type) {
    case JVMPI_BOOLEAN:
    case JVMPI_BYTE:
      return 1;
    case JVMPI_CHAR:
    case JVMPI_SHORT:
      return 2;
    case JVMPI_INT:
    case JVMPI_FLOAT:
      return 4;
    case JVMPI_LONG:
    case JVMPI_DOUBLE:
      return 8;
    case JVMPI_CLASS:
    case JVMPI_NORMAL_OBJECT:
      return sizeof(void*);
    default:
      return 0;
  }
}

float Value::as_float() const {
  const uint32_t b = static_cast<uint32_t>(bits);
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

double Value::as_double() const {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

namespace {

// Reads the buffer front to back; every read is bounds-checked and names its offset on failure.
class Reader {
 public:
  explicit Reader(const std::string& b) : b_(b) {}

  bool done() const { return pos_ == b_.size(); }
  size_t pos() const { return pos_; }
  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }

  void fail(const std::string& what) {
    if (error_.empty()) error_ = what + " at offset " + std::to_string(pos_);
  }

  bool need(size_t n, const char* what) {
    if (failed()) return false;
    if (b_.size() - pos_ < n) {
      fail(std::string("truncated ") + what + " (" + std::to_string(n) + " bytes wanted, " +
           std::to_string(b_.size() - pos_) + " left)");
      return false;
    }
    return true;
  }

  uint64_t be(size_t n, const char* what) {
    if (!need(n, what)) return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<unsigned char>(b_[pos_ + i]);
    pos_ += n;
    return v;
  }
  uint8_t u1(const char* what) { return static_cast<uint8_t>(be(1, what)); }
  uint16_t u2(const char* what) { return static_cast<uint16_t>(be(2, what)); }
  uint32_t u4(const char* what) { return static_cast<uint32_t>(be(4, what)); }

  Id id(const char* what) {
    if (!need(sizeof(void*), what)) return 0;
    uint64_t v = 0;
    std::memcpy(&v, b_.data() + pos_, sizeof(void*));  // native size and byte order
    pos_ += sizeof(void*);
    return v;
  }

  Value value(int type, const char* what) {
    Value v;
    v.type = type;
    if (type == JVMPI_CLASS) {
      v.bits = id(what);
    } else {
      const size_t n = value_size(type);
      if (n == 0) {
        fail(std::string("bad value type ") + std::to_string(type) + " in " + what);
        return v;
      }
      v.bits = be(n, what);
    }
    return v;
  }

  std::string bytes(size_t n, const char* what) {
    if (!need(n, what)) return {};
    std::string s = b_.substr(pos_, n);
    pos_ += n;
    return s;
  }

 private:
  const std::string& b_;
  size_t pos_ = 0;
  std::string error_;
};

bool is_primitive_type(int t) {
  return t == JVMPI_BOOLEAN || t == JVMPI_BYTE || t == JVMPI_CHAR || t == JVMPI_SHORT ||
         t == JVMPI_INT || t == JVMPI_LONG || t == JVMPI_FLOAT || t == JVMPI_DOUBLE;
}

template <typename Map>
void put_unique(Map& map, Id id, typename Map::mapped_type value, HeapDump* out) {
  if (!map.emplace(id, std::move(value)).second) ++out->duplicate_ids;
}

// One record of levels 1/2 (or the one record of an object dump), its type byte already read.
bool parse_record(Reader& r, uint8_t type, int level, const AgentTables& tables, HeapDump* out,
                  bool objects_only) {
  if (objects_only && (type < JVMPI_GC_CLASS_DUMP || type > JVMPI_GC_PRIM_ARRAY_DUMP)) {
    r.fail("object dump holds a root record of type " + std::to_string(type));
    return false;
  }
  Root root;
  root.kind = type;
  switch (type) {
    case JVMPI_GC_ROOT_UNKNOWN:
    case JVMPI_GC_ROOT_STICKY_CLASS:
    case JVMPI_GC_ROOT_MONITOR_USED:
      root.object = r.id("root object");
      out->roots.push_back(root);
      break;
    case JVMPI_GC_ROOT_JNI_GLOBAL:
    case JVMPI_GC_ROOT_NATIVE_STACK:
    case JVMPI_GC_ROOT_THREAD_BLOCK:
      root.object = r.id("root object");
      root.aux = r.id("root reference/thread");
      out->roots.push_back(root);
      break;
    case JVMPI_GC_ROOT_JNI_LOCAL:
    case JVMPI_GC_ROOT_JAVA_FRAME:
      root.object = r.id("root object");
      root.aux = r.id("root thread");
      root.frame = r.u4("root frame");
      out->roots.push_back(root);
      break;
    case JVMPI_GC_CLASS_DUMP: {
      ClassDump c;
      c.id = r.id("class id");
      c.super = r.id("super");
      c.loader = r.id("loader");
      c.signers = r.id("signers");
      c.protection_domain = r.id("protection domain");
      c.name = r.id("class name slot");
      c.reserved = r.id("reserved slot");
      c.instance_size = r.u4("instance size");
      auto info = tables.classes.find(c.id);
      c.known = info != tables.classes.end();
      const int interfaces = c.known ? info->second.num_interfaces : 0;
      for (int i = 0; i < interfaces; ++i) c.interfaces.push_back(r.id("interface"));
      const uint16_t cp = r.u2("constant pool count");
      for (uint16_t i = 0; i < cp && !r.failed(); ++i) {
        ConstantPoolEntry e;
        e.index = r.u2("constant pool index");
        e.type = r.u1("constant pool type");
        e.value = r.value(e.type, "constant pool value");
        c.constant_pool.push_back(e);
      }
      if (c.known) {
        for (const auto& f : info->second.statics) {
          const int t = type_of_signature(f.signature);
          if (level < 2 && t != JVMPI_CLASS) continue;
          c.statics.push_back(r.value(t, "static value"));
        }
      }
      put_unique(out->classes, c.id, std::move(c), out);
      break;
    }
    case JVMPI_GC_INSTANCE_DUMP: {
      InstanceDump d;
      d.id = r.id("instance id");
      d.class_id = r.id("instance class");
      const uint32_t n = r.u4("instance byte count");
      d.data = r.bytes(n, "instance values");
      put_unique(out->instances, d.id, std::move(d), out);
      break;
    }
    case JVMPI_GC_OBJ_ARRAY_DUMP: {
      ObjArrayDump a;
      a.id = r.id("array id");
      const uint32_t n = r.u4("array length");
      a.element_class = r.id("element class");
      if (!r.need(static_cast<size_t>(n) * sizeof(void*), "array elements")) return false;
      a.elements.reserve(n);
      for (uint32_t i = 0; i < n; ++i) a.elements.push_back(r.id("element"));
      put_unique(out->obj_arrays, a.id, std::move(a), out);
      break;
    }
    case JVMPI_GC_PRIM_ARRAY_DUMP: {
      PrimArrayDump a;
      a.id = r.id("array id");
      a.count = r.u4("array length");
      a.type = r.u1("element type");
      if (!is_primitive_type(a.type)) {
        r.fail("primitive array of type " + std::to_string(a.type));
        return false;
      }
      if (level >= 2)
        a.data = r.bytes(static_cast<size_t>(a.count) * value_size(a.type), "elements");
      put_unique(out->prim_arrays, a.id, std::move(a), out);
      break;
    }
    default:
      r.fail("unknown record type " + std::to_string(type));
      return false;
  }
  ++out->records;
  return !r.failed();
}

}  // namespace

Value PrimArrayDump::element(uint32_t i) const {
  Value v;
  v.type = type;
  const size_t n = value_size(type);
  if (i >= count || data.size() < (static_cast<size_t>(i) + 1) * n) return v;
  for (size_t k = 0; k < n; ++k)
    v.bits = (v.bits << 8) | static_cast<unsigned char>(data[i * n + k]);
  return v;
}

bool parse_heap_dump(const std::string& buffer, int level, const AgentTables& tables, HeapDump* out,
                     std::string* error) {
  *out = HeapDump{};
  out->level = level;
  Reader r(buffer);
  while (!r.done() && !r.failed()) {
    const uint8_t type = r.u1("record type");
    if (level == 0) {
      if (type != JVMPI_NORMAL_OBJECT && type != JVMPI_CLASS && !is_primitive_type(type)) {
        r.fail("level-0 object type " + std::to_string(type));
        break;
      }
      out->level0.emplace_back(type, r.id("object id"));
      ++out->records;
    } else {
      parse_record(r, type, level, tables, out, false);
    }
  }
  if (r.failed()) {
    *error = r.error();
    return false;
  }
  return true;
}

bool parse_object_dump(const std::string& buffer, const AgentTables& tables, HeapDump* out,
                       std::string* error) {
  *out = HeapDump{};
  Reader r(buffer);
  const uint8_t type = r.u1("record type");
  parse_record(r, type, 2, tables, out, true);
  if (!r.failed() && !r.done()) {
    r.fail(std::to_string(buffer.size() - r.pos()) + " bytes after the one record");
  }
  if (r.failed()) {
    *error = r.error();
    return false;
  }
  return true;
}

std::optional<Value> field_value(const HeapDump& dump, const AgentTables& tables,
                                 const InstanceDump& instance, const std::string& field) {
  size_t offset = 0;
  Id k = instance.class_id;
  for (int depth = 0; k != 0 && depth < 64; ++depth) {
    auto info = tables.classes.find(k);
    if (info == tables.classes.end()) return std::nullopt;
    for (const auto& f : info->second.instances) {
      const int t = type_of_signature(f.signature);
      if (dump.level < 2 && t != JVMPI_CLASS) {
        if (f.name == field) return std::nullopt;  // level 1 leaves primitives out
        continue;
      }
      const size_t n = value_size(t);
      if (f.name == field) {
        if (offset + n > instance.data.size()) return std::nullopt;
        Reader r(instance.data);
        r.bytes(offset, "skip");
        return r.value(t, "field");
      }
      offset += n;
    }
    auto c = dump.classes.find(k);
    if (c == dump.classes.end()) return std::nullopt;
    k = c->second.super;
  }
  return std::nullopt;
}

std::optional<size_t> instance_bytes(const HeapDump& dump, const AgentTables& tables, Id class_id) {
  size_t total = 0;
  Id k = class_id;
  for (int depth = 0; k != 0 && depth < 64; ++depth) {
    auto info = tables.classes.find(k);
    if (info == tables.classes.end()) return std::nullopt;
    for (const auto& f : info->second.instances) {
      const int t = type_of_signature(f.signature);
      if (dump.level >= 2 || t == JVMPI_CLASS) total += value_size(t);
    }
    if (info->second.name == "java.lang.Object") break;  // the root: no superclass
    auto c = dump.classes.find(k);
    if (c == dump.classes.end()) return std::nullopt;
    k = c->second.super;
  }
  return total;
}

std::optional<Value> static_value(const HeapDump& dump, const AgentTables& tables,
                                  const ClassDump& klass, const std::string& field) {
  auto info = tables.classes.find(klass.id);
  if (info == tables.classes.end()) return std::nullopt;
  size_t i = 0;
  for (const auto& f : info->second.statics) {
    const int t = type_of_signature(f.signature);
    if (dump.level < 2 && t != JVMPI_CLASS) {
      if (f.name == field) return std::nullopt;
      continue;
    }
    if (f.name == field) {
      return i < klass.statics.size() ? std::optional<Value>(klass.statics[i]) : std::nullopt;
    }
    ++i;
  }
  return std::nullopt;
}

bool parse_monitor_dump(const std::string& buffer, std::vector<MonitorRecord>* out,
                        std::string* error) {
  out->clear();
  Reader r(buffer);
  while (!r.done() && !r.failed()) {
    MonitorRecord m;
    m.kind = r.u1("monitor type");
    if (m.kind == JVMPI_MONITOR_JAVA) {
      m.object = r.id("monitor object");
    } else if (m.kind == JVMPI_MONITOR_RAW) {
      m.name_ptr = r.id("raw monitor name");
      m.raw_id = r.id("raw monitor id");
    } else {
      r.fail("unknown monitor type " + std::to_string(m.kind));
      break;
    }
    m.owner = r.id("owner");
    m.entry_count = r.u4("entry count");
    const uint32_t enter = r.u4("waiting-to-enter count");
    if (!r.need(static_cast<size_t>(enter) * sizeof(void*), "waiting-to-enter list")) break;
    for (uint32_t i = 0; i < enter; ++i) m.waiting_to_enter.push_back(r.id("thread"));
    const uint32_t notify = r.u4("waiting-to-be-notified count");
    if (!r.need(static_cast<size_t>(notify) * sizeof(void*), "waiting-to-be-notified list")) break;
    for (uint32_t i = 0; i < notify; ++i) m.waiting_to_be_notified.push_back(r.id("thread"));
    if (!r.failed()) out->push_back(std::move(m));
  }
  if (r.failed()) {
    *error = r.error();
    return false;
  }
  return true;
}

}  // namespace jvmpiheap
