// Text heap dumps (HPROF format=a, docs/hprof-text-format.md "HEAP DUMP") as binary dumps, so
// that every heap view works on them. The text records references only: each OBJ lists its
// non-null reference fields by name, ARR lists non-null elements, primitive values are absent.
// The conversion keeps everything the text has and makes up only what the binary layout needs:
//  - a class's instance fields are the reference field names seen in its direct instances,
//    less those an ancestor already has (the text does not say which class declares a field);
//  - primitive data is padding fields named "<primitive data>" sized so that an instance's
//    shallow size is its `sz=`; primitive arrays hold zeros (the object view shows neither, and
//    the duplicate-strings view is empty for a text dump);
//  - classes named by OBJ/ARR lines but without a CLS record get a class record.
#include "text_dump.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <unordered_map>
#include <vector>

#include "analysis.h"

namespace analysis::detail {
namespace {

struct TextClass {
  uint64_t id = 0;
  std::string name;  // Java name
  uint64_t super = 0, loader = 0, signers = 0, domain = 0;
  uint32_t trace = 0;
  std::vector<std::pair<std::string, uint64_t>> statics;
  std::vector<std::pair<uint16_t, uint64_t>> constants;
  bool dumped = false;  // had a CLS record
  // Layout (computed): own reference fields, then padding bytes.
  std::map<std::string, uint32_t> seen;  // field name -> most copies in one direct instance
  std::vector<std::string> seen_order;
  std::vector<std::string> own_fields;
  uint32_t target_size = 0;  // sz= of its direct instances (largest)
  uint32_t own_padding = 0;
};

struct TextObject {
  enum Kind : uint8_t { kInstance, kObjectArray, kPrimitiveArray } kind = kInstance;
  uint8_t element_type = 0;
  uint64_t id = 0, class_id = 0;
  uint32_t trace = 0, size = 0, count = 0;
  std::vector<std::pair<std::string, uint64_t>> refs;  // fields, or "[i]" elements
};

struct TextRoot {
  uint8_t kind = 0xFF;
  uint64_t id = 0, extra = 0;
  uint32_t thread = 0, frame_or_trace = 0;
};

[[noreturn]] void bad(const std::string& path, uint64_t line, const std::string& what) {
  throw Error(path + ": line " + std::to_string(line) + ": " + what);
}

bool parse_hex(std::string_view s, uint64_t& out) {
  if (s.empty() || s.size() > 16) return false;
  out = 0;
  for (char ch : s) {
    int d = ch >= '0' && ch <= '9'   ? ch - '0'
            : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
            : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                     : -1;
    if (d < 0) return false;
    out = out << 4 | static_cast<unsigned>(d);
  }
  return true;
}

// The decimal value after `key` in `s` ("sz=" -> 24); false if absent.
bool number_after(std::string_view s, std::string_view key, uint64_t& out) {
  const size_t at = s.find(key);
  if (at == std::string_view::npos) return false;
  size_t i = at + key.size();
  bool negative = i < s.size() && s[i] == '-';
  if (negative) ++i;
  if (i >= s.size() || s[i] < '0' || s[i] > '9') return false;
  out = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) out = out * 10 + (s[i] - '0');
  if (negative) out = static_cast<uint64_t>(-static_cast<int64_t>(out));
  return true;
}

uint8_t primitive_array_type(std::string_view name) {
  static const char* const kNames[] = {"boolean[]", "char[]",  "float[]", "double[]",
                                       "byte[]",    "short[]", "int[]",   "long[]"};
  for (uint8_t i = 0; i < 8; ++i)
    if (name == kNames[i]) return static_cast<uint8_t>(4 + i);
  return 0;
}

uint32_t primitive_bytes(uint8_t type) {
  static const uint32_t kBytes[] = {1, 2, 4, 8, 1, 2, 4, 8};
  return type >= 4 && type <= 11 ? kBytes[type - 4] : 0;
}

// HPROF's own class name of a Java name: "java.lang.String" -> "java/lang/String",
// "int[][]" -> "[[I", "Foo[]" -> "[LFoo;".
std::string hprof_class_name(std::string_view java) {
  size_t dims = 0;
  while (java.size() >= 2 && java.ends_with("[]")) java.remove_suffix(2), ++dims;
  std::string base(java);
  std::replace(base.begin(), base.end(), '.', '/');
  if (dims == 0) return base;
  static const std::pair<const char*, char> kCodes[] = {
      {"boolean", 'Z'}, {"char", 'C'},  {"float", 'F'}, {"double", 'D'},
      {"byte", 'B'},    {"short", 'S'}, {"int", 'I'},   {"long", 'J'}};
  std::string out(dims, '[');
  for (const auto& [name, code] : kCodes)
    if (java == name) return out + code;
  return out + "L" + base + ";";
}

class Parser {
 public:
  explicit Parser(std::string path) : path_(std::move(path)) {}

  // Reads the newest complete HEAP DUMP section.
  void read() {
    std::ifstream in(path_, std::ios::binary);
    if (!in) throw Error(path_ + ": " + std::strerror(errno));
    std::string line;
    uint64_t number = 0;
    bool inside = false, complete = false;
    while (std::getline(in, line)) {
      ++number;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.starts_with("HEAP DUMP BEGIN")) {
        inside = true;
        pending_.clear();
        pending_.emplace_back(number, std::string());
        continue;
      }
      if (!inside) continue;
      if (line == "HEAP DUMP END") {
        inside = false;
        complete = true;
        // Parsed at the end of each complete section so that a cut-off newer one leaves the
        // older complete one in place.
        parse(pending_);
        pending_.clear();
        continue;
      }
      pending_.emplace_back(number, std::move(line));
    }
    if (!complete) throw Error(path_ + ": no complete HEAP DUMP section in the text profile");
  }

  void write(const std::string& out_path);

 private:
  void parse(const std::vector<std::pair<uint64_t, std::string>>& lines) {
    classes_.clear();
    objects_.clear();
    roots_.clear();
    TextObject* object = nullptr;
    TextClass* klass = nullptr;
    for (size_t i = 1; i < lines.size(); ++i) {
      const uint64_t n = lines[i].first;
      std::string_view l = lines[i].second;
      if (l.empty()) continue;
      if (l[0] == '\t') {
        // "\tname\t[\t]hex": the name is everything before the last tab run.
        const size_t tab = l.rfind('\t');
        uint64_t value = 0;
        if (tab == 0 || !parse_hex(l.substr(tab + 1), value)) bad(path_, n, "malformed value line");
        std::string_view name = l.substr(1, tab - 1);
        while (!name.empty() && name.back() == '\t') name.remove_suffix(1);
        if (object) {
          object->refs.emplace_back(std::string(name), value);
        } else if (klass) {
          if (name == "super")
            klass->super = value;
          else if (name == "loader")
            klass->loader = value;
          else if (name == "signers")
            klass->signers = value;
          else if (name == "domain")
            klass->domain = value;
          else if (name.starts_with("static "))
            klass->statics.emplace_back(name.substr(7), value);
          else if (name.starts_with("constant pool entry ")) {
            uint64_t index = 0;
            if (!number_after(name, "entry ", index)) bad(path_, n, "malformed constant pool line");
            klass->constants.emplace_back(static_cast<uint16_t>(index), value);
          }
        } else {
          bad(path_, n, "value line outside an OBJ, ARR or CLS record");
        }
        continue;
      }
      object = nullptr;
      klass = nullptr;
      const size_t space = l.find(' ');
      const size_t paren = l.find(" (");
      uint64_t id = 0;
      if (space == std::string_view::npos || paren == std::string_view::npos || !l.ends_with(")") ||
          !parse_hex(l.substr(space + 1, paren - space - 1), id))
        bad(path_, n, "malformed heap dump record");
      std::string_view kind = l.substr(0, space);
      std::string_view attrs = l.substr(paren + 2, l.size() - paren - 3);
      if (kind == "ROOT") {
        roots_.push_back(root(n, id, attrs));
      } else if (kind == "OBJ" || kind == "ARR") {
        TextObject o;
        o.id = id;
        uint64_t v = 0;
        if (!number_after(attrs, "sz=", v)) bad(path_, n, "no sz=");
        o.size = static_cast<uint32_t>(v);
        if (number_after(attrs, "trace=", v)) o.trace = static_cast<uint32_t>(v);
        const std::string_view key = kind == "OBJ" ? "class=" : "elem type=";
        const size_t at = attrs.find(key);
        if (at == std::string_view::npos) bad(path_, n, "no " + std::string(key));
        std::string_view type = attrs.substr(at + key.size());
        const size_t amp = type.rfind('@');
        uint64_t class_id = 0;
        if (amp != std::string_view::npos && parse_hex(type.substr(amp + 1), class_id))
          type = type.substr(0, amp);
        if (kind == "ARR") {
          if (!number_after(attrs, "nelems=", v)) bad(path_, n, "no nelems=");
          o.count = static_cast<uint32_t>(v);
          o.element_type = primitive_array_type(type);
          o.kind = o.element_type ? TextObject::kPrimitiveArray : TextObject::kObjectArray;
        }
        if (o.kind != TextObject::kPrimitiveArray) o.class_id = class_of(class_id, type);
        objects_.push_back(std::move(o));
        object = &objects_.back();
      } else if (kind == "CLS") {
        const size_t name_at = attrs.find("name=");
        const size_t trace_at = attrs.rfind(", trace=");
        if (name_at != 0 || trace_at == std::string_view::npos) bad(path_, n, "malformed CLS");
        const uint64_t k = class_of(id, attrs.substr(5, trace_at - 5));
        klass = &classes_[by_id_.at(k)];
        klass->dumped = true;
        klass->name = std::string(attrs.substr(5, trace_at - 5));
        uint64_t v = 0;
        if (number_after(attrs.substr(trace_at), "trace=", v))
          klass->trace = static_cast<uint32_t>(v);
      } else {
        bad(path_, n, "unknown heap dump record '" + std::string(kind) + "'");
      }
    }
  }

  TextRoot root(uint64_t n, uint64_t id, std::string_view attrs) {
    TextRoot r;
    r.id = id;
    uint64_t v = 0;
    auto num = [&](std::string_view key) {
      return number_after(attrs, key, v) ? static_cast<uint32_t>(v) : 0u;
    };
    if (attrs.starts_with("kind=<thread>")) {
      r.kind = 0x08;
      r.thread = num("id=");
      r.frame_or_trace = num("trace=");
    } else if (attrs.starts_with("kind=<thread block>")) {
      r.kind = 0x06;
      r.thread = num("thread=");
    } else if (attrs.starts_with("kind=<Java stack>")) {
      r.kind = 0x03;
      r.thread = num("thread=");
      r.frame_or_trace = num("frame=");
    } else if (attrs.starts_with("kind=<JNI local ref>")) {
      r.kind = 0x02;
      r.thread = num("thread=");
      r.frame_or_trace = num("frame=");
    } else if (attrs.starts_with("kind=<JNI global ref>")) {
      r.kind = 0x01;
      const size_t at = attrs.find("id=");
      if (at != std::string_view::npos) {
        std::string_view rest = attrs.substr(at + 3);
        parse_hex(rest.substr(0, rest.find(',')), r.extra);
      }
    } else if (attrs.starts_with("kind=<system class>")) {
      r.kind = 0x05;
    } else if (attrs.starts_with("kind=<native stack>")) {
      r.kind = 0x04;
      r.thread = num("thread=");
    } else if (attrs.starts_with("kind=<busy monitor>")) {
      r.kind = 0x07;
    } else if (attrs.starts_with("kind=<unknown>")) {
      r.kind = 0xFF;
    } else {
      bad(path_, n, "unknown ROOT kind");
    }
    return r;
  }

  // The class with this id (0: none given, found or made up by name).
  uint64_t class_of(uint64_t id, std::string_view name) {
    if (id == 0) {
      auto it = by_name_.find(std::string(name));
      if (it != by_name_.end()) return classes_[it->second].id;
      id = next_made_up_id_--;
    }
    auto [it, inserted] = by_id_.try_emplace(id, classes_.size());
    if (inserted) {
      TextClass k;
      k.id = id;
      k.name = std::string(name);
      classes_.push_back(std::move(k));
      by_name_.emplace(std::string(name), it->second);
    }
    return id;
  }

  void layout();

  std::string path_;
  std::vector<std::pair<uint64_t, std::string>> pending_;
  std::vector<TextClass> classes_;
  std::unordered_map<uint64_t, size_t> by_id_;
  std::unordered_map<std::string, size_t> by_name_;
  std::vector<TextObject> objects_;
  std::vector<TextRoot> roots_;
  uint64_t next_made_up_id_ = ~uint64_t{0} - 15;  // ids for classes named only by OBJ/ARR
};

void Parser::layout() {
  // java.lang.ref.Reference declares `referent` (the indexer treats it as a weak reference
  // there only); Reference itself is abstract, so its subclasses' instances name the field.
  auto reference = by_name_.find("java.lang.ref.Reference");
  std::vector<int8_t> is_reference(classes_.size(), -1);  // -1: not known yet
  auto extends_reference = [&](size_t i) {
    if (reference == by_name_.end()) return false;
    if (is_reference[i] < 0) {
      size_t k = i, depth = 0;
      while (k != reference->second && ++depth <= classes_.size()) {
        auto it = by_id_.find(classes_[k].super);
        if (classes_[k].super == 0 || it == by_id_.end()) break;
        k = it->second;
      }
      is_reference[i] = k == reference->second;
    }
    return is_reference[i] == 1;
  };
  for (const TextObject& o : objects_) {
    if (o.kind != TextObject::kInstance) continue;
    const size_t index = by_id_.at(o.class_id);
    TextClass& k = classes_[index];
    k.target_size = std::max(k.target_size, o.size);
    std::map<std::string, uint32_t> copies;
    for (const auto& [name, value] : o.refs) {
      const uint32_t c = ++copies[name];
      TextClass& owner =
          name == "referent" && extends_reference(index) ? classes_[reference->second] : k;
      uint32_t& seen = owner.seen[name];
      if (c > seen) {
        if (seen == 0) owner.seen_order.push_back(name);
        seen = c;
      }
    }
  }
  // Ancestors first, so that each class knows what its chain already declares.
  std::vector<int> done(classes_.size(), 0);
  std::vector<uint32_t> chain_refs(classes_.size()), chain_padding(classes_.size());
  auto super_index = [&](size_t i) -> size_t {
    auto it = by_id_.find(classes_[i].super);
    return it == by_id_.end() || classes_[i].super == 0 ? SIZE_MAX : it->second;
  };
  std::vector<std::map<std::string, uint32_t>> chain_fields(classes_.size());
  for (size_t start = 0; start < classes_.size(); ++start) {
    std::vector<size_t> stack;
    for (size_t i = start; i != SIZE_MAX && !done[i] && stack.size() <= classes_.size();
         i = super_index(i))
      stack.push_back(i);
    while (!stack.empty()) {
      const size_t i = stack.back();
      stack.pop_back();
      if (done[i]) continue;
      done[i] = 1;
      TextClass& k = classes_[i];
      const size_t s = super_index(i);
      std::map<std::string, uint32_t> have =
          s != SIZE_MAX && done[s] ? chain_fields[s] : std::map<std::string, uint32_t>();
      const uint32_t super_refs = s != SIZE_MAX ? chain_refs[s] : 0;
      const uint32_t super_padding = s != SIZE_MAX ? chain_padding[s] : 0;
      for (const std::string& name : k.seen_order)
        for (uint32_t c = have[name]; c < k.seen[name]; ++c) k.own_fields.push_back(name);
      for (const std::string& name : k.own_fields) ++have[name];
      chain_refs[i] = super_refs + static_cast<uint32_t>(k.own_fields.size());
      // VM size of an instance: 12 header bytes, 4 per reference, the padding, 8-aligned.
      const uint64_t used = 12 + 4 * uint64_t{chain_refs[i]} + super_padding;
      // No padding where alignment alone makes the size (java.lang.Object: 12 -> 16), so that
      // subclasses do not inherit padding their instances do not have.
      if (k.target_size > ((used + 7) & ~uint64_t{7}))
        k.own_padding = static_cast<uint32_t>(k.target_size - used);
      chain_padding[i] = super_padding + k.own_padding;
      chain_fields[i] = std::move(have);
    }
  }
}

class Out {
 public:
  void u1(uint8_t v) { b_.push_back(static_cast<char>(v)); }
  void u2(uint16_t v) { be(v, 2); }
  void u4(uint32_t v) { be(v, 4); }
  void id(uint64_t v) { be(v, 8); }
  void zeros(uint64_t n) { b_.append(n, '\0'); }
  void bytes(std::string_view s) { b_.append(s); }
  std::string& str() { return b_; }

 private:
  void be(uint64_t v, int n) {
    for (int i = n - 1; i >= 0; --i) b_.push_back(static_cast<char>(v >> (8 * i)));
  }
  std::string b_;
};

void Parser::write(const std::string& out_path) {
  layout();
  const std::string tmp = out_path + ".tmp" + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw Error(out_path + ": " + std::strerror(errno));
  bool ok = true;
  auto put = [&](const std::string& s) {
    ok = ok && std::fwrite(s.data(), 1, s.size(), f) == s.size();
  };
  auto record = [&](uint8_t tag, const std::string& body) {
    Out r;
    r.u1(tag);
    r.u4(0);
    r.u4(static_cast<uint32_t>(body.size()));
    put(r.str());
    put(body);
  };
  Out header;
  header.bytes(std::string_view("JAVA PROFILE 1.0.2", 19));  // with its NUL
  header.u4(8);
  header.id(0);
  put(header.str());

  std::unordered_map<std::string, uint64_t> names;
  auto name_id = [&](const std::string& s) {
    auto [it, inserted] = names.try_emplace(s, names.size() + 1);
    if (inserted) {
      Out body;
      body.id(it->second);
      body.bytes(s);
      record(0x01, body.str());
    }
    return it->second;
  };
  const uint64_t padding_name = name_id("<primitive data>");
  uint32_t serial = 0;
  for (const TextClass& k : classes_) {
    Out body;
    body.u4(++serial);
    body.id(k.id);
    body.u4(k.trace);
    body.id(name_id(hprof_class_name(k.name)));
    record(0x02, body.str());
  }
  // The heap: segments of up to 16 MiB of sub-records.
  Out seg;
  auto flush = [&](bool force) {
    if (seg.str().size() > (16u << 20) || (force && !seg.str().empty())) {
      record(0x1C, seg.str());
      seg.str().clear();
    }
  };
  for (const TextRoot& r : roots_) {
    seg.u1(r.kind);
    seg.id(r.id);
    switch (r.kind) {
      case 0x01:
        seg.id(r.extra);
        break;
      case 0x02:
      case 0x03:
      case 0x08:
        seg.u4(r.thread);
        seg.u4(r.frame_or_trace);
        break;
      case 0x04:
      case 0x06:
        seg.u4(r.thread);
        break;
      default:
        break;
    }
  }
  // Padding as primitive fields: longs, then an int, a short and a byte for the rest.
  auto padding_types = [](uint32_t bytes) {
    std::vector<uint8_t> types(bytes / 8, 11);
    if (bytes & 4) types.push_back(10);
    if (bytes & 2) types.push_back(9);
    if (bytes & 1) types.push_back(8);
    return types;
  };
  for (const TextClass& k : classes_) {
    seg.u1(0x20);
    seg.id(k.id);
    seg.u4(k.trace);
    seg.id(k.super);
    seg.id(k.loader);
    seg.id(k.signers);
    seg.id(k.domain);
    seg.id(0);
    seg.id(0);
    seg.u4(k.target_size);
    seg.u2(static_cast<uint16_t>(std::min<size_t>(k.constants.size(), 0xFFFF)));
    for (size_t i = 0; i < k.constants.size() && i < 0xFFFF; ++i) {
      seg.u2(k.constants[i].first);
      seg.u1(2);
      seg.id(k.constants[i].second);
    }
    seg.u2(static_cast<uint16_t>(std::min<size_t>(k.statics.size(), 0xFFFF)));
    for (size_t i = 0; i < k.statics.size() && i < 0xFFFF; ++i) {
      seg.id(name_id(k.statics[i].first));
      seg.u1(2);
      seg.id(k.statics[i].second);
    }
    const auto pad = padding_types(k.own_padding);
    seg.u2(static_cast<uint16_t>(std::min<size_t>(k.own_fields.size() + pad.size(), 0xFFFF)));
    for (const std::string& name : k.own_fields) {
      seg.id(name_id(name));
      seg.u1(2);
    }
    for (uint8_t t : pad) {
      seg.id(padding_name);
      seg.u1(t);
    }
    flush(false);
  }
  for (const TextObject& o : objects_) {
    if (o.kind == TextObject::kInstance) {
      // The chain's slots, own class first; each listed field fills the first free slot of
      // its name (so a shadowed name fills the subclass's slot first, as HPROF lists them).
      struct Slot {
        const std::string* name;
        uint8_t type;
        uint64_t value;
      };
      std::vector<Slot> slots;
      size_t depth = 0;
      for (auto it = by_id_.find(o.class_id); it != by_id_.end() && ++depth <= classes_.size();
           it = by_id_.find(classes_[it->second].super)) {
        const TextClass& k = classes_[it->second];
        for (const std::string& name : k.own_fields) slots.push_back({&name, 2, 0});
        for (uint8_t t : padding_types(k.own_padding)) slots.push_back({nullptr, t, 0});
        if (k.super == 0) break;
      }
      for (const auto& [name, value] : o.refs)
        for (Slot& s : slots)
          if (s.name && *s.name == name && s.value == 0) {
            s.value = value;
            break;
          }
      uint64_t length = 0;
      for (const Slot& s : slots) length += s.type == 2 ? 8 : primitive_bytes(s.type);
      seg.u1(0x21);
      seg.id(o.id);
      seg.u4(o.trace);
      seg.id(o.class_id);
      seg.u4(static_cast<uint32_t>(length));
      for (const Slot& s : slots) {
        if (s.type == 2)
          seg.id(s.value);
        else
          seg.zeros(primitive_bytes(s.type));
      }
    } else if (o.kind == TextObject::kObjectArray) {
      std::vector<uint64_t> elements(o.count, 0);
      for (const auto& [name, value] : o.refs) {
        uint64_t index = 0;
        if (number_after(name, "[", index) && index < elements.size()) elements[index] = value;
      }
      seg.u1(0x22);
      seg.id(o.id);
      seg.u4(o.trace);
      seg.u4(o.count);
      seg.id(o.class_id);
      for (uint64_t e : elements) seg.id(e);
    } else {
      seg.u1(0x23);
      seg.id(o.id);
      seg.u4(o.trace);
      seg.u4(o.count);
      seg.u1(o.element_type);
      seg.zeros(uint64_t{o.count} * primitive_bytes(o.element_type));
    }
    flush(false);
  }
  flush(true);
  record(0x2C, std::string());
  ok = std::fclose(f) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), out_path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw Error(out_path + ": cannot write the converted heap dump: " + std::strerror(err));
  }
}

int64_t mtime_ns(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return -1;
  return int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
}

}  // namespace

bool is_text_profile(const std::string& path) {
  char head[20] = {};
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  const size_t n = std::fread(head, 1, sizeof head, f);
  std::fclose(f);
  // Binary: "JAVA PROFILE 1.0.x" then a NUL; text: the same then ", created".
  return n == sizeof head && std::memcmp(head, "JAVA PROFILE 1.0.", 17) == 0 && head[18] == ',';
}

std::string convert_text_dump(const std::string& text_path, bool beside) {
  std::string base = text_path.substr(text_path.rfind('/') + 1);
  const char* tmp = std::getenv("TMPDIR");
  static std::atomic<uint32_t> scratch_serial{0};
  const std::string scratch = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + base + "." +
                              std::to_string(::getpid()) + "-" + std::to_string(++scratch_serial) +
                              ".jvmprof-heap.hprof";
  std::string out = beside ? text_path + ".jvmprof-heap.hprof" : scratch;
  const int64_t text_time = mtime_ns(text_path);
  if (beside && mtime_ns(out) > text_time && text_time >= 0) return out;
  Parser parser(text_path);
  parser.read();
  try {
    parser.write(out);
  } catch (const Error&) {
    if (!beside) throw;
    out = scratch;  // a read-only directory
    parser.write(out);
  }
  return out;
}

}  // namespace analysis::detail
