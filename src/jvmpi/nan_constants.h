// SPDX-License-Identifier: Apache-2.0
// Finds Float and Double NaN constants in a class's constant pool.
//
// HotSpot's RedefineClasses merges the new version's constant pool into the current one by
// comparing entries by value, and a NaN equals nothing, so every retransformation of a class
// with a NaN constant appends another copy of each (on JDK 25, where the retransformed bytes are
// reconstituted from the merged pool, the copies double). An attached runtime keeps such classes
// out of retransformation, see docs/attach.md.
#pragma once

#include <jni.h>

#include <cstdint>
#include <span>

namespace jvmpi::nan_constants {

// The constant pool's entries as a class file (and JVMTI GetConstantPool) lays them out;
// `count` is the class file's constant_pool_count (entries + 1). Bytes that end early or an
// unknown tag end the search with what was found so far.
bool in_pool(std::span<const uint8_t> entries, int count);

// A whole class file.
bool in_class_file(std::span<const uint8_t> class_file);

// A loaded class, through JVMTI GetConstantPool (false when the VM will not say).
bool in_loaded_class(jclass klass);

}  // namespace jvmpi::nan_constants
