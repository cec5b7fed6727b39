// SPDX-License-Identifier: Apache-2.0
// The objects of the heap dump whose HEAP_DUMP event is being delivered, so that the agent's
// handler can ask for each of them. Agents of the HPROF lineage read a dump in that handler and
// RequestEvent(OBJECT_ALLOC) every object they have not seen allocated; most of those IDs were
// handed out by the heap walk itself, with no JNI reference to find the object by, and JVMTI's only
// way from a tag to its object (GetObjectsWithTags) scans the whole tag map per call. What such a
// request answers (class, size, array kind) the walk saw already: it is kept while the handler
// runs, and dropped when it returns (the memory a dump's delivery holds anyway).
#pragma once

#include <jni.h>
#include <jvmpi.h>

#include <utility>
#include <vector>

#include "class_layouts.h"

namespace jvmpi::dumped_objects {

struct Object {
  jlong tag;
  jlong class_tag;
  jlong size;
};

// What a heap walk saw of each object, kept as the walk meets it (repeats allowed). The walk hands
// out its tags in increasing steps of 8 from object_ids::new_tag(), so the objects it tags are
// kept in an array indexed by tag (no sort, no hash: one store per object, one load per request);
// objects tagged before the walk, a few, are kept apart and sorted once.
class Collector {
 public:
  // `first_walk_tag`: object_ids::new_tag() taken before the walk; every tag the walk gives out is
  // greater.
  explicit Collector(jlong first_walk_tag) : base_(first_walk_tag) {}
  Collector(Collector&& other) noexcept { *this = std::move(other); }
  Collector& operator=(Collector&& other) noexcept;
  Collector(const Collector&) = delete;
  Collector& operator=(const Collector&) = delete;
  ~Collector();

  void add(jlong tag, jlong class_tag, jlong size) {
    if (class_tag == 0) return;  // a record's class is needed to answer for it
    const jlong step = (tag - base_) >> 3;
    if (tag > base_ && (tag & 7) == 0 && step < kMaxStep) {
      const size_t i = static_cast<size_t>(step);
      if (i >= steps_ && !grow(i + 1)) return;  // out of memory: that object goes unanswered
      by_step_[i] = {class_tag, size};
    } else {
      others_.push_back({tag, class_tag, size});
    }
  }
  // The CLASS_DUMP record of the class with `tag` is at [begin, end) of the dump's buffer
  // (level 2, one buffer).
  void add_class_record(jlong tag, size_t begin, size_t end) {
    class_records_.push_back({tag, begin, end});
  }
  // Sorts what is kept apart; from then on find() answers.
  void seal();
  // The object with `tag` (in `found`), or false.
  bool find(jlong tag, Object& found) const;
  // Where the CLASS_DUMP record of the class with `tag` is in the dump's buffer, or false.
  bool find_class_record(jlong tag, size_t& begin, size_t& end) const;

 private:
  struct Entry {
    jlong class_tag;  // 0: no object has this tag
    jlong size;
  };
  // Tags the walk gives out are dense (other threads rarely take tags during a walk, which runs at
  // a safepoint); a tag this far above the first is kept apart rather than growing the array.
  static constexpr jlong kMaxStep = jlong{1} << 31;

  // Makes room for `steps` entries (new ones zero). The array is mapped memory grown in place
  // (mremap), in huge pages where granted: it is written at the walk's pace, one entry per object.
  bool grow(size_t steps);

  jlong base_ = 0;
  Entry* by_step_ = nullptr;  // index (tag - base_) / 8
  size_t steps_ = 0;          // entries usable
  size_t mapped_bytes_ = 0;
  std::vector<Object> others_;  // any order, repeats allowed
  struct ClassRecord {
    jlong tag;
    size_t begin, end;
  };
  std::vector<ClassRecord> class_records_;  // sorted by seal()
};

// Makes what `objects` holds answerable while it lives: construct it just before delivering the
// dump, on the delivering thread. Dumps requested from a dump's handler nest.
class Published {
 public:
  // `dump`: the start of the dump's buffer, which the class records' offsets are relative to.
  Published(Collector objects, const class_layouts::Layouts& layouts, const char* dump);
  ~Published();
  Published(const Published&) = delete;
  Published& operator=(const Published&) = delete;
};

// RequestEvent(OBJECT_ALLOC) of an object of the dump being delivered, answered from the dump;
// false when `id` is none of its objects (the caller then looks the object up).
bool request_object_alloc(JNIEnv* jni, jobjectID id);

// RequestEvent(OBJECT_DUMP) of a class of the dump being delivered, answered with its CLASS_DUMP
// record of that dump: what a heap walk started at the class object would write, without the walk
// (on JDK 17 every JVMTI walk also visits the whole heap to clear its marks, milliseconds each,
// and such agents ask per object they read). False when `id` is no class of that dump (the caller
// then walks).
bool request_class_dump(JNIEnv* jni, jobjectID id);

}  // namespace jvmpi::dumped_objects
