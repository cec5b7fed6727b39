// SPDX-License-Identifier: Apache-2.0
#include "jvmpi_dump_reader.h"

#include <cstring>

namespace hprof::agent {
namespace {

class Cursor {
 public:
  Cursor(const char* p, const char* end) : p_(p), end_(end) {}
  bool more() const { return ok_ && p_ < end_; }
  bool ok() const { return ok_; }
  const char* at() const { return p_; }
  bool skip(size_t n) {
    if (!ok_ || static_cast<size_t>(end_ - p_) < n) {
      ok_ = false;
      return false;
    }
    p_ += n;
    return true;
  }
  uint8_t u1() {
    const char* p = p_;
    return skip(1) ? static_cast<uint8_t>(*p) : 0;
  }
  uint16_t u2() {
    const char* p = p_;
    return skip(2) ? static_cast<uint16_t>(read_be(p, 2)) : 0;
  }
  uint32_t u4() {
    const char* p = p_;
    return skip(4) ? static_cast<uint32_t>(read_be(p, 4)) : 0;
  }
  jobjectID id() {
    const char* p = p_;
    return skip(sizeof(void*)) ? read_id(p) : nullptr;
  }

 private:
  const char* p_;
  const char* end_;
  bool ok_ = true;
};

bool is_reference(const std::string& sig) {
  return !sig.empty() && (sig[0] == 'L' || sig[0] == '[');
}

}  // namespace

size_t primitive_size(uint8_t type) {
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
    default:
      return sizeof(void*);
  }
}

size_t jvmpi_value_size(const std::string& sig) {
  switch (sig.empty() ? 'L' : sig[0]) {
    case 'Z':
    case 'B':
      return 1;
    case 'C':
    case 'S':
      return 2;
    case 'I':
    case 'F':
      return 4;
    case 'J':
    case 'D':
      return 8;
    default:
      return sizeof(void*);
  }
}

jobjectID read_id(const char* p) {
  jobjectID v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

uint64_t read_be(const char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

bool read_heap_dump(const char* begin, const char* end, int level, const ClassTable& classes,
                    const DumpVisitor& visit) {
  Cursor c(begin, end);
  while (c.more()) {
    const uint8_t type = c.u1();
    switch (type) {
      case JVMPI_GC_ROOT_UNKNOWN:
      case JVMPI_GC_ROOT_STICKY_CLASS:
      case JVMPI_GC_ROOT_MONITOR_USED: {
        DumpRoot r{type, c.id()};
        if (c.ok() && visit.root) visit.root(r);
        break;
      }
      case JVMPI_GC_ROOT_JNI_GLOBAL:
      case JVMPI_GC_ROOT_NATIVE_STACK:
      case JVMPI_GC_ROOT_THREAD_BLOCK: {
        DumpRoot r{type, c.id()};
        r.extra = c.id();
        if (c.ok() && visit.root) visit.root(r);
        break;
      }
      case JVMPI_GC_ROOT_JNI_LOCAL:
      case JVMPI_GC_ROOT_JAVA_FRAME: {
        DumpRoot r{type, c.id()};
        r.extra = c.id();
        r.frame = c.u4();
        if (c.ok() && visit.root) visit.root(r);
        break;
      }
      case JVMPI_GC_CLASS_DUMP: {
        DumpClass k{};
        k.id = c.id();
        k.super = c.id();
        k.loader = c.id();
        k.signers = c.id();
        k.domain = c.id();
        c.id();  // class name
        c.id();  // reserved
        k.instance_size = c.u4();
        const ClassInfo info = classes.find(k.id);
        for (int i = 0; i < info.num_interfaces; ++i) k.interfaces.push_back(c.id());
        for (uint16_t n = c.u2(), i = 0; i < n && c.ok(); ++i) {
          const uint16_t index = c.u2();
          const uint8_t ty = c.u1();
          if (ty == JVMPI_CLASS) {
            k.constant_pool.emplace_back(index, c.id());
          } else {
            c.skip(primitive_size(ty));
          }
        }
        for (const FieldInfo& f : info.statics) {
          if (level < 2 && !is_reference(f.signature)) continue;
          k.static_values.push_back(c.at());
          c.skip(jvmpi_value_size(f.signature));
        }
        if (c.ok() && visit.klass) visit.klass(k);
        break;
      }
      case JVMPI_GC_INSTANCE_DUMP: {
        DumpInstance i{};
        i.id = c.id();
        i.class_id = c.id();
        i.length = c.u4();
        i.values = c.at();
        if (c.skip(i.length) && visit.instance) visit.instance(i);
        break;
      }
      case JVMPI_GC_OBJ_ARRAY_DUMP: {
        DumpObjectArray a{};
        a.id = c.id();
        const uint32_t n = c.u4();
        a.element_class = c.id();
        if (static_cast<size_t>(end - c.at()) / sizeof(void*) < n) return false;
        a.elements.reserve(n);
        for (uint32_t k = 0; k < n; ++k) a.elements.push_back(c.id());
        if (c.ok() && visit.object_array) visit.object_array(a);
        break;
      }
      case JVMPI_GC_PRIM_ARRAY_DUMP: {
        DumpPrimitiveArray a{};
        a.id = c.id();
        a.count = c.u4();
        a.type = c.u1();
        a.values = level >= 2 ? c.at() : nullptr;
        if (level >= 2) c.skip(primitive_size(a.type) * a.count);
        if (c.ok() && visit.primitive_array) visit.primitive_array(a);
        break;
      }
      default:
        return false;
    }
  }
  return c.ok();
}

}  // namespace hprof::agent
