// SPDX-License-Identifier: Apache-2.0
#include "object_dump.h"

#include <jvmpi.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "class_events.h"
#include "class_layouts.h"
#include "dump_buffer.h"
#include "event_gate.h"
#include "heap_reserve.h"
#include "jvmti_access.h"
#include "object_ids.h"

namespace jvmpi::object_dump {
namespace {

using class_layouts::ClassLayout;
using class_layouts::Shape;

// Appends to a record: integers big-endian, IDs in native size and order (as DumpBuffer does).
class Record {
 public:
  explicit Record(std::vector<char>& out) : out_(out) { out_.clear(); }
  void u1(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u4(uint32_t v) {
    for (int i = 0; i < 4; ++i) out_.push_back(static_cast<char>(v >> (24 - 8 * i)));
  }
  void id(jlong tag) {
    const void* p = reinterpret_cast<const void*>(static_cast<intptr_t>(tag));
    char* at = space(sizeof p);
    std::memcpy(at, &p, sizeof p);
  }
  // n bytes for the caller to fill (valid until the next append).
  char* space(size_t n) {
    out_.resize(out_.size() + n);
    return out_.data() + out_.size() - n;
  }
  void reserve(size_t n) { out_.reserve(out_.size() + n); }

 private:
  std::vector<char>& out_;
};

// The ID a dump gives a referenced object (0 for null, and for the runtime's own heap reserve,
// which dumps leave out); deletes the local reference.
jlong referee_id(JNIEnv* jni, jobject referee) {
  if (referee == nullptr) return 0;
  const jlong tag = object_ids::to_tag(object_ids::id_of(referee));
  jni->DeleteLocalRef(referee);
  return tag == heap_reserve::object_tag() ? 0 : tag;
}

jlong class_class_tag(JNIEnv* jni) {
  static std::atomic<jlong> cached{0};
  jlong tag = cached.load(std::memory_order_relaxed);
  if (tag != 0) return tag;
  LocalRef klass(jni, jni->FindClass("java/lang/Class"));
  if (klass.get() == nullptr) {
    jni->ExceptionClear();
    return 0;
  }
  tag = object_ids::to_tag(object_ids::id_of(klass.get()));
  cached.store(tag, std::memory_order_relaxed);
  return tag;
}

// The cached layout of `klass`, computing it on the first request for one of its objects.
std::shared_ptr<const ClassLayout> layout_of(JNIEnv* jni, jclass klass, jlong class_tag) {
  if (auto layout = class_layouts::cached(class_tag); layout != nullptr) return layout;
  class_layouts::Layouts one;
  class_layouts::add(jni, klass, one);
  auto it = one.find(class_tag);
  return it == one.end() ? nullptr : it->second;
}

void write_instance(JNIEnv* jni, jobject object, jlong tag, jlong class_tag,
                    const ClassLayout& layout, Record& out) {
  uint32_t value_bytes = 0;
  for (const auto& f : layout.instance_fields) value_bytes += value_size(f.type);
  out.reserve(1 + 2 * sizeof(void*) + 4 + value_bytes);
  out.u1(JVMPI_GC_INSTANCE_DUMP);
  out.id(tag);
  out.id(class_tag);
  out.u4(value_bytes);
  // Fields in the layout's order: the class's own, then its superclass's, ... (as the walk's).
  for (const auto& f : layout.instance_fields) {
    jvalue v{};
    switch (f.type) {
      case JVMPI_CLASS:
        out.id(referee_id(jni, jni->GetObjectField(object, f.id)));
        continue;
      case JVMPI_BOOLEAN:
        v.z = jni->GetBooleanField(object, f.id);
        break;
      case JVMPI_BYTE:
        v.b = jni->GetByteField(object, f.id);
        break;
      case JVMPI_CHAR:
        v.c = jni->GetCharField(object, f.id);
        break;
      case JVMPI_SHORT:
        v.s = jni->GetShortField(object, f.id);
        break;
      case JVMPI_INT:
        v.i = jni->GetIntField(object, f.id);
        break;
      case JVMPI_LONG:
        v.j = jni->GetLongField(object, f.id);
        break;
      case JVMPI_FLOAT:
        v.f = jni->GetFloatField(object, f.id);
        break;
      case JVMPI_DOUBLE:
        v.d = jni->GetDoubleField(object, f.id);
        break;
      default:
        break;
    }
    put_value(out.space(value_size(f.type)), f.type, v);
  }
}

void write_object_array(JNIEnv* jni, jobjectArray array, jlong tag, const ClassLayout& layout,
                        Record& out) {
  const jint length = jni->GetArrayLength(array);
  out.reserve(1 + 2 * sizeof(void*) + 4 + static_cast<size_t>(length) * sizeof(void*));
  out.u1(JVMPI_GC_OBJ_ARRAY_DUMP);
  out.id(tag);
  out.u4(static_cast<uint32_t>(length));
  out.id(layout.element_class_tag);
  for (jint i = 0; i < length; ++i) out.id(referee_id(jni, jni->GetObjectArrayElement(array, i)));
}

// Copies a primitive array's elements in chunks (JNI copies them out in native order) and writes
// each big-endian, as the dump format wants.
template <typename T, typename Get>
void put_elements(jint length, jint type, Get get, Record& out) {
  constexpr jint kChunk = 1024;
  T chunk[kChunk];
  for (jint start = 0; start < length; start += kChunk) {
    const jint n = std::min(kChunk, length - start);
    get(start, n, chunk);
    char* dst = out.space(sizeof(T) * static_cast<size_t>(n));
    for (jint i = 0; i < n; ++i) {
      jvalue v{};
      std::memcpy(&v, &chunk[i], sizeof(T));  // the jvalue member of type T, at offset 0
      put_value(dst + sizeof(T) * static_cast<size_t>(i), type, v);
    }
  }
}

void write_primitive_array(JNIEnv* jni, jarray array, jlong tag, jint type, Record& out) {
  const jint length = jni->GetArrayLength(array);
  out.reserve(1 + sizeof(void*) + 5 + static_cast<size_t>(length) * value_size(type));
  out.u1(JVMPI_GC_PRIM_ARRAY_DUMP);
  out.id(tag);
  out.u4(static_cast<uint32_t>(length));
  out.u1(static_cast<uint8_t>(type));
  switch (type) {
    case JVMPI_BOOLEAN:
      put_elements<jboolean>(
          length, type,
          [&](jint s, jint n, jboolean* to) {
            jni->GetBooleanArrayRegion(static_cast<jbooleanArray>(array), s, n, to);
          },
          out);
      break;
    case JVMPI_BYTE:
      put_elements<jbyte>(
          length, type,
          [&](jint s, jint n, jbyte* to) {
            jni->GetByteArrayRegion(static_cast<jbyteArray>(array), s, n, to);
          },
          out);
      break;
    case JVMPI_CHAR:
      put_elements<jchar>(
          length, type,
          [&](jint s, jint n, jchar* to) {
            jni->GetCharArrayRegion(static_cast<jcharArray>(array), s, n, to);
          },
          out);
      break;
    case JVMPI_SHORT:
      put_elements<jshort>(
          length, type,
          [&](jint s, jint n, jshort* to) {
            jni->GetShortArrayRegion(static_cast<jshortArray>(array), s, n, to);
          },
          out);
      break;
    case JVMPI_INT:
      put_elements<jint>(
          length, type,
          [&](jint s, jint n, jint* to) {
            jni->GetIntArrayRegion(static_cast<jintArray>(array), s, n, to);
          },
          out);
      break;
    case JVMPI_LONG:
      put_elements<jlong>(
          length, type,
          [&](jint s, jint n, jlong* to) {
            jni->GetLongArrayRegion(static_cast<jlongArray>(array), s, n, to);
          },
          out);
      break;
    case JVMPI_FLOAT:
      put_elements<jfloat>(
          length, type,
          [&](jint s, jint n, jfloat* to) {
            jni->GetFloatArrayRegion(static_cast<jfloatArray>(array), s, n, to);
          },
          out);
      break;
    case JVMPI_DOUBLE:
      put_elements<jdouble>(
          length, type,
          [&](jint s, jint n, jdouble* to) {
            jni->GetDoubleArrayRegion(static_cast<jdoubleArray>(array), s, n, to);
          },
          out);
      break;
    default:
      break;
  }
}

}  // namespace

Outcome write_record(JNIEnv* jni, jobject object, jlong tag, std::vector<char>& record) {
  if (tag == heap_reserve::object_tag()) return Outcome::kNeedsHeapWalk;
  LocalRef klass(jni, jni->GetObjectClass(object));
  if (klass.get() == nullptr) return Outcome::kFailed;
  // The record names the class by ID: the agent gets its CLASS_LOAD first (if it wants them).
  const jlong class_tag =
      object_ids::to_tag(class_events::ensure_announced(jni, static_cast<jclass>(klass.get())));
  if (class_tag == 0 || class_tag == class_class_tag(jni)) return Outcome::kNeedsHeapWalk;
  const auto layout = layout_of(jni, static_cast<jclass>(klass.get()), class_tag);
  if (layout == nullptr) return Outcome::kNeedsHeapWalk;  // a class that could not be linked
  Record out(record);
  switch (layout->shape) {
    case Shape::kInstance:
      write_instance(jni, object, tag, class_tag, *layout, out);
      break;
    case Shape::kObjectArray:
      write_object_array(jni, static_cast<jobjectArray>(object), tag, *layout, out);
      break;
    case Shape::kPrimitiveArray:
      write_primitive_array(jni, static_cast<jarray>(object), tag, layout->element_type, out);
      break;
  }
  return Outcome::kWritten;
}

void deliver(JNIEnv* jni, char* data, size_t size) {
  JVMPI_Event event{};
  event.event_type = JVMPI_EVENT_OBJECT_DUMP;
  event.env_id = jni;
  event.u.object_dump.data_len = static_cast<jint>(size);
  event.u.object_dump.data = data;
  gate::deliver_requested(&event);
}

}  // namespace jvmpi::object_dump
