// SPDX-License-Identifier: Apache-2.0
#include "dumped_objects.h"

#include <sys/mman.h>

#include <algorithm>
#include <memory>
#include <mutex>

#include "event_gate.h"
#include "object_dump.h"
#include "object_events.h"
#include "object_ids.h"

namespace jvmpi::dumped_objects {
namespace {

using class_layouts::Shape;

struct Table {
  Collector objects;  // others_ sorted by tag, each once
  class_layouts::Layouts layouts;
  const char* dump = nullptr;    // the dump's buffer, alive while the table is published
  std::shared_ptr<Table> outer;  // the dump being delivered when this one was requested
};

std::mutex g_mutex;
std::shared_ptr<Table> g_current;

std::shared_ptr<Table> current() {
  std::lock_guard lock(g_mutex);
  return g_current;
}

}  // namespace

Collector& Collector::operator=(Collector&& other) noexcept {
  if (this == &other) return *this;
  if (by_step_ != nullptr) munmap(by_step_, mapped_bytes_);
  base_ = other.base_;
  by_step_ = other.by_step_;
  steps_ = other.steps_;
  mapped_bytes_ = other.mapped_bytes_;
  others_ = std::move(other.others_);
  class_records_ = std::move(other.class_records_);
  other.by_step_ = nullptr;
  other.steps_ = 0;
  other.mapped_bytes_ = 0;
  return *this;
}

Collector::~Collector() {
  if (by_step_ != nullptr) munmap(by_step_, mapped_bytes_);
}

bool Collector::grow(size_t steps) {
  constexpr size_t kHugePage = size_t{2} << 20;
  size_t bytes = mapped_bytes_ == 0 ? kHugePage : mapped_bytes_;
  while (bytes / sizeof(Entry) < steps) bytes *= 2;
  void* p = by_step_ == nullptr
                ? mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                : mremap(by_step_, mapped_bytes_, bytes, MREMAP_MAYMOVE);
  if (p == MAP_FAILED) return false;
  madvise(p, bytes, MADV_HUGEPAGE);   // advice only
  by_step_ = static_cast<Entry*>(p);  // fresh pages read as zero: no object
  mapped_bytes_ = bytes;
  steps_ = bytes / sizeof(Entry);
  return true;
}

void Collector::seal() {
  std::sort(others_.begin(), others_.end(),
            [](const Object& a, const Object& b) { return a.tag < b.tag; });
  others_.erase(std::unique(others_.begin(), others_.end(),
                            [](const Object& a, const Object& b) { return a.tag == b.tag; }),
                others_.end());
  std::sort(class_records_.begin(), class_records_.end(),
            [](const ClassRecord& a, const ClassRecord& b) { return a.tag < b.tag; });
}

bool Collector::find_class_record(jlong tag, size_t& begin, size_t& end) const {
  auto it = std::lower_bound(class_records_.begin(), class_records_.end(), tag,
                             [](const ClassRecord& r, jlong t) { return r.tag < t; });
  if (it == class_records_.end() || it->tag != tag) return false;
  begin = it->begin;
  end = it->end;
  return true;
}

bool Collector::find(jlong tag, Object& found) const {
  const jlong step = (tag - base_) >> 3;
  if (tag > base_ && (tag & 7) == 0 && static_cast<size_t>(step) < steps_) {
    const Entry& e = by_step_[static_cast<size_t>(step)];
    found = {tag, e.class_tag, e.size};
    return e.class_tag != 0;
  }
  auto it = std::lower_bound(others_.begin(), others_.end(), tag,
                             [](const Object& o, jlong t) { return o.tag < t; });
  if (it == others_.end() || it->tag != tag) return false;
  found = *it;
  return true;
}

Published::Published(Collector objects, const class_layouts::Layouts& layouts, const char* dump) {
  objects.seal();
  auto table = std::make_shared<Table>(Table{std::move(objects), {}, dump, nullptr});
  table->layouts = layouts;
  std::lock_guard lock(g_mutex);
  table->outer = g_current;
  g_current = std::move(table);
}

Published::~Published() {
  std::lock_guard lock(g_mutex);
  if (g_current != nullptr) g_current = g_current->outer;
}

bool request_object_alloc(JNIEnv* jni, jobjectID id) {
  const std::shared_ptr<Table> table = current();
  if (table == nullptr || jni == nullptr) return false;
  const jlong tag = object_ids::to_tag(id);
  Object found{};
  if (!table->objects.find(tag, found)) return false;
  const Object* it = &found;
  auto layout = table->layouts.find(it->class_tag);
  if (layout == table->layouts.end()) return false;
  JVMPI_Event event{};
  event.event_type = JVMPI_EVENT_OBJECT_ALLOC;
  event.env_id = jni;
  auto& e = event.u.obj_alloc;
  e.arena_id = object_events::kHeapArena;
  e.size = static_cast<jint>(it->size);
  e.obj_id = id;
  // As object_events' answer from the object: instances name their class, arrays of references
  // their element class, primitive arrays their element type and no class.
  switch (layout->second->shape) {
    case Shape::kInstance:
      e.is_array = JVMPI_NORMAL_OBJECT;
      // java.lang.Class's own class object names no class (object_events.cpp says why).
      e.class_id = it->tag == it->class_tag ? nullptr : object_ids::from_tag(it->class_tag);
      break;
    case Shape::kObjectArray:
      e.is_array = JVMPI_CLASS;
      e.class_id = object_ids::from_tag(layout->second->element_class_tag);
      break;
    case Shape::kPrimitiveArray:
      e.is_array = layout->second->element_type;
      e.class_id = nullptr;
      break;
  }
  gate::deliver_requested(&event);
  return true;
}

bool request_class_dump(JNIEnv* jni, jobjectID id) {
  const std::shared_ptr<Table> table = current();
  if (table == nullptr || jni == nullptr || table->dump == nullptr) return false;
  size_t begin = 0, end = 0;
  if (!table->objects.find_class_record(object_ids::to_tag(id), begin, end)) return false;
  // A copy: the handler may keep reading it while it asks for more.
  std::vector<char> record(table->dump + begin, table->dump + end);
  object_dump::deliver(jni, record.data(), record.size());
  return true;
}

}  // namespace jvmpi::dumped_objects
