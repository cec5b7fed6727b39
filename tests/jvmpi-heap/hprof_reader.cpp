// SPDX-License-Identifier: Apache-2.0
#include "hprof_reader.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unordered_map>
#include <vector>

namespace jvmpiheap {
namespace {

class Input {
 public:
  Input(const char* data, size_t size, size_t id_size)
      : p_(data), end_(data + size), id_(id_size) {}
  bool ok() const { return ok_; }
  size_t left() const { return static_cast<size_t>(end_ - p_); }
  uint64_t be(size_t n) {
    if (left() < n) {
      ok_ = false;
      p_ = end_;
      return 0;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<unsigned char>(p_[i]);
    p_ += n;
    return v;
  }
  uint64_t id() { return be(id_); }
  void skip(size_t n) {
    if (left() < n) {
      ok_ = false;
      p_ = end_;
      return;
    }
    p_ += n;
  }
  const char* here() const { return p_; }
  size_t id_size() const { return id_; }

 private:
  const char* p_;
  const char* end_;
  size_t id_;
  bool ok_ = true;
};

size_t basic_size(int type, size_t id_size) {
  switch (type) {
    case 2:
      return id_size;
    case 4:
    case 8:
      return 1;
    case 5:
    case 9:
      return 2;
    case 6:
    case 10:
      return 4;
    case 7:
    case 11:
      return 8;
    default:
      return 0;
  }
}

std::string dotted(std::string s) {
  for (char& c : s) {
    if (c == '/') c = '.';
  }
  return s;
}

}  // namespace

bool read_hprof_counts(const std::string& path, HprofCounts* out, std::string* error) {
  *out = HprofCounts{};
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    *error = "cannot open " + path;
    return false;
  }
  std::ostringstream ss;
  ss << f.rdbuf();
  const std::string data = ss.str();
  const std::string magic = "JAVA PROFILE 1.0.2";
  if (data.size() < magic.size() + 1 + 12 || data.compare(0, magic.size(), magic) != 0 ||
      data[magic.size()] != '\0') {
    *error = "not a JAVA PROFILE 1.0.2 file";
    return false;
  }
  size_t pos = magic.size() + 1;
  Input header(data.data() + pos, 12, 4);
  const size_t id_size = header.be(4);
  if (id_size != 4 && id_size != 8) {
    *error = "bad identifier size " + std::to_string(id_size);
    return false;
  }
  pos += 12;

  std::unordered_map<uint64_t, std::string> strings;
  std::unordered_map<uint64_t, std::string> class_names;  // class object id -> name
  std::unordered_map<uint64_t, long> instance_counts;     // class object id -> count
  std::unordered_map<uint64_t, long> array_counts;        // array class id -> count

  Input in(data.data() + pos, data.size() - pos, id_size);
  while (in.ok() && in.left() > 0) {
    const int tag = static_cast<int>(in.be(1));
    in.be(4);  // time
    const size_t length = in.be(4);
    if (!in.ok() || in.left() < length) {
      *error = "truncated record of tag " + std::to_string(tag);
      return false;
    }
    Input body(in.here(), length, id_size);
    in.skip(length);
    if (tag == 0x01) {
      const uint64_t id = body.id();
      strings[id] = std::string(body.here(), body.left());
    } else if (tag == 0x02) {
      body.be(4);
      const uint64_t class_id = body.id();
      body.be(4);
      const uint64_t name = body.id();
      class_names[class_id] = dotted(strings[name]);
    } else if (tag == 0x0c || tag == 0x1c) {
      while (body.ok() && body.left() > 0) {
        const int sub = static_cast<int>(body.be(1));
        if (sub < 0x20) ++out->roots[sub];
        switch (sub) {
          case 0xff:
          case 0x05:
          case 0x07:
            body.id();
            break;
          case 0x01:
            body.id();
            body.id();
            break;
          case 0x02:
          case 0x03: {
            body.id();
            const auto serial = static_cast<uint32_t>(body.be(4));
            body.be(4);
            ++(sub == 0x02 ? out->jni_local_roots : out->frame_roots)[serial];
            break;
          }
          case 0x08:
            body.id();
            body.be(8);
            break;
          case 0x04:
          case 0x06:
            body.id();
            body.be(4);
            break;
          case 0x20: {
            body.id();
            body.be(4);
            for (int i = 0; i < 6; ++i) body.id();
            body.be(4);
            const size_t cp = body.be(2);
            for (size_t i = 0; i < cp && body.ok(); ++i) {
              body.be(2);
              body.skip(basic_size(static_cast<int>(body.be(1)), id_size));
            }
            const size_t statics = body.be(2);
            for (size_t i = 0; i < statics && body.ok(); ++i) {
              body.id();
              body.skip(basic_size(static_cast<int>(body.be(1)), id_size));
            }
            const size_t fields = body.be(2);
            for (size_t i = 0; i < fields && body.ok(); ++i) {
              body.id();
              body.be(1);
            }
            ++out->classes;
            break;
          }
          case 0x21: {
            body.id();
            body.be(4);
            const uint64_t class_id = body.id();
            body.skip(body.be(4));
            ++instance_counts[class_id];
            ++out->total_instances;
            break;
          }
          case 0x22: {
            body.id();
            body.be(4);
            const size_t n = body.be(4);
            const uint64_t class_id = body.id();
            body.skip(n * id_size);
            ++array_counts[class_id];
            break;
          }
          case 0x23: {
            body.id();
            body.be(4);
            const size_t n = body.be(4);
            const int type = static_cast<int>(body.be(1));
            body.skip(n * basic_size(type, id_size));
            ++out->prim_arrays[type];
            break;
          }
          default:
            *error = "unknown heap dump sub-record " + std::to_string(sub);
            return false;
        }
      }
      if (!body.ok()) {
        *error = "malformed heap dump segment";
        return false;
      }
    }
  }
  for (const auto& [id, n] : instance_counts) {
    auto it = class_names.find(id);
    out->instances[it == class_names.end() ? "?" : it->second] += n;
  }
  for (const auto& [id, n] : array_counts) {
    auto it = class_names.find(id);
    out->obj_arrays[it == class_names.end() ? "?" : it->second] += n;
  }
  return true;
}

}  // namespace jvmpiheap
