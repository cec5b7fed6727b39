// SPDX-License-Identifier: Apache-2.0
#include "dumped_objects.h"

#include <algorithm>
#include <memory>
#include <mutex>

#include "event_gate.h"
#include "object_events.h"
#include "object_ids.h"

namespace jvmpi::dumped_objects {
namespace {

using class_layouts::Shape;

struct Table {
  std::vector<Object> objects;  // sorted by tag, each once
  class_layouts::Layouts layouts;
  std::shared_ptr<Table> outer;  // the dump being delivered when this one was requested
};

std::mutex g_mutex;
std::shared_ptr<Table> g_current;

std::shared_ptr<Table> current() {
  std::lock_guard lock(g_mutex);
  return g_current;
}

}  // namespace

Published::Published(std::vector<Object> objects, const class_layouts::Layouts& layouts) {
  auto table = std::make_shared<Table>();
  std::sort(objects.begin(), objects.end(),
            [](const Object& a, const Object& b) { return a.tag < b.tag; });
  objects.erase(std::unique(objects.begin(), objects.end(),
                            [](const Object& a, const Object& b) { return a.tag == b.tag; }),
                objects.end());
  table->objects = std::move(objects);
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
  auto it = std::lower_bound(table->objects.begin(), table->objects.end(), tag,
                             [](const Object& o, jlong t) { return o.tag < t; });
  if (it == table->objects.end() || it->tag != tag) return false;
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

}  // namespace jvmpi::dumped_objects
