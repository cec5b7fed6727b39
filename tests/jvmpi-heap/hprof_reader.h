// SPDX-License-Identifier: Apache-2.0
// A minimal reader of the JVM's own binary heap dumps (JAVA PROFILE 1.0.2, written by
// `jcmd <pid> GC.heap_dump` or HotSpotDiagnosticMXBean.dumpHeap): object counts per class, to
// cross-check the JVMPI heap dump. Independent of src/formats on purpose.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace jvmpiheap {

struct HprofCounts {
  std::map<std::string, long> instances;     // by class name, dotted ("jvmpiheap.X$Y")
  std::map<std::string, long> obj_arrays;    // by array class name as the dump names it ("[Lx;")
  std::map<int, long> prim_arrays;           // by HPROF basic type (4 boolean ... 11 long)
  std::map<int, long> roots;                 // by HPROF root sub-record tag (0x01 ... 0x08, 0xff)
  std::map<uint32_t, long> frame_roots;      // Java-frame roots by thread serial
  std::map<uint32_t, long> jni_local_roots;  // JNI-local roots by thread serial
  long classes = 0;
  long total_instances = 0;
};

// False with a message when the file is not a readable HPROF 1.0.2 dump.
bool read_hprof_counts(const std::string& path, HprofCounts* out, std::string* error);

}  // namespace jvmpiheap
