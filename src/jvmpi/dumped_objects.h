// SPDX-License-Identifier: Apache-2.0
// The objects of the heap dump whose HEAP_DUMP event is being delivered, so that the agent's
// handler can ask for each of them. Agents of the HPROF lineage read a dump in that handler and
// RequestEvent(OBJECT_ALLOC) every object they have not seen allocated; most of those IDs were
// handed out by the heap walk itself, with no JNI reference to find the object by, and JVMTI's only
// way from a tag to its object (GetObjectsWithTags) scans the whole tag map per call. What such a
// request answers (class, size, array kind) the walk saw already: it is kept, sorted by ID, while
// the handler runs, and dropped when it returns (the memory a dump's delivery holds anyway).
#pragma once

#include <jni.h>
#include <jvmpi.h>

#include <vector>

#include "class_layouts.h"

namespace jvmpi::dumped_objects {

struct Object {
  jlong tag;
  jlong class_tag;
  jlong size;
};

// Makes `objects` (any order, repeats allowed) answerable while it lives: construct it just before
// delivering the dump, on the delivering thread. Dumps requested from a dump's handler nest.
class Published {
 public:
  Published(std::vector<Object> objects, const class_layouts::Layouts& layouts);
  ~Published();
  Published(const Published&) = delete;
  Published& operator=(const Published&) = delete;
};

// RequestEvent(OBJECT_ALLOC) of an object of the dump being delivered, answered from the dump;
// false when `id` is none of its objects (the caller then looks the object up).
bool request_object_alloc(JNIEnv* jni, jobjectID id);

}  // namespace jvmpi::dumped_objects
