// SPDX-License-Identifier: Apache-2.0
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
//
// Memory is bounded by the classes, not by the objects or the text's size: the text is read
// through a fixed buffer (lines of at most 1 MiB) three times — once to find the newest complete
// section, once over that section for the per-class state (names, statics, the most copies of
// each field name in one direct instance, the largest sz=), and once more writing every root and
// object to the output as it is read (one instance's slots at a time; array elements go straight
// to the file). Per class the limits of the binary format apply: at most 65535 fields, statics
// and constants.
#include "text_dump.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <unordered_map>
#include <vector>

#include "analysis.h"

namespace analysis::detail {
namespace {

constexpr size_t kMaxLine = 1 << 20;
constexpr uint32_t kMaxTableEntries = 0xFFFF;  // u2 counts of CLASS DUMP's tables
// Heap dump segments close at the first object boundary past this size; one object must then
// still fit a segment's u4 length.
constexpr uint64_t kSegmentTarget = 16u << 20;
constexpr uint64_t kMaxObjectBytes = 0xFFFFFFFFull - kSegmentTarget - 4096;
// No instance is larger than 65535 fields of 8 bytes and a header; a larger sz= would make up
// more padding fields than a class can have.
constexpr uint64_t kMaxInstanceSize = 16 + 8 * uint64_t{kMaxTableEntries};

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
  uint32_t seen_total = 0;  // sum of `seen`
  std::vector<std::string> own_fields;
  uint32_t target_size = 0;  // sz= of its direct instances (largest)
  uint32_t own_padding = 0;
};

struct TextRoot {
  uint8_t kind = 0xFF;
  uint64_t id = 0, extra = 0;
  uint32_t thread = 0, frame_or_trace = 0;
};

// One OBJ or ARR header line.
struct TextObject {
  enum Kind : uint8_t { kInstance, kObjectArray, kPrimitiveArray } kind = kInstance;
  uint8_t element_type = 0;
  uint64_t id = 0, class_id = 0;
  uint32_t trace = 0, size = 0, count = 0;
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
// A live (net=) stream's event lines are written as they happen, so they can fall between a
// dump's lines: a Java thread's WAIT/WAITED/SLEEP (monitor=y), THREAD START/END, the agent's
// DROPPED and SETTINGS notes. They belong to the stream, not to the dump.
bool is_stream_event_line(std::string_view l) {
  for (std::string_view prefix :
       {"WAIT: ", "WAITED: ", "SLEEP: ", "THREAD START ", "THREAD END ", "DROPPED: ", "SETTINGS: "})
    if (l.starts_with(prefix)) return true;
  return false;
}

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

// Lines of a file from a byte offset, through a fixed buffer: a line longer than kMaxLine is an
// error, so memory never follows the input. Lines come without "\n" or "\r\n".
class LineReader {
 public:
  LineReader(const std::string& path, uint64_t offset, uint64_t line_before)
      : path_(path), number_(line_before), file_pos_(offset), buffer_(kMaxLine + (64 << 10)) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw Error(path + ": " + std::strerror(errno));
  }
  ~LineReader() { ::close(fd_); }
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  bool next(std::string_view& line) {
    for (;;) {
      const char* start = buffer_.data() + begin_;
      const void* nl = std::memchr(start, '\n', end_ - begin_);
      if (nl || (eof_ && begin_ < end_)) {
        const size_t length =
            nl ? static_cast<size_t>(static_cast<const char*>(nl) - start) : end_ - begin_;
        if (length > kMaxLine) too_long();
        line_offset_ = file_pos_ - (end_ - begin_);
        line = std::string_view(start, length);
        begin_ += length + (nl ? 1 : 0);
        ++number_;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        return true;
      }
      if (eof_) return false;
      if (end_ - begin_ > kMaxLine) too_long();
      std::memmove(buffer_.data(), start, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
      const ssize_t n =
          ::pread(fd_, buffer_.data() + end_, buffer_.size() - end_, static_cast<off_t>(file_pos_));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw Error(path_ + ": " + std::strerror(errno));
      if (n == 0) eof_ = true;
      end_ += static_cast<size_t>(n);
      file_pos_ += static_cast<uint64_t>(n);
    }
  }
  uint64_t number() const { return number_; }       // of the line returned last
  uint64_t offset() const { return line_offset_; }  // byte offset of the line returned last

 private:
  [[noreturn]] void too_long() {
    bad(path_, number_ + 1, "line longer than " + std::to_string(kMaxLine) + " bytes");
  }
  std::string path_;
  int fd_ = -1;
  uint64_t number_ = 0, file_pos_ = 0, line_offset_ = 0;
  std::vector<char> buffer_;
  size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
};

// The binary dump being written: a file written through a 1 MiB buffer, whose earlier bytes can
// be patched (segment lengths, array elements listed out of order).
class Writer {
 public:
  explicit Writer(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error(path + ": " + std::strerror(errno));
    buffer_.reserve(kBuffer);
  }
  ~Writer() {
    if (fd_ >= 0) ::close(fd_);
  }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  void u1(uint8_t v) { put(&v, 1); }
  void u2(uint16_t v) { be(v, 2); }
  void u4(uint32_t v) { be(v, 4); }
  void id(uint64_t v) { be(v, 8); }
  void bytes(std::string_view s) { put(s.data(), s.size()); }
  void zeros(uint64_t n) {
    while (n > 0) {
      const size_t chunk = static_cast<size_t>(std::min<uint64_t>(n, kBuffer - buffer_.size()));
      buffer_.insert(buffer_.end(), chunk, '\0');
      n -= chunk;
      if (buffer_.size() == kBuffer) flush();
    }
  }
  uint64_t pos() const { return flushed_ + buffer_.size(); }
  // Overwrites `n` (4 or 8) bytes at `at` with `v`, big-endian.
  void patch(uint64_t at, uint64_t v, int n) {
    char b[8];
    for (int i = 0; i < n; ++i) b[i] = static_cast<char>(v >> (8 * (n - 1 - i)));
    if (at >= flushed_) {
      std::memcpy(buffer_.data() + (at - flushed_), b, static_cast<size_t>(n));
    } else if (::pwrite(fd_, b, static_cast<size_t>(n), static_cast<off_t>(at)) != n) {
      fail();
    }
  }
  // A record of the top level whose body is `body`.
  void record(uint8_t tag, std::string_view body) {
    u1(tag);
    u4(0);
    u4(static_cast<uint32_t>(body.size()));
    bytes(body);
  }
  void begin_segment() {
    segment_ = pos();
    u1(0x1C);
    u4(0);
    u4(0);  // the length, patched by end_segment
  }
  void end_segment() { patch(segment_ + 5, pos() - segment_ - 9, 4); }
  // At an object boundary: a new segment once this one is past its target size.
  void next_object() {
    if (pos() - segment_ - 9 > kSegmentTarget) {
      end_segment();
      begin_segment();
    }
  }
  void close() {
    flush();
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail();
  }

 private:
  static constexpr size_t kBuffer = 1 << 20;
  void be(uint64_t v, int n) {
    char b[8];
    for (int i = 0; i < n; ++i) b[i] = static_cast<char>(v >> (8 * (n - 1 - i)));
    put(b, static_cast<size_t>(n));
  }
  void put(const void* p, size_t n) {
    if (buffer_.size() + n > kBuffer) flush();
    if (n > kBuffer) return write_out(p, n);
    const char* c = static_cast<const char*>(p);
    buffer_.insert(buffer_.end(), c, c + n);
  }
  void flush() {
    write_out(buffer_.data(), buffer_.size());
    buffer_.clear();
  }
  void write_out(const void* p, size_t n) {
    const char* c = static_cast<const char*>(p);
    while (n > 0) {
      const ssize_t w = ::write(fd_, c, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) fail();
      c += w, n -= static_cast<size_t>(w), flushed_ += static_cast<uint64_t>(w);
    }
  }
  [[noreturn]] void fail() {
    throw Error(path_ + ": cannot write the converted heap dump: " + std::strerror(errno));
  }
  std::string path_;
  int fd_ = -1;
  std::vector<char> buffer_;
  uint64_t flushed_ = 0, segment_ = 0;
};

// Where the newest complete HEAP DUMP section starts: the byte offset of its BEGIN line and the
// number of the line before it. Throws if there is none.
struct Section {
  uint64_t offset = 0, line_before = 0;
};

Section newest_complete_section(const std::string& path) {
  LineReader in(path, 0, 0);
  std::string_view line;
  Section current, newest;
  bool inside = false, complete = false;
  while (in.next(line)) {
    if (line.starts_with("HEAP DUMP BEGIN")) {
      inside = true;
      current = {in.offset(), in.number() - 1};
    } else if (inside && line == "HEAP DUMP END") {
      inside = false;
      complete = true;
      newest = current;
    }
  }
  if (!complete) throw Error(path + ": no complete HEAP DUMP section in the text profile");
  return newest;
}

void write_root(Writer& out, const TextRoot& r) {
  out.next_object();
  out.u1(r.kind);
  out.id(r.id);
  switch (r.kind) {
    case 0x01:
      out.id(r.extra);
      break;
    case 0x02:
    case 0x03:
    case 0x08:
      out.u4(r.thread);
      out.u4(r.frame_or_trace);
      break;
    case 0x04:
    case 0x06:
      out.u4(r.thread);
      break;
    default:
      break;
  }
}

// Padding as primitive fields: longs, then an int, a short and a byte for the rest.
std::vector<uint8_t> padding_types(uint32_t bytes) {
  std::vector<uint8_t> types(bytes / 8, 11);
  if (bytes & 4) types.push_back(10);
  if (bytes & 2) types.push_back(9);
  if (bytes & 1) types.push_back(8);
  return types;
}

class Converter {
 public:
  explicit Converter(std::string path) : path_(std::move(path)) {}

  // Finds the newest complete section and reads its per-class state.
  void read() {
    section_ = newest_complete_section(path_);
    walk(nullptr);
    layout();
  }

  // Writes the binary dump to `out_path` (through a temporary renamed into place).
  void write(const std::string& out_path);

 private:
  // One pass over the section's records. Without `out` it gathers the per-class state; with it
  // (after layout()) it writes every root and object to `out` as it reads them.
  void walk(Writer* out);

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

  // The class with this id (0: none given, found or made up by name). Only the first pass
  // adds classes; the second finds the same ones.
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
  Section section_;
  std::vector<TextClass> classes_;
  std::unordered_map<uint64_t, size_t> by_id_;
  std::unordered_map<std::string, size_t> by_name_;
  uint64_t next_made_up_id_ = ~uint64_t{0} - 15;  // ids for classes named only by OBJ/ARR
};

void Converter::walk(Writer* out) {
  LineReader in(path_, section_.offset, section_.line_before);
  std::string_view l;
  in.next(l);  // HEAP DUMP BEGIN
  const bool writing = out != nullptr;
  if (writing) next_made_up_id_ = ~uint64_t{0} - 15;  // the same made-up ids again
  enum { kOutside, kObject, kClass } where = kOutside;
  TextObject object;
  TextClass* klass = nullptr;
  std::unordered_map<std::string, uint32_t> copies;  // first pass: names in this instance
  // Second pass: the instance's slots over its class chain, or where the array's elements are.
  struct Slot {
    const std::string* name;  // nullptr: padding of `padding` bytes
    uint64_t value;
    uint32_t padding;
  };
  std::vector<Slot> slots;
  uint64_t elements_at = 0, next_element = 0;

  auto begin_object = [&](uint64_t n) {
    if (!writing) {
      copies.clear();
      return;
    }
    out->next_object();
    if (object.kind == TextObject::kInstance) {
      // The chain's slots, own class first.
      slots.clear();
      size_t depth = 0;
      uint64_t length = 0;
      for (auto it = by_id_.find(object.class_id); it != by_id_.end() && ++depth <= classes_.size();
           it = by_id_.find(classes_[it->second].super)) {
        const TextClass& k = classes_[it->second];
        for (const std::string& name : k.own_fields) slots.push_back({&name, 0, 0});
        if (k.own_padding) slots.push_back({nullptr, 0, k.own_padding});
        length += 8 * k.own_fields.size() + k.own_padding;
        if (k.super == 0) break;
      }
      if (length > kMaxObjectBytes) bad(path_, n, "instance too large for a binary dump");
    } else if (object.kind == TextObject::kObjectArray) {
      out->u1(0x22);
      out->id(object.id);
      out->u4(object.trace);
      out->u4(object.count);
      out->id(object.class_id);
      elements_at = out->pos();
      next_element = 0;
    } else {
      out->u1(0x23);
      out->id(object.id);
      out->u4(object.trace);
      out->u4(object.count);
      out->u1(object.element_type);
      out->zeros(uint64_t{object.count} * primitive_bytes(object.element_type));
    }
  };
  auto end_object = [&] {
    if (!writing || where != kObject) return;
    if (object.kind == TextObject::kInstance) {
      uint64_t length = 0;
      for (const Slot& s : slots) length += s.name ? 8 : s.padding;
      out->u1(0x21);
      out->id(object.id);
      out->u4(object.trace);
      out->id(object.class_id);
      out->u4(static_cast<uint32_t>(length));
      for (const Slot& s : slots) {
        if (s.name)
          out->id(s.value);
        else
          out->zeros(s.padding);
      }
    } else if (object.kind == TextObject::kObjectArray) {
      out->zeros(8 * (uint64_t{object.count} - next_element));
    }
  };

  while (in.next(l)) {
    const uint64_t n = in.number();
    if (l == "HEAP DUMP END") break;
    if (l.empty() || is_stream_event_line(l)) continue;
    if (l[0] == '\t') {
      // "\tname\t[\t]hex": the name is everything before the last tab run.
      const size_t tab = l.rfind('\t');
      uint64_t value = 0;
      if (tab == 0 || !parse_hex(l.substr(tab + 1), value)) bad(path_, n, "malformed value line");
      std::string_view name = l.substr(1, tab - 1);
      while (!name.empty() && name.back() == '\t') name.remove_suffix(1);
      if (where == kObject) {
        if (object.kind == TextObject::kInstance) {
          if (!writing) {
            // The most copies of each name in one direct instance of the class.
            TextClass& k = classes_[by_id_.at(object.class_id)];
            const uint32_t c = ++copies[std::string(name)];
            uint32_t& seen = k.seen[std::string(name)];
            if (c > seen) {
              if (seen == 0) k.seen_order.emplace_back(name);
              seen = c;
              if (++k.seen_total > kMaxTableEntries)
                bad(path_, n, "more than 65535 reference fields in instances of " + k.name);
            }
          } else {
            // Each listed field fills the first free slot of its name (a shadowed name fills
            // the subclass's slot first, as HPROF lists them).
            for (Slot& s : slots)
              if (s.name && *s.name == name && s.value == 0) {
                s.value = value;
                break;
              }
          }
        } else if (object.kind == TextObject::kObjectArray && writing) {
          uint64_t index = 0;
          if (number_after(name, "[", index) && index < object.count) {
            if (index >= next_element) {
              out->zeros(8 * (index - next_element));
              out->id(value);
              next_element = index + 1;
            } else {
              out->patch(elements_at + 8 * index, value, 8);  // listed out of order
            }
          }
        }
      } else if (where == kClass) {
        if (writing) continue;
        if (name == "super")
          klass->super = value;
        else if (name == "loader")
          klass->loader = value;
        else if (name == "signers")
          klass->signers = value;
        else if (name == "domain")
          klass->domain = value;
        else if (name.starts_with("static ")) {
          if (klass->statics.size() < kMaxTableEntries)
            klass->statics.emplace_back(name.substr(7), value);
        } else if (name.starts_with("constant pool entry ")) {
          uint64_t index = 0;
          if (!number_after(name, "entry ", index)) bad(path_, n, "malformed constant pool line");
          if (klass->constants.size() < kMaxTableEntries)
            klass->constants.emplace_back(static_cast<uint16_t>(index), value);
        }
      } else {
        bad(path_, n, "value line outside an OBJ, ARR or CLS record");
      }
      continue;
    }
    end_object();
    where = kOutside;
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
      const TextRoot r = root(n, id, attrs);
      if (writing) write_root(*out, r);
    } else if (kind == "OBJ" || kind == "ARR") {
      object = TextObject();
      object.id = id;
      uint64_t v = 0;
      if (!number_after(attrs, "sz=", v)) bad(path_, n, "no sz=");
      object.size = static_cast<uint32_t>(std::min<uint64_t>(v, 0xFFFFFFFFu));
      if (number_after(attrs, "trace=", v)) object.trace = static_cast<uint32_t>(v);
      const std::string_view key = kind == "OBJ" ? "class=" : "elem type=";
      const size_t at = attrs.find(key);
      if (at == std::string_view::npos) bad(path_, n, "no " + std::string(key));
      std::string_view type = attrs.substr(at + key.size());
      const size_t amp = type.rfind('@');
      uint64_t class_id = 0;
      if (amp != std::string_view::npos && parse_hex(type.substr(amp + 1), class_id))
        type = type.substr(0, amp);
      if (kind == "ARR") {
        if (!number_after(attrs, "nelems=", v) || v > 0xFFFFFFFFu) bad(path_, n, "no nelems=");
        object.count = static_cast<uint32_t>(v);
        object.element_type = primitive_array_type(type);
        object.kind = object.element_type ? TextObject::kPrimitiveArray : TextObject::kObjectArray;
        const uint64_t element = object.element_type ? primitive_bytes(object.element_type) : 8;
        if (uint64_t{object.count} * element > kMaxObjectBytes)
          bad(path_, n, "array too large for a binary dump");
      } else if (object.size > kMaxInstanceSize) {
        bad(path_, n, "sz=" + std::to_string(object.size) + " is larger than an instance can be");
      }
      if (object.kind != TextObject::kPrimitiveArray) object.class_id = class_of(class_id, type);
      if (object.kind == TextObject::kInstance && !writing) {
        TextClass& k = classes_[by_id_.at(object.class_id)];
        k.target_size = std::max(k.target_size, object.size);
      }
      where = kObject;
      begin_object(n);
    } else if (kind == "CLS") {
      const size_t name_at = attrs.find("name=");
      const size_t trace_at = attrs.rfind(", trace=");
      if (name_at != 0 || trace_at == std::string_view::npos) bad(path_, n, "malformed CLS");
      const uint64_t k = class_of(id, attrs.substr(5, trace_at - 5));
      where = kClass;
      if (writing) continue;
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
  end_object();
}

void Converter::layout() {
  // java.lang.ref.Reference declares `referent` (the indexer treats it as a weak reference
  // there only); Reference itself is abstract, so its subclasses' instances name the field.
  auto reference = by_name_.find("java.lang.ref.Reference");
  auto extends_reference = [&](size_t i) {
    if (reference == by_name_.end()) return false;
    size_t k = i, depth = 0;
    while (k != reference->second && ++depth <= classes_.size()) {
      auto it = by_id_.find(classes_[k].super);
      if (classes_[k].super == 0 || it == by_id_.end()) break;
      k = it->second;
    }
    return k == reference->second;
  };
  if (reference != by_name_.end()) {
    const std::string referent = "referent";
    for (size_t i = 0; i < classes_.size(); ++i) {
      if (i == reference->second) continue;
      auto seen = classes_[i].seen.find(referent);
      if (seen == classes_[i].seen.end() || !extends_reference(i)) continue;
      TextClass& r = classes_[reference->second];
      uint32_t& at = r.seen[referent];
      if (at == 0) r.seen_order.push_back(referent);
      at = std::max(at, seen->second);
      auto& order = classes_[i].seen_order;
      order.erase(std::find(order.begin(), order.end(), referent));
      classes_[i].seen.erase(seen);
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
      if (k.own_fields.size() + padding_types(k.own_padding).size() > kMaxTableEntries)
        throw Error(path_ + ": class " + k.name + " needs more than 65535 fields");
    }
  }
}

// A record body or a sub-record, big-endian.
class Body {
 public:
  void u1(uint8_t v) { b_.push_back(static_cast<char>(v)); }
  void u2(uint16_t v) { be(v, 2); }
  void u4(uint32_t v) { be(v, 4); }
  void id(uint64_t v) { be(v, 8); }
  void bytes(std::string_view s) { b_.append(s); }
  const std::string& str() const { return b_; }

 private:
  void be(uint64_t v, int n) {
    for (int i = n - 1; i >= 0; --i) b_.push_back(static_cast<char>(v >> (8 * i)));
  }
  std::string b_;
};

void Converter::write(const std::string& out_path) {
  const std::string tmp = out_path + ".tmp" + std::to_string(::getpid());
  try {
    Writer out(tmp);
    out.bytes(std::string_view("JAVA PROFILE 1.0.2", 19));  // with its NUL
    out.u4(8);
    out.id(0);
    // UTF8 and LOAD CLASS records first: they cannot be inside a heap dump segment.
    std::unordered_map<std::string, uint64_t> names;
    auto name_id = [&](const std::string& s) {
      auto [it, inserted] = names.try_emplace(s, names.size() + 1);
      if (inserted) {
        Body body;
        body.id(it->second);
        body.bytes(s);
        out.record(0x01, body.str());
      }
      return it->second;
    };
    const uint64_t padding_name = name_id("<primitive data>");
    uint32_t serial = 0;
    for (const TextClass& k : classes_) {
      Body body;
      body.u4(++serial);
      body.id(k.id);
      body.u4(k.trace);
      body.id(name_id(hprof_class_name(k.name)));
      out.record(0x02, body.str());
      for (const std::string& name : k.own_fields) name_id(name);
      for (const auto& s : k.statics) name_id(s.first);
    }
    out.begin_segment();
    for (const TextClass& k : classes_) {
      out.next_object();
      out.u1(0x20);
      out.id(k.id);
      out.u4(k.trace);
      out.id(k.super);
      out.id(k.loader);
      out.id(k.signers);
      out.id(k.domain);
      out.id(0);
      out.id(0);
      out.u4(k.target_size);
      out.u2(static_cast<uint16_t>(k.constants.size()));
      for (const auto& [index, value] : k.constants) {
        out.u2(index);
        out.u1(2);
        out.id(value);
      }
      out.u2(static_cast<uint16_t>(k.statics.size()));
      for (const auto& [name, value] : k.statics) {
        out.id(names.at(name));
        out.u1(2);
        out.id(value);
      }
      const auto pad = padding_types(k.own_padding);
      out.u2(static_cast<uint16_t>(k.own_fields.size() + pad.size()));
      for (const std::string& name : k.own_fields) {
        out.id(names.at(name));
        out.u1(2);
      }
      for (uint8_t t : pad) {
        out.id(padding_name);
        out.u1(t);
      }
    }
    walk(&out);
    out.end_segment();
    out.record(0x2C, {});
    out.close();
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  if (std::rename(tmp.c_str(), out_path.c_str()) != 0) {
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
  Converter converter(text_path);
  converter.read();
  try {
    converter.write(out);
  } catch (const Error&) {
    if (!beside) throw;
    out = scratch;  // a read-only directory
    converter.write(out);
  }
  return out;
}

}  // namespace analysis::detail
