// SPDX-License-Identifier: Apache-2.0
#include "class_histogram.h"

#include <jvmpi.h>
#include <jvmti.h>

#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "allocation_events.h"
#include "class_events.h"
#include "full_collection.h"
#include "jvmti_access.h"
#include "object_events.h"
#include "object_ids.h"

namespace jvmpi::class_histogram {
namespace {

struct Counts {
  jlong instances = 0;
  jlong bytes = 0;
};

// Per class tag; classes without a tag (none, once every loaded class has its ID) count under 0.
using CountsByClassTag = std::unordered_map<jlong, Counts>;

jint JNICALL count_object(jlong class_tag, jlong size, jlong*, jint, void* user_data) {
  Counts& c = (*static_cast<CountsByClassTag*>(user_data))[class_tag];
  ++c.instances;
  c.bytes += size;
  return 0;
}

// How OBJECT_ALLOC names an object of `klass` (allocation_events does the same per allocation).
std::pair<jint, jobjectID> alloc_name(JNIEnv* jni, jclass klass, jobjectID klass_id) {
  JvmtiPtr<char> signature;
  if (jvmti()->GetClassSignature(klass, signature.out(), nullptr) != JVMTI_ERROR_NONE) {
    return {JVMPI_NORMAL_OBJECT, klass_id};
  }
  const jint type = object_events::type_code(signature.get(), nullptr);
  if (type == JVMPI_NORMAL_OBJECT) {
    jobjectID id = class_events::ensure_announced(jni, klass);
    return {type, id != nullptr ? id : klass_id};
  }
  if (type == JVMPI_CLASS) return {type, object_events::element_class_id(jni, klass)};
  return {type, nullptr};
}

}  // namespace

jint JNICALL class_histogram(JVMPIExt_ClassCountHandler handler, void* arg) {
  JNIEnv* jni = current_jni_env();
  if (handler == nullptr || jni == nullptr || current_phase() != JVMTI_PHASE_LIVE) {
    return JVMPI_FAIL;
  }
  // The runtime's own allocations here (IDs, names) are not the program's.
  allocation_events::InternalAllocations internal;
  jint class_count = 0;
  JvmtiPtr<jclass> classes;
  if (!jvmti_ok(jvmti()->GetLoadedClasses(&class_count, classes.out()), "GetLoadedClasses")) {
    return JVMPI_FAIL;
  }
  // Every loaded class gets its ID (its tag) first, so that the walk names each object's class.
  std::unordered_map<jlong, jint> class_index_by_tag;
  for (jint i = 0; i < class_count; ++i) {
    class_index_by_tag.emplace(object_ids::to_tag(object_ids::id_of(classes[i])), i);
  }
  // Only live objects: what the heap holds besides them is garbage the collector has not taken.
  full_collection::run();
  CountsByClassTag by_tag;
  jvmtiHeapCallbacks callbacks{};
  callbacks.heap_iteration_callback = count_object;
  const bool walked =
      jvmti_ok(jvmti()->IterateThroughHeap(0, nullptr, &callbacks, &by_tag), "IterateThroughHeap");
  if (walked) {
    // Several classes may share one name (every primitive int[] of any loader is one
    // JVMPI_INT): their counts add up.
    std::map<std::pair<jint, jobjectID>, Counts> by_name;
    for (const auto& [tag, counts] : by_tag) {
      auto it = class_index_by_tag.find(tag);
      if (it == class_index_by_tag.end()) continue;  // a class defined during the walk
      jclass klass = classes[it->second];
      Counts& c = by_name[alloc_name(jni, klass, object_ids::from_tag(tag))];
      c.instances += counts.instances;
      c.bytes += counts.bytes;
    }
    std::vector<JVMPIExt_ClassCount> entries;
    entries.reserve(by_name.size());
    for (const auto& [name, counts] : by_name) {
      entries.push_back({name.first, name.second, counts.instances, counts.bytes});
    }
    handler(arg, entries.data(), static_cast<jint>(entries.size()));
  }
  for (jint i = 0; i < class_count; ++i) jni->DeleteLocalRef(classes[i]);
  return walked ? JVMPI_SUCCESS : JVMPI_FAIL;
}

}  // namespace jvmpi::class_histogram
