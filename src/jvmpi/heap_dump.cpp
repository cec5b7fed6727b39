// SPDX-License-Identifier: Apache-2.0
#include "heap_dump.h"

#include <jvmti.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "class_layouts.h"
#include "dump_buffer.h"
#include "dumped_objects.h"
#include "event_gate.h"
#include "heap_reserve.h"
#include "java_frame_methods.h"
#include "jni_reference_events.h"
#include "jvmti_access.h"
#include "known_methods.h"
#include "line_numbers.h"
#include "log.h"
#include "object_dump.h"
#include "object_ids.h"
#include "thread_registry.h"

namespace jvmpi::heap_dump {
namespace {

using class_layouts::ClassLayout;
using class_layouts::Shape;

// Where each instance field's value goes in an INSTANCE_DUMP record of one class, by JVMTI index.
struct InstancePlan {
  std::vector<int32_t> offset_of_index;  // -1: not in the record (e.g. primitives at level 1)
  std::vector<jint> type_of_index;
  uint32_t value_bytes = 0;
};

// A class object's references and static values, gathered during the walk and written at the
// end, when the size of its instances is known.
struct ClassRecord {
  bool visited = false;
  jlong super = 0;  // as the walk reports it (array classes have no layout for it)
  jlong loader = 0;
  jlong signers = 0;
  jlong protection_domain = 0;
  std::vector<std::pair<uint16_t, jlong>> constant_pool;
  std::unordered_map<jint, jlong> static_refs;
  std::unordered_map<jint, jvalue> static_values;
};

// A frame that holds a root, as the walk saw it.
struct FrameRoot {
  jlong thread_tag;
  jint depth;
  jmethodID method;
  jlocation location;  // -1 when unknown (JNI locals)
};

// An object whose class had no layout when the walk met it (a class loaded while the dump was
// prepared): what the walk reported is kept, and the record is written once the class is learnt
// after the walk, so one walk serves also when the dump is streamed and cannot be taken back.
struct DeferredObject {
  jlong tag = 0;
  jlong class_tag = 0;
  jint length = 0;                              // arrays
  std::vector<std::pair<jint, jlong>> refs;     // field or element index, referee
  std::vector<std::pair<jint, jvalue>> values;  // primitive fields by index
  jint element_type = 0;                        // primitive arrays: JVMPI type and contents
  jint count = 0;
  std::vector<char> elements;
};

jint jvmpi_type_of(jvmtiPrimitiveType t) {
  return class_layouts::type_code_of_signature(static_cast<char>(t));
}

// Builds the dump from the heap walk's callbacks. The callbacks run while the VM is stopped and
// may not call JVMTI or JNI, so everything they need is prepared before the walk.
//
// The walk reports each object's outgoing references (and primitive fields) together, as the
// "referrer", once; the record of one object is assembled while its references arrive and written
// when the next object's begin.
class HeapWalk {
 public:
  HeapWalk(int level, class_layouts::Layouts layouts, jlong class_class_tag,
           std::unordered_map<jlong, JNIEnv*> thread_envs,
           std::unordered_map<jlong, jobject> global_refs, jlong only_tag)
      : level_(level),
        layouts_(std::move(layouts)),
        class_class_tag_(class_class_tag),
        thread_envs_(std::move(thread_envs)),
        global_refs_(std::move(global_refs)),
        only_tag_(only_tag) {}

  jvmtiHeapCallbacks callbacks() const {
    jvmtiHeapCallbacks cb{};
    cb.heap_reference_callback = [](jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo* info,
                                    jlong class_tag, jlong referrer_class_tag, jlong size,
                                    jlong* tag_ptr, jlong* referrer_tag_ptr, jint length,
                                    void* self) -> jint {
      return static_cast<HeapWalk*>(self)->on_reference(kind, info, class_tag, referrer_class_tag,
                                                        size, tag_ptr, referrer_tag_ptr, length);
    };
    cb.primitive_field_callback =
        [](jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo* info, jlong class_tag,
           jlong* tag_ptr, jvalue value, jvmtiPrimitiveType type, void* self) -> jint {
      return static_cast<HeapWalk*>(self)->on_primitive_field(kind, info, class_tag, tag_ptr, value,
                                                              type);
    };
    cb.array_primitive_value_callback = [](jlong class_tag, jlong, jlong* tag_ptr, jint count,
                                           jvmtiPrimitiveType type, const void* elements,
                                           void* self) -> jint {
      return static_cast<HeapWalk*>(self)->on_primitive_array(class_tag, tag_ptr, count, type,
                                                              elements);
    };
    return cb;
  }

  // Writes what is still being assembled, the objects whose classes were learnt after the walk,
  // then the class records.
  void finish() {
    flush();
    for (const DeferredObject& d : deferred_) write_deferred(d);
    deferred_.clear();
    // A sticky root may name a class object the walk never reached (none seen on JDK 17 or 25):
    // it gets a record below like any class object met but not visited, so the root resolves.
    class_objects_.insert(sticky_written_.begin(), sticky_written_.end());
    // The walk reports nothing from the class objects of arrays and primitive types (nor of
    // classes the VM could not link); they get records of their own so every reference resolves.
    for (jlong tag : class_objects_) {
      if (only_tag_ != 0 && tag != only_tag_) continue;
      auto it = classes_.find(tag);
      if (it != classes_.end() && it->second.visited) continue;
      if (layouts_.count(tag) == 0) {
        // The class objects of int, long, ... (and of classes still being defined, which no
        // JVMTI call may touch) are no classes an agent was told about: as in HotSpot's own
        // dumps they are plain instances of java.lang.Class.
        write_class_instance(tag);
        continue;
      }
      if (level_ == 0) {
        out_.record_boundary();
        out_.u1(JVMPI_NORMAL_OBJECT);
        out_.id_from_tag(tag);
      } else {
        // Array classes extend java.lang.Object; primitive types' classes extend nothing.
        ClassRecord& record = class_record(tag);
        record.visited = true;
        if (record.super == 0) record.super = object_class_tag_;
      }
    }
    if (level_ == 0) return;
    for (jlong tag : class_order_) {
      const ClassRecord& record = classes_[tag];
      if (!record.visited) continue;
      if (layouts_.count(tag) == 0) {
        write_class_instance(tag);  // a class object the walk met that is no class we know
        continue;
      }
      write_class(tag, record);
      // A boot instance class learnt only after the walk (write_sticky_roots() did the others):
      // loaded while the dump was prepared. A streamed dump leaves its root out rather than
      // write a root after the objects (text dumps list every root first); the class and its
      // objects are in the dump all the same.
      if (only_tag_ == 0 && !out_.streaming() && is_sticky_class(tag)) write_sticky_root(tag);
    }
  }

  // Class tags the walk met with no layout: the classes of deferred objects, and class objects
  // that are not primitive types' (whose tags `primitive_mirrors` holds).
  std::vector<jlong> unknown_classes(const std::unordered_set<jlong>& primitive_mirrors) const {
    std::unordered_set<jlong> out;
    for (const DeferredObject& d : deferred_) out.insert(d.class_tag);
    for (jlong tag : class_objects_)
      if (layouts_.count(tag) == 0 && primitive_mirrors.count(tag) == 0) out.insert(tag);
    return {out.begin(), out.end()};
  }
  // Adds the layouts learnt after the walk; returns the tags that were new.
  std::vector<jlong> learn(const class_layouts::Layouts& more) {
    std::vector<jlong> added;
    for (const auto& [tag, layout] : more)
      if (layouts_.emplace(tag, layout).second) added.push_back(tag);
    last_class_tag_ = -1;
    return added;
  }
  const class_layouts::Layouts& layouts() const { return layouts_; }

  void set_object_class_tag(jlong tag) { object_class_tag_ = tag; }
  // Methods known to run as Java code on the stacks (java_frame_methods.h): a JNI-local root
  // JVMTI reports for one of their frames is a constant of compiled code.
  void set_java_methods(std::unordered_set<jmethodID> methods) {
    java_methods_ = std::move(methods);
  }
  // A streamed dump's walk again after classes were learnt: from now on the walk writes only the
  // objects tagged from `first_new_tag` on (taken when the previous walk ended: tags only grow),
  // i.e. what learning the classes created; the objects written before are passed through
  // unwritten, and no roots are written (they would come after the objects).
  void only_new_objects(jlong first_new_tag) {
    flush();
    first_new_tag_ = first_new_tag;
  }
  // Class objects the walk met that are not among the layouts: the mirrors of primitive types,
  // and classes loaded after the layouts were taken.
  std::vector<jlong> unlisted_class_objects() const {
    std::vector<jlong> out;
    for (jlong tag : class_objects_)
      if (layouts_.count(tag) == 0) out.push_back(tag);
    return out;
  }
  // From now on, every object the walk meets goes into `out` (repeats included) for
  // dumped_objects.
  void collect_objects(dumped_objects::Collector* out) { collected_ = out; }
  // The length of the object a single-object dump starts at (the walk reports it as no one's
  // referee, which is where lengths come from otherwise).
  void set_array_length(jlong tag, jint length) { object_array_lengths_[tag] = length; }

  DumpBuffer& out() { return out_; }
  const std::vector<FrameRoot>& frame_roots() const { return frame_roots_; }
  const std::unordered_map<jlong, JNIEnv*>& thread_envs() const { return thread_envs_; }

 private:
  enum class Kind { kNone, kSkip, kInstance, kObjectArray, kPrimitiveArray, kClass, kDeferred };

  // Consecutive objects are mostly of one class: the last lookup is kept.
  const ClassLayout* layout_of(jlong class_tag) {
    if (class_tag == last_class_tag_) return last_layout_;
    auto it = layouts_.find(class_tag);
    last_class_tag_ = class_tag;
    last_layout_ = it == layouts_.end() ? nullptr : it->second.get();
    last_size_known_ = false;
    return last_layout_;
  }

  ClassRecord& class_record(jlong tag) {
    auto [it, inserted] = classes_.try_emplace(tag);
    if (inserted) class_order_.push_back(tag);
    return it->second;
  }

  const InstancePlan& plan_of(jlong class_tag, const ClassLayout* layout) {
    auto [it, inserted] = plans_.try_emplace(class_tag);
    InstancePlan& plan = it->second;
    if (inserted && layout != nullptr) {
      plan.offset_of_index.assign(static_cast<size_t>(layout->index_count), -1);
      plan.type_of_index.assign(static_cast<size_t>(layout->index_count), 0);
      for (const auto& f : layout->instance_fields) {
        if (level_ < 2 && f.type != JVMPI_CLASS) continue;  // level 1 leaves primitives out
        if (f.index < 0 || f.index >= layout->index_count) continue;
        plan.offset_of_index[static_cast<size_t>(f.index)] = static_cast<int32_t>(plan.value_bytes);
        plan.type_of_index[static_cast<size_t>(f.index)] = f.type;
        plan.value_bytes += static_cast<uint32_t>(value_size(f.type));
      }
    }
    return plan;
  }

  void begin_referrer(jlong tag, jlong class_tag) {
    flush();
    out_.record_boundary();
    cur_tag_ = tag;
    cur_class_tag_ = class_tag;
    cur_plan_ = nullptr;
    if (only_tag_ != 0 && tag != only_tag_) {
      cur_kind_ = Kind::kSkip;
      return;
    }
    if (class_tag == class_class_tag_) {
      cur_kind_ = Kind::kClass;
      class_record(tag).visited = true;
      if (level_ == 0) {
        out_.u1(JVMPI_NORMAL_OBJECT);
        out_.id_from_tag(tag);
      }
      return;
    }
    const ClassLayout* layout = layout_of(class_tag);
    if (layout == nullptr && class_tag != 0 && level_ > 0) {
      cur_kind_ = Kind::kDeferred;
      DeferredObject& d = deferred_.emplace_back();
      d.tag = tag;
      d.class_tag = class_tag;
      auto it = object_array_lengths_.find(tag);
      d.length = it == object_array_lengths_.end() ? 0 : it->second;
      return;
    }
    if (layout != nullptr && layout->shape == Shape::kObjectArray) {
      cur_kind_ = Kind::kObjectArray;
      auto it = object_array_lengths_.find(tag);
      cur_length_ = it == object_array_lengths_.end() ? 0 : it->second;
      cur_values_.assign(static_cast<size_t>(cur_length_) * sizeof(void*), 0);
    } else if (layout != nullptr && layout->shape == Shape::kPrimitiveArray) {
      cur_kind_ = Kind::kPrimitiveArray;
    } else {
      cur_kind_ = Kind::kInstance;
      cur_plan_ = &plan_of(class_tag, layout);
      cur_values_.assign(cur_plan_->value_bytes, 0);
    }
  }

  void flush() {
    switch (cur_kind_) {
      case Kind::kInstance:
        if (level_ == 0) {
          out_.u1(JVMPI_NORMAL_OBJECT);
          out_.id_from_tag(cur_tag_);
        } else {
          out_.u1(JVMPI_GC_INSTANCE_DUMP);
          out_.id_from_tag(cur_tag_);
          out_.id_from_tag(cur_class_tag_);
          out_.u4(static_cast<uint32_t>(cur_values_.size()));
          out_.bytes(cur_values_.data(), cur_values_.size());
        }
        break;
      case Kind::kObjectArray:
        if (level_ == 0) {
          out_.u1(JVMPI_CLASS);
          out_.id_from_tag(cur_tag_);
        } else {
          const ClassLayout* layout = layout_of(cur_class_tag_);
          out_.u1(JVMPI_GC_OBJ_ARRAY_DUMP);
          out_.id_from_tag(cur_tag_);
          out_.u4(static_cast<uint32_t>(cur_length_));
          out_.id_from_tag(layout != nullptr ? layout->element_class_tag : 0);
          out_.bytes(cur_values_.data(), cur_values_.size());
        }
        break;
      case Kind::kPrimitiveArray: {
        // No contents arrived: an empty array.
        const ClassLayout* layout = layout_of(cur_class_tag_);
        write_primitive_array(cur_tag_, layout != nullptr ? layout->element_type : JVMPI_BYTE, 0,
                              nullptr);
        break;
      }
      default:
        break;
    }
    cur_kind_ = Kind::kNone;
    cur_tag_ = 0;
  }

  void write_class_instance(jlong tag) {
    out_.record_boundary();
    if (level_ == 0) {
      out_.u1(JVMPI_NORMAL_OBJECT);
      out_.id_from_tag(tag);
      return;
    }
    const InstancePlan& plan = plan_of(class_class_tag_, layout_of(class_class_tag_));
    out_.u1(JVMPI_GC_INSTANCE_DUMP);
    out_.id_from_tag(tag);
    out_.id_from_tag(class_class_tag_);
    out_.u4(plan.value_bytes);
    out_.zeros(plan.value_bytes);  // the walk reports none of a mirror's fields
  }

  void write_primitive_array(jlong tag, jint type, jint count, const void* elements) {
    out_.record_boundary();
    if (level_ == 0) {
      out_.u1(static_cast<uint8_t>(type));
      out_.id_from_tag(tag);
      return;
    }
    out_.u1(JVMPI_GC_PRIM_ARRAY_DUMP);
    out_.id_from_tag(tag);
    out_.u4(static_cast<uint32_t>(count));
    out_.u1(static_cast<uint8_t>(type));
    if (level_ < 2 || count == 0 || elements == nullptr) return;
    const size_t size = value_size(type);
    const size_t n = static_cast<size_t>(count);
    char* dst = out_.space(size * n);
    // Elements arrive in native (little-endian) order; the dump wants big-endian.
    switch (size) {
      case 1:
        std::memcpy(dst, elements, n);
        break;
      case 2:
        swap_copy<uint16_t>(dst, elements, n, [](uint16_t v) { return __builtin_bswap16(v); });
        break;
      case 4:
        swap_copy<uint32_t>(dst, elements, n, [](uint32_t v) { return __builtin_bswap32(v); });
        break;
      default:
        swap_copy<uint64_t>(dst, elements, n, [](uint64_t v) { return __builtin_bswap64(v); });
        break;
    }
  }

  template <typename T, typename Swap>
  static void swap_copy(char* dst, const void* src, size_t n, Swap swap) {
    const auto* in = static_cast<const char*>(src);
    for (size_t i = 0; i < n; ++i) {
      T v;
      std::memcpy(&v, in + i * sizeof v, sizeof v);
      v = swap(v);
      std::memcpy(dst + i * sizeof v, &v, sizeof v);
    }
  }

  // The record of an object whose class was learnt after the walk.
  void write_deferred(const DeferredObject& d) {
    const ClassLayout* layout = layout_of(d.class_tag);
    if (layout != nullptr && layout->shape == Shape::kPrimitiveArray) {
      write_primitive_array(d.tag, layout->element_type, d.count,
                            d.elements.empty() ? nullptr : d.elements.data());
      return;
    }
    out_.record_boundary();
    if (layout != nullptr && layout->shape == Shape::kObjectArray) {
      std::vector<char> elements(static_cast<size_t>(d.length) * sizeof(void*), 0);
      for (const auto& [index, tag] : d.refs) {
        if (index < 0 || index >= d.length) continue;
        const void* p = reinterpret_cast<const void*>(static_cast<intptr_t>(tag));
        std::memcpy(elements.data() + static_cast<size_t>(index) * sizeof p, &p, sizeof p);
      }
      out_.u1(JVMPI_GC_OBJ_ARRAY_DUMP);
      out_.id_from_tag(d.tag);
      out_.u4(static_cast<uint32_t>(d.length));
      out_.id_from_tag(layout->element_class_tag);
      out_.bytes(elements.data(), elements.size());
      return;
    }
    const InstancePlan& plan = plan_of(d.class_tag, layout);
    std::vector<char> values(plan.value_bytes, 0);
    for (const auto& [index, tag] : d.refs) put_field_id(plan, values.data(), index, tag);
    for (const auto& [index, value] : d.values) put_field_value(plan, values.data(), index, value);
    out_.u1(JVMPI_GC_INSTANCE_DUMP);
    out_.id_from_tag(d.tag);
    out_.id_from_tag(d.class_tag);
    out_.u4(static_cast<uint32_t>(values.size()));
    out_.bytes(values.data(), values.size());
  }

  void write_class(jlong tag, const ClassRecord& record) {
    out_.record_boundary();
    const size_t begin = out_.size();
    write_class_record(tag, record);
    // Agents of the HPROF lineage ask for the OBJECT_DUMP of classes of the dump they read, from
    // its handler: the record is answered from here (see dumped_objects).
    if (collected_ != nullptr && level_ == JVMPI_DUMP_LEVEL_2 && !out_.streaming()) {
      collected_->add_class_record(tag, begin, out_.size());
    }
  }

  void write_class_record(jlong tag, const ClassRecord& record) {
    const ClassLayout* layout = layout_of(tag);
    out_.u1(JVMPI_GC_CLASS_DUMP);
    out_.id_from_tag(tag);
    out_.id_from_tag(layout != nullptr && layout->super_tag != 0 ? layout->super_tag
                                                                 : record.super);
    out_.id_from_tag(record.loader);
    out_.id_from_tag(record.signers);
    out_.id_from_tag(record.protection_domain);
    out_.id(nullptr);  // class name String: the walk does not report it
    out_.id(nullptr);  // reserved
    jlong instance_size = layout != nullptr ? layout->instance_size_estimate : 0;
    if (auto it = instance_sizes_.find(tag); it != instance_sizes_.end())
      instance_size = it->second;
    out_.u4(static_cast<uint32_t>(instance_size));
    if (layout != nullptr) {
      for (jlong i : layout->interface_tags) out_.id_from_tag(i);
    }
    out_.u2(static_cast<uint16_t>(record.constant_pool.size()));
    for (const auto& [index, value] : record.constant_pool) {
      out_.u2(index);
      out_.u1(JVMPI_CLASS);
      out_.id_from_tag(value);
    }
    if (layout == nullptr) return;
    for (const auto& f : layout->static_fields) {
      if (f.type == JVMPI_CLASS) {
        auto it = record.static_refs.find(f.index);
        out_.id_from_tag(it == record.static_refs.end() ? 0 : it->second);
      } else if (level_ >= 2) {
        auto it = record.static_values.find(f.index);
        jvalue v{};
        if (it != record.static_values.end()) v = it->second;
        put_value(out_.zeros(value_size(f.type)), f.type, v);
      }
    }
  }

  void write_root(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo* info, jlong tag) {
    if (kind == JVMTI_HEAP_REFERENCE_SYSTEM_CLASS) {
      // JVMTI reports here everything the boot loader's (and hidden classes') class-loader data
      // holds: mirrors of instance, array and hidden classes, constant-pool caches, archived
      // arrays. HotSpot's own dumper roots only the boot loader's instance classes, and so do we
      // (docs/jvmpi-conformance.md): write_sticky_roots() wrote those already, every one of them
      // (JVMTI leaves out some whose mirrors the CDS archive holds, which the walk then reaches
      // by a reference); the rest are reached as in HotSpot's dumps, or not at all.
      return;
    }
    if (kind == JVMTI_HEAP_REFERENCE_JNI_LOCAL && java_methods_.count(info->jni_local.method)) {
      // An object compiled code embeds, reported once per (inlined) frame: no JNI local. It is
      // written once, as a root of no JVMPI kind (HotSpot's own dumper lists no such root).
      if (!code_constants_written_.insert(tag).second) return;
      out_.record_boundary();
      out_.u1(JVMPI_GC_ROOT_UNKNOWN);
      out_.id_from_tag(tag);
      return;
    }
    out_.record_boundary();
    auto env_of = [this](jlong thread_tag) -> JNIEnv* {
      auto it = thread_envs_.find(thread_tag);
      return it == thread_envs_.end() ? nullptr : it->second;
    };
    switch (kind) {
      case JVMTI_HEAP_REFERENCE_JNI_GLOBAL: {
        auto it = global_refs_.find(tag);
        out_.u1(JVMPI_GC_ROOT_JNI_GLOBAL);
        out_.id_from_tag(tag);
        out_.id(it == global_refs_.end() ? nullptr : it->second);
        break;
      }
      case JVMTI_HEAP_REFERENCE_MONITOR:
        out_.u1(JVMPI_GC_ROOT_MONITOR_USED);
        out_.id_from_tag(tag);
        break;
      case JVMTI_HEAP_REFERENCE_STACK_LOCAL: {
        const auto& s = info->stack_local;
        out_.u1(JVMPI_GC_ROOT_JAVA_FRAME);
        out_.id_from_tag(tag);
        out_.id(env_of(s.thread_tag));
        out_.u4(static_cast<uint32_t>(s.depth));
        frame_roots_.push_back({s.thread_tag, s.depth, s.method, s.location});
        break;
      }
      case JVMTI_HEAP_REFERENCE_JNI_LOCAL: {
        const auto& s = info->jni_local;
        out_.u1(JVMPI_GC_ROOT_JNI_LOCAL);
        out_.id_from_tag(tag);
        out_.id(env_of(s.thread_tag));
        out_.u4(static_cast<uint32_t>(s.depth));
        frame_roots_.push_back({s.thread_tag, s.depth, s.method, -1});
        break;
      }
      case JVMTI_HEAP_REFERENCE_THREAD:
        out_.u1(JVMPI_GC_ROOT_THREAD_BLOCK);
        out_.id_from_tag(tag);
        out_.id(env_of(tag));
        break;
      case JVMTI_HEAP_REFERENCE_OTHER:
        // The VM's own global handles (preallocated exceptions and the like): HotSpot's dumper
        // writes them as JNI globals, with no JNI reference an agent could know.
        out_.u1(JVMPI_GC_ROOT_JNI_GLOBAL);
        out_.id_from_tag(tag);
        out_.id(nullptr);
        break;
      default:
        out_.u1(JVMPI_GC_ROOT_UNKNOWN);
        out_.id_from_tag(tag);
        break;
    }
  }

  // Every boot-loader instance class is a sticky-class root, as in HotSpot's dumps. They are all
  // written before the walk's first record: text dumps list every root before the first object
  // (JDK 8's order) and a streamed dump cannot go back. finish() gives one the walk never reached
  // a record of its own so the root resolves; a class learnt only after the walk gets its root
  // there, late, in a one-buffer dump and none in a streamed one (docs/jvmpi-conformance.md).
  void write_sticky_roots() {
    sticky_roots_started_ = true;
    if (level_ == 0 || only_tag_ != 0) return;  // level 0 lists objects only
    std::vector<jlong> tags;
    for (const auto& [tag, layout] : layouts_)
      if (layout->boot_instance_class) tags.push_back(tag);
    std::sort(tags.begin(), tags.end());
    for (jlong tag : tags) write_sticky_root(tag);
  }

  bool is_sticky_class(jlong tag) const {
    auto it = layouts_.find(tag);
    return it != layouts_.end() && it->second->boot_instance_class;
  }

  void write_sticky_root(jlong tag) {
    if (!sticky_written_.insert(tag).second) return;
    out_.record_boundary();
    out_.u1(JVMPI_GC_ROOT_STICKY_CLASS);
    out_.id_from_tag(tag);
  }

  jint on_reference(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo* info,
                    jlong class_tag, jlong referrer_class_tag, jlong size, jlong* tag_ptr,
                    jlong* referrer_tag_ptr, jint length) {
    const jint visit = only_tag_ != 0 ? 0 : JVMTI_VISIT_OBJECTS;
    if (!sticky_roots_started_) write_sticky_roots();
    if (*tag_ptr != 0 && *tag_ptr == hidden_tag_) return 0;  // the runtime's heap reserve
    if (*tag_ptr == 0) *tag_ptr = object_ids::new_tag();
    const jlong tag = *tag_ptr;
    if (first_new_tag_ != 0) {
      if (referrer_tag_ptr == nullptr || is_old(*referrer_tag_ptr)) {
        // A root, or a reference from an object the first walk wrote: nothing to write, but the
        // walk goes on through it to what is new.
        if (!is_old(tag)) note_referee(tag, class_tag, size, length);
        return visit;
      }
      if (!is_old(tag)) note_referee(tag, class_tag, size, length);
    } else {
      note_referee(tag, class_tag, size, length);
      if (referrer_tag_ptr == nullptr) {
        if (level_ > 0 && only_tag_ == 0) write_root(kind, info, tag);
        return visit;
      }
    }
    if (*referrer_tag_ptr == 0) *referrer_tag_ptr = object_ids::new_tag();
    if (*referrer_tag_ptr != cur_tag_) begin_referrer(*referrer_tag_ptr, referrer_class_tag);
    switch (cur_kind_) {
      case Kind::kInstance:
        if (kind == JVMTI_HEAP_REFERENCE_FIELD && cur_plan_ != nullptr) {
          put_field_id(*cur_plan_, cur_values_.data(), info->field.index, tag);
        }
        break;
      case Kind::kDeferred:
        if (kind == JVMTI_HEAP_REFERENCE_FIELD) {
          deferred_.back().refs.emplace_back(info->field.index, tag);
        } else if (kind == JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT) {
          deferred_.back().refs.emplace_back(info->array.index, tag);
        }
        break;
      case Kind::kObjectArray:
        if (kind == JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT && info->array.index >= 0 &&
            info->array.index < cur_length_) {
          const void* p = reinterpret_cast<const void*>(static_cast<intptr_t>(tag));
          std::memcpy(cur_values_.data() + static_cast<size_t>(info->array.index) * sizeof p, &p,
                      sizeof p);
        }
        break;
      case Kind::kClass: {
        ClassRecord& record = class_record(cur_tag_);
        switch (kind) {
          case JVMTI_HEAP_REFERENCE_SUPERCLASS:
            record.super = tag;
            break;
          case JVMTI_HEAP_REFERENCE_CLASS_LOADER:
            record.loader = tag;
            break;
          case JVMTI_HEAP_REFERENCE_SIGNERS:
            record.signers = tag;
            break;
          case JVMTI_HEAP_REFERENCE_PROTECTION_DOMAIN:
            record.protection_domain = tag;
            break;
          case JVMTI_HEAP_REFERENCE_STATIC_FIELD:
            record.static_refs[info->field.index] = tag;
            break;
          case JVMTI_HEAP_REFERENCE_CONSTANT_POOL:
            record.constant_pool.emplace_back(static_cast<uint16_t>(info->constant_pool.index),
                                              tag);
            break;
          default:
            break;
        }
        break;
      }
      default:
        break;
    }
    return visit;
  }

  // What the record of a referee needs from its reference: whether it is a class object, its
  // length if an array, its class's instance size.
  void note_referee(jlong tag, jlong class_tag, jlong size, jint length) {
    if (class_tag == class_class_tag_) {
      // Every object's reference to its class comes here. A class object needs no length or
      // instance size, and looking up java.lang.Class's layout would evict the layout of the
      // objects being walked from layout_of's one-entry cache, once per object.
      if (tag != last_class_object_) {
        if (class_objects_.insert(tag).second && collected_ != nullptr) {
          collected_->add(tag, class_tag, size);
        }
        last_class_object_ = tag;
      }
      return;
    }
    if (collected_ != nullptr && tag != last_collected_ && class_tag != 0) {
      collected_->add(tag, class_tag, size);
      last_collected_ = tag;
    }
    if (const ClassLayout* layout = layout_of(class_tag); layout != nullptr) {
      if (layout->shape == Shape::kObjectArray) {
        object_array_lengths_.try_emplace(tag, length);
      } else if (layout->shape == Shape::kInstance && class_tag != class_class_tag_ &&
                 !last_size_known_) {
        instance_sizes_.try_emplace(class_tag, size);
        last_size_known_ = true;
      }
    } else if (length >= 0 && class_tag != 0) {
      object_array_lengths_.try_emplace(tag, length);  // an array of a class not known yet
    }
  }

  // In only_new_objects(): an object the first walk met (untagged objects get new tags).
  bool is_old(jlong tag) const { return tag != 0 && tag < first_new_tag_; }

  static void put_field_id(const InstancePlan& plan, char* values, jint index, jlong tag) {
    if (index < 0 || static_cast<size_t>(index) >= plan.offset_of_index.size()) return;
    const int32_t offset = plan.offset_of_index[static_cast<size_t>(index)];
    if (offset < 0 || plan.type_of_index[static_cast<size_t>(index)] != JVMPI_CLASS) return;
    const void* p = reinterpret_cast<const void*>(static_cast<intptr_t>(tag));
    std::memcpy(values + offset, &p, sizeof p);
  }

  static void put_field_value(const InstancePlan& plan, char* values, jint index, jvalue value) {
    if (index < 0 || static_cast<size_t>(index) >= plan.offset_of_index.size()) return;
    const int32_t offset = plan.offset_of_index[static_cast<size_t>(index)];
    const jint type = plan.type_of_index[static_cast<size_t>(index)];
    if (offset >= 0 && type != JVMPI_CLASS) put_value(values + offset, type, value);
  }

  jint on_primitive_field(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo* info,
                          jlong class_tag, jlong* tag_ptr, jvalue value, jvmtiPrimitiveType) {
    if (first_new_tag_ != 0 && is_old(*tag_ptr)) return 0;
    if (*tag_ptr == 0) *tag_ptr = object_ids::new_tag();
    if (*tag_ptr != cur_tag_) begin_referrer(*tag_ptr, class_tag);
    const jint index = info->field.index;
    if (cur_kind_ == Kind::kInstance && kind == JVMTI_HEAP_REFERENCE_FIELD &&
        cur_plan_ != nullptr) {
      put_field_value(*cur_plan_, cur_values_.data(), index, value);
    } else if (cur_kind_ == Kind::kDeferred && kind == JVMTI_HEAP_REFERENCE_FIELD) {
      deferred_.back().values.emplace_back(index, value);
    } else if (cur_kind_ == Kind::kClass && kind == JVMTI_HEAP_REFERENCE_STATIC_FIELD) {
      class_record(cur_tag_).static_values[index] = value;
    }
    return 0;
  }

  jint on_primitive_array(jlong class_tag, jlong* tag_ptr, jint count, jvmtiPrimitiveType type,
                          const void* elements) {
    if (*tag_ptr != 0 && *tag_ptr == hidden_tag_) return 0;
    if (first_new_tag_ != 0 && is_old(*tag_ptr)) return 0;
    if (*tag_ptr == 0) *tag_ptr = object_ids::new_tag();
    if (*tag_ptr != cur_tag_) begin_referrer(*tag_ptr, class_tag);
    if (cur_kind_ == Kind::kDeferred) {
      DeferredObject& d = deferred_.back();
      d.element_type = jvmpi_type_of(type);
      d.count = count;
      const auto* p = static_cast<const char*>(elements);
      if (level_ >= 2 && p != nullptr) {
        d.elements.assign(p, p + value_size(d.element_type) * static_cast<size_t>(count));
      }
      cur_kind_ = Kind::kSkip;
      return 0;
    }
    if (cur_kind_ != Kind::kPrimitiveArray) return 0;
    write_primitive_array(cur_tag_, jvmpi_type_of(type), count, elements);
    cur_kind_ = Kind::kSkip;  // written
    return 0;
  }

  const int level_;
  class_layouts::Layouts layouts_;
  const jlong class_class_tag_;
  const std::unordered_map<jlong, JNIEnv*> thread_envs_;
  const std::unordered_map<jlong, jobject> global_refs_;
  const jlong only_tag_;  // object dump: the one object to write

  DumpBuffer out_;
  Kind cur_kind_ = Kind::kNone;
  jlong cur_tag_ = 0;
  jlong cur_class_tag_ = 0;
  jint cur_length_ = 0;
  const InstancePlan* cur_plan_ = nullptr;
  std::vector<char> cur_values_;

  std::unordered_map<jlong, InstancePlan> plans_;
  std::unordered_map<jlong, ClassRecord> classes_;
  std::vector<jlong> class_order_;  // classes_ in the order first met: the dump's order
  std::unordered_map<jlong, jint> object_array_lengths_;
  std::unordered_map<jlong, jlong> instance_sizes_;
  std::vector<FrameRoot> frame_roots_;
  std::vector<DeferredObject> deferred_;
  std::unordered_set<jlong> sticky_written_;
  std::unordered_set<jmethodID> java_methods_;
  std::unordered_set<jlong> code_constants_written_;
  bool sticky_roots_started_ = false;
  const jlong hidden_tag_ = heap_reserve::object_tag();
  std::unordered_set<jlong> class_objects_;  // every object of class java.lang.Class seen
  jlong last_class_object_ = 0;              // the last one put in class_objects_
  jlong object_class_tag_ = 0;
  jlong first_new_tag_ = 0;    // only_new_objects(); 0: every object
  jlong last_class_tag_ = -1;  // layout_of's cache
  const ClassLayout* last_layout_ = nullptr;
  bool last_size_known_ = false;  // instance_sizes_ has last_class_tag_
  dumped_objects::Collector* collected_ = nullptr;
  jlong last_collected_ = 0;
};

jlong class_tag_of(JNIEnv* jni, const char* name) {
  LocalRef klass(jni, jni->FindClass(name));
  if (klass.get() == nullptr) {
    jni->ExceptionClear();
    return 0;
  }
  return object_ids::to_tag(object_ids::id_of(klass.get()));
}

jlong class_class_tag(JNIEnv* jni) {
  return class_tag_of(jni, "java/lang/Class");
}

std::unordered_map<jlong, JNIEnv*> thread_envs() {
  std::unordered_map<jlong, JNIEnv*> out;
  for (const auto& record : threads::all()) {
    if (record->thread != nullptr) {
      out.emplace(object_ids::to_tag(object_ids::id_of(record->thread)), record->env);
    }
  }
  return out;
}

// The stacks of the threads that hold frame roots, as JVMPI call traces. Frames that hold roots
// are taken from the walk itself; the others from the thread's stack right after the walk.
struct Traces {
  std::vector<JVMPI_CallTrace> traces;
  std::vector<std::vector<JVMPI_CallFrame>> frames;
};

Traces build_traces(const HeapWalk& walk) {
  std::unordered_map<jlong, std::vector<const FrameRoot*>> by_thread;
  for (const auto& root : walk.frame_roots()) by_thread[root.thread_tag].push_back(&root);
  Traces out;
  out.frames.reserve(by_thread.size());
  for (const auto& [thread_tag, roots] : by_thread) {
    auto env_it = walk.thread_envs().find(thread_tag);
    if (env_it == walk.thread_envs().end()) continue;
    ThreadRecordPtr record = threads::find(env_it->second);
    std::vector<jvmtiFrameInfo> stack(512);
    jint count = 0;
    if (record == nullptr ||
        jvmti()->GetStackTrace(record->thread, 0, static_cast<jint>(stack.size()), stack.data(),
                               &count) != JVMTI_ERROR_NONE) {
      count = 0;
    }
    jint depth = count;
    for (const FrameRoot* r : roots) depth = std::max(depth, r->depth + 1);
    std::vector<JVMPI_CallFrame> frames(static_cast<size_t>(depth));
    for (jint d = 0; d < count; ++d) {
      frames[d].method_id = known_methods::known_id(stack[d].method);
      frames[d].lineno = line_numbers::line_of(stack[d].method, stack[d].location);
    }
    for (const FrameRoot* r : roots) {
      auto& f = frames[static_cast<size_t>(r->depth)];
      if (r->location >= 0 || f.method_id != known_methods::known_id(r->method)) {
        f.method_id = known_methods::known_id(r->method);
        f.lineno = r->location >= 0 ? line_numbers::line_of(r->method, r->location)
                                    : line_numbers::kUnknownLine;
      }
    }
    out.frames.push_back(std::move(frames));
    out.traces.push_back(
        {env_it->second, static_cast<jint>(out.frames.back().size()), out.frames.back().data()});
  }
  return out;
}

// The class objects of the primitive types (int.class, ...; void.class): never loaded classes, so
// never in the layouts. Their tags are fixed once taken.
const std::unordered_set<jlong>& primitive_mirror_tags(JNIEnv* jni) {
  static std::mutex mutex;
  static std::unordered_set<jlong> tags;
  std::lock_guard lock(mutex);
  if (!tags.empty()) return tags;
  for (const char* box : {"java/lang/Boolean", "java/lang/Byte", "java/lang/Character",
                          "java/lang/Short", "java/lang/Integer", "java/lang/Long",
                          "java/lang/Float", "java/lang/Double", "java/lang/Void"}) {
    LocalRef klass(jni, jni->FindClass(box));
    if (klass.get() == nullptr) {
      jni->ExceptionClear();
      continue;
    }
    jfieldID type =
        jni->GetStaticFieldID(static_cast<jclass>(klass.get()), "TYPE", "Ljava/lang/Class;");
    if (type == nullptr) {
      jni->ExceptionClear();
      continue;
    }
    LocalRef mirror(jni, jni->GetStaticObjectField(static_cast<jclass>(klass.get()), type));
    if (mirror.get() != nullptr) tags.insert(object_ids::to_tag(object_ids::id_of(mirror.get())));
  }
  return tags;
}

// Where the time of a dump goes, on stderr with JVMPI_DUMP_TIMES=1 in the environment.
class PhaseTimes {
 public:
  PhaseTimes() : on_(std::getenv("JVMPI_DUMP_TIMES") != nullptr) {}
  void mark(const char* phase) {
    if (!on_) return;
    const auto now = std::chrono::steady_clock::now();
    // Appended piece by piece: `" " + std::string(...)` trips GCC 12's -Wrestrict false positive
    // at -O3 (a Release build with -Werror).
    text_ += ' ';
    text_ += phase;
    text_ += '=';
    text_ +=
        std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now - last_).count());
    text_ += "ms";
    last_ = now;
  }
  void add_sink_time(std::chrono::steady_clock::duration d) { sink_ += d; }
  void print(const char* what, size_t bytes) const {
    if (!on_) return;
    std::fprintf(stderr, "jvmpi: %s:%s (of which in the agent's sink %lldms) bytes=%zu\n", what,
                 text_.c_str(),
                 static_cast<long long>(
                     std::chrono::duration_cast<std::chrono::milliseconds>(sink_).count()),
                 bytes);
  }
  bool on() const { return on_; }

 private:
  bool on_;
  std::string text_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::duration sink_{};
};

// Hands the stream's sink the classes a dump may name, with their superclasses.
void tell_classes(const JVMPIExt_HeapDumpSink* sink, const class_layouts::Layouts& layouts,
                  const std::vector<jlong>& tags) {
  if (sink == nullptr || sink->classes == nullptr || tags.empty()) return;
  std::vector<JVMPIExt_DumpClass> classes;
  classes.reserve(tags.size());
  for (jlong tag : tags) {
    auto it = layouts.find(tag);
    if (it == layouts.end()) continue;
    classes.push_back({object_ids::from_tag(tag), object_ids::from_tag(it->second->super_tag),
                       static_cast<jint>(it->second->instance_size_estimate)});
  }
  sink->classes(sink->arg, classes.data(), static_cast<jint>(classes.size()));
}

// Classes the walk met without a layout (JVMTI may be called again now that the walk is over):
// a class loaded while the dump was prepared is learnt and announced, so every class a dump names
// has had its CLASS_LOAD, and the objects the walk kept for it are written. Classes
// GetLoadedClasses does not list even now are being defined or unloaded: linking them (the
// reflection call in class_layouts) would crash the VM, so they stay without a layout and their
// mirrors are written as instances of java.lang.Class.
// Returns whether a class was learnt.
bool learn_unknown_classes(JNIEnv* jni, HeapWalk& walk, const JVMPIExt_HeapDumpSink* sink) {
  if (walk.unknown_classes(primitive_mirror_tags(jni)).empty()) return false;
  const std::vector<jlong> learnt = walk.learn(class_layouts::snapshot(jni));
  tell_classes(sink, walk.layouts(), learnt);
  return !learnt.empty();
}

// `learnt`, when given, is set to whether classes were learnt after the walk (their objects are
// in the dump; what learning them created is only in a streamed one, walked again for it).
bool walk_heap(JNIEnv* jni, HeapWalk& walk, jobject initial_object,
               const JVMPIExt_HeapDumpSink* sink, PhaseTimes& times, bool* learnt = nullptr) {
  walk.set_object_class_tag(class_tag_of(jni, "java/lang/Object"));
  if (initial_object == nullptr) walk.set_java_methods(java_frame_methods::on_stacks_now());
  const jvmtiHeapCallbacks callbacks = walk.callbacks();
  bool ok = jvmti_ok(jvmti()->FollowReferences(0, nullptr, initial_object, &callbacks, &walk),
                     "FollowReferences");
  times.mark("walk");
  // Tags only grow: every object tagged from here on was made (or first reached) after the walk.
  jlong first_new_tag = object_ids::new_tag();
  if (initial_object == nullptr) {
    bool any = learn_unknown_classes(jni, walk, sink);
    if (learnt != nullptr) *learnt = any;
    // Learning a class creates objects (linking it, its CLASS_LOAD's handler) the walk could not
    // see. A one-buffer dump is taken again by the caller; a streamed one cannot go back, so the
    // heap is walked again for the objects made since the first walk, and only they are written
    // (their classes may be new again: a few rounds at most).
    for (int round = 0; any && walk.out().streaming() && ok && round < 3; ++round) {
      walk.only_new_objects(first_new_tag);
      ok = jvmti_ok(jvmti()->FollowReferences(0, nullptr, nullptr, &callbacks, &walk),
                    "FollowReferences");
      first_new_tag = object_ids::new_tag();
      times.mark("walk-new");
      any = learn_unknown_classes(jni, walk, sink);
    }
  }
  times.mark("learn");
  walk.finish();
  walk.out().deliver_held();
  times.mark("finish");
  if (walk.out().failed()) {
    log_error("not enough memory for the heap dump; no dump delivered");
    return false;
  }
  return ok && !walk.out().stopped();
}

std::unique_ptr<HeapWalk> new_heap_walk(JNIEnv* jni, jint level) {
  return std::make_unique<HeapWalk>(level, class_layouts::snapshot(jni), class_class_tag(jni),
                                    thread_envs(), jni_reference_events::global_refs_by_tag(), 0);
}

bool valid_level(jint level) {
  return level >= JVMPI_DUMP_LEVEL_0 && level <= JVMPI_DUMP_LEVEL_2;
}

}  // namespace

jint request_heap_dump(JNIEnv* jni, const JVMPI_HeapDumpArg* arg) {
  if (jni == nullptr) return JVMPI_FAIL;
  const jint level = arg == nullptr ? JVMPI_DUMP_LEVEL_2 : arg->heap_dump_level;
  if (!valid_level(level)) return JVMPI_FAIL;
  PhaseTimes times;
  auto walk = new_heap_walk(jni, level);
  dumped_objects::Collector objects(object_ids::new_tag());
  walk->collect_objects(&objects);
  times.mark("layouts");
  bool learnt = false;
  if (!walk_heap(jni, *walk, nullptr, nullptr, times, &learnt)) return JVMPI_FAIL;
  if (learnt) {
    // Rare: classes loaded while the dump was prepared. The dump is complete, but learning them
    // created objects (their reflection data) the walk could not see; the one-buffer dump has not
    // been delivered yet, so it is taken again and holds them, as the heap is now. (A streamed
    // dump cannot go back: it stays as the heap was when walked.)
    walk = new_heap_walk(jni, level);
    objects = dumped_objects::Collector(object_ids::new_tag());
    walk->collect_objects(&objects);
    if (!walk_heap(jni, *walk, nullptr, nullptr, times)) return JVMPI_FAIL;
  }
  Traces traces;
  if (level > JVMPI_DUMP_LEVEL_0) traces = build_traces(*walk);
  times.mark("traces");
  JVMPI_Event event{};
  event.event_type = JVMPI_EVENT_HEAP_DUMP;
  event.env_id = jni;
  event.u.heap_dump.dump_level = level;
  event.u.heap_dump.begin = walk->out().begin();
  event.u.heap_dump.end = walk->out().end();
  event.u.heap_dump.num_traces = static_cast<jint>(traces.traces.size());
  event.u.heap_dump.traces = traces.traces.empty() ? nullptr : traces.traces.data();
  {
    // The agent's handler may ask for every object of the dump.
    const dumped_objects::Published published(std::move(objects), walk->layouts(),
                                              walk->out().begin());
    times.mark("index");
    gate::deliver_requested(&event);
  }
  times.mark("agent");
  times.print("heap dump", walk->out().size());
  return JVMPI_SUCCESS;
}

jint JNICALL stream_heap_dump(jint level, jint chunk_bytes, const JVMPIExt_HeapDumpSink* sink) {
  JNIEnv* jni = current_jni_env();
  constexpr jint kMinChunk = 64 << 10;
  constexpr jint kMaxChunk = 256 << 20;
  if (jni == nullptr || sink == nullptr || sink->chunk == nullptr || !valid_level(level) ||
      (chunk_bytes != 0 && (chunk_bytes < kMinChunk || chunk_bytes > kMaxChunk))) {
    return JVMPI_FAIL;
  }
  PhaseTimes times;
  auto walk = new_heap_walk(jni, level);
  times.mark("layouts");
  std::vector<jlong> tags;
  tags.reserve(walk->layouts().size());
  for (const auto& entry : walk->layouts()) tags.push_back(entry.first);
  tell_classes(sink, walk->layouts(), tags);
  // Classes loaded while the sink prepared itself are learnt now, just before the walk: a streamed
  // dump cannot be taken again, and a class learnt only after the walk would get its sticky-class
  // root after the objects (text dumps list every root first). Only a class loaded between here
  // and the walk's safepoint can still be late.
  tell_classes(sink, walk->layouts(), walk->learn(class_layouts::snapshot(jni)));
  size_t total = 0;
  walk->out().stream_to(chunk_bytes == 0 ? size_t{4} << 20 : static_cast<size_t>(chunk_bytes),
                        [sink, &total, &times](const char* begin, const char* end) {
                          const auto start = std::chrono::steady_clock::now();
                          total += static_cast<size_t>(end - begin);
                          const bool go = sink->chunk(sink->arg, begin, end) != JNI_FALSE;
                          if (times.on())
                            times.add_sink_time(std::chrono::steady_clock::now() - start);
                          return go;
                        });
  if (!walk_heap(jni, *walk, nullptr, sink, times)) return JVMPI_FAIL;
  Traces traces;
  if (level > JVMPI_DUMP_LEVEL_0) traces = build_traces(*walk);
  times.mark("traces");
  if (sink->finished != nullptr) {
    sink->finished(sink->arg, static_cast<jint>(traces.traces.size()),
                   traces.traces.empty() ? nullptr : traces.traces.data());
  }
  times.mark("agent");
  times.print("streamed heap dump", total);
  return JVMPI_SUCCESS;
}

jint request_object_dump(JNIEnv* jni, jobjectID object_id) {
  if (jni == nullptr || object_id == nullptr) return JVMPI_FAIL;
  // A class of the heap dump being delivered: its record in that dump (no heap walk).
  if (dumped_objects::request_class_dump(jni, object_id)) return JVMPI_SUCCESS;
  jobject object = object_ids::object_of(jni, object_id);
  if (object == nullptr) return JVMPI_FAIL;
  LocalRef ref(jni, object);
  std::vector<char> record;
  switch (object_dump::write_record(jni, object, object_ids::to_tag(object_id), record)) {
    case object_dump::Outcome::kWritten:
      object_dump::deliver(jni, record.data(), record.size());
      return JVMPI_SUCCESS;
    case object_dump::Outcome::kFailed:
      return JVMPI_FAIL;
    case object_dump::Outcome::kNeedsHeapWalk:
      break;
  }
  // A class object: its record holds what only the heap walk reports (resolved constant-pool
  // entries), so it starts at the object.
  LocalRef klass(jni, jni->GetObjectClass(object));
  JvmtiPtr<char> signature;
  if (jvmti()->GetClassSignature(static_cast<jclass>(klass.get()), signature.out(), nullptr) !=
      JVMTI_ERROR_NONE) {
    return JVMPI_FAIL;
  }
  // One object's record needs the layout of its class, and for a class object that of the class
  // it describes, not those of every loaded class (a per-request cost in the thousands of classes).
  class_layouts::Layouts layouts;
  class_layouts::add(jni, static_cast<jclass>(klass.get()), layouts);
  if (std::strcmp(signature.get(), "Ljava/lang/Class;") == 0) {
    JvmtiPtr<char> described;
    if (jvmti()->GetClassSignature(static_cast<jclass>(object), described.out(), nullptr) ==
            JVMTI_ERROR_NONE &&
        (described.get()[0] == 'L' || described.get()[0] == '[')) {  // not a primitive type's
      class_layouts::add(jni, static_cast<jclass>(object), layouts);
    }
  }
  HeapWalk walk(JVMPI_DUMP_LEVEL_2, std::move(layouts), class_class_tag(jni), {}, {},
                object_ids::to_tag(object_id));
  if (signature.get()[0] == '[') {
    walk.set_array_length(object_ids::to_tag(object_id),
                          jni->GetArrayLength(static_cast<jarray>(object)));
  }
  PhaseTimes times;
  if (!walk_heap(jni, walk, object, nullptr, times) || walk.out().size() == 0) return JVMPI_FAIL;
  object_dump::deliver(jni, walk.out().begin(), walk.out().size());
  return JVMPI_SUCCESS;
}

}  // namespace jvmpi::heap_dump
