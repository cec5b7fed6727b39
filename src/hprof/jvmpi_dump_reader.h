// SPDX-License-Identifier: Apache-2.0
// Parsing JVMPI's level-2 heap dump buffer (JVMPI spec §4.2; integers big-endian, IDs native) into
// records, with the class information from CLASS_LOAD that the record lengths depend on.
#pragma once

#include <jvmpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tables.h"

namespace hprof::agent {

struct DumpRoot {
  uint8_t kind;  // JVMPI_GC_ROOT_*
  jobjectID object;
  void* extra = nullptr;  // the JNI global ref, or the thread's JNIEnv*
  uint32_t frame = 0;
};

struct DumpClass {
  jobjectID id;
  jobjectID super, loader, signers, domain;
  uint32_t instance_size;
  std::vector<jobjectID> interfaces;
  std::vector<std::pair<uint16_t, jobjectID>> constant_pool;
  std::vector<const char*> static_values;  // where each static's value starts (CLASS_LOAD order)
};

struct DumpInstance {
  jobjectID id;
  jobjectID class_id;
  const char* values;  // own fields first, then the superclass's
  uint32_t length;
};

struct DumpObjectArray {
  jobjectID id;
  jobjectID element_class;
  std::vector<jobjectID> elements;
};

struct DumpPrimitiveArray {
  jobjectID id;
  uint8_t type;  // JVMPI type code
  uint32_t count;
  const char* values;  // big-endian; null at level 1
};

struct DumpVisitor {
  std::function<void(const DumpRoot&)> root;
  std::function<void(const DumpClass&)> klass;
  std::function<void(const DumpInstance&)> instance;
  std::function<void(const DumpObjectArray&)> object_array;
  std::function<void(const DumpPrimitiveArray&)> primitive_array;
};

// Walks the records of a level-1 or level-2 dump. Returns false if the buffer is malformed (what
// was read before is still visited).
bool read_heap_dump(const char* begin, const char* end, int level, const ClassTable& classes,
                    const DumpVisitor& visit);

// Bytes of one element of a primitive array of JVMPI type `type` (JVMPI_INT, ...).
size_t primitive_size(uint8_t type);
// Size in a JVMPI dump of a value with this field signature.
size_t jvmpi_value_size(const std::string& signature);
// Reads a native-order pointer from an unaligned address.
jobjectID read_id(const char* p);
// Reads a big-endian integer of n bytes.
uint64_t read_be(const char* p, size_t n);

}  // namespace hprof::agent
