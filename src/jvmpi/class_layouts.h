// SPDX-License-Identifier: Apache-2.0
// What the heap and object dumps need to know about each class before walking the heap (the walk's
// callbacks may not call JVMTI): its shape, its fields in dump order with the indexes JVMTI's heap
// walk reports them by, its superclass and interfaces. Cached per class until it is unloaded.
#pragma once

#include <jni.h>

#include <memory>
#include <unordered_map>
#include <vector>

namespace jvmpi::class_layouts {

enum class Shape { kInstance, kObjectArray, kPrimitiveArray };

struct Field {
  jint index;   // JVMTI heap-walk field index (superclasses and superinterfaces first)
  jint type;    // JVMPI type code (JVMPI_CLASS for references)
  jfieldID id;  // for reading the field through JNI (valid while the class is loaded)
};

struct ClassLayout {
  Shape shape = Shape::kInstance;
  jint element_type = 0;        // primitive arrays: the element's JVMPI type code
  jlong element_class_tag = 0;  // reference arrays: the element class's tag
  jlong super_tag = 0;
  std::vector<jlong> interface_tags;   // directly implemented, as CLASS_LOAD counts them
  std::vector<Field> instance_fields;  // dump order: the class's own, then its superclass's, ...
  std::vector<Field> static_fields;    // in the order of CLASS_LOAD's statics
  jint index_count = 0;                // size of the class's field-index space
  jlong instance_size_estimate = 0;    // used when the heap holds no instance to measure
  bool boot_instance_class = false;    // not an array, not hidden, defined by the boot loader
};

using Layouts = std::unordered_map<jlong, std::shared_ptr<const ClassLayout>>;

// Layouts of every loaded class, by class tag (ID).
Layouts snapshot(JNIEnv* jni);

// Adds a class that GetLoadedClasses did not list (the heap can hold instances of classes the
// CDS archive restored without loading them in the usual way).
void add(JNIEnv* jni, jclass klass, Layouts& layouts);

// The cached layout of the class with this tag, or null when none is cached yet.
std::shared_ptr<const ClassLayout> cached(jlong class_tag);

// Drops the cached layout of an unloaded class.
void forget(jlong class_tag);

// JVMPI type code of a field or array-element signature.
jint type_code_of_signature(char first);

}  // namespace jvmpi::class_layouts
