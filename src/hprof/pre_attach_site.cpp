// SPDX-License-Identifier: Apache-2.0
#include "pre_attach_site.h"

#include <jvmpi_ext.h>

#include "jvmpi_client.h"

namespace hprof::agent {
namespace {

// The pseudo method's ID: an address of ours, never a real jmethodID.
const char g_before_profiling_method = 0;

struct HistogramTarget {
  Profile* profile;
  unsigned trace;
};

void JNICALL add_counts(void* arg, const JVMPIExt_ClassCount* counts, jint count) {
  auto* target = static_cast<HistogramTarget*>(arg);
  AllocationSites& sites = target->profile->sites;
  for (jint i = 0; i < count; ++i) {
    const JVMPIExt_ClassCount& c = counts[i];
    if (c.instances <= 0) continue;
    const uint32_t site = sites.site_index({c.is_array, c.class_id, target->trace});
    sites.add_untracked(site, static_cast<uint64_t>(c.instances),
                        static_cast<uint64_t>(c.bytes > 0 ? c.bytes : 0));
  }
}

}  // namespace

bool count_objects_allocated_before(Profile& p, std::string& error) {
  JVMPI_ExtInterface* ext = jvmpi_ext();
  if (ext == nullptr || !JVMPI_EXT_HAS(ext, ClassHistogram)) {
    error = "this JVMPI runtime cannot count the objects allocated before the attach";
    return false;
  }
  auto* method = reinterpret_cast<jmethodID>(const_cast<char*>(&g_before_profiling_method));
  if (p.classes.method(method).name.empty()) {
    MethodInfo m;
    m.class_name = kBeforeProfilingClass;
    m.name = kBeforeProfilingMethod;
    m.signature = "()V";
    p.classes.add_pseudo_method(method, m);
  }
  // One frame (depth=0 keeps its traces empty, as for every site).
  const JVMPI_CallFrame frame{-1, method};
  HistogramTarget target{&p,
                         p.options.depth > 0 ? p.traces.intern(&frame, 1, 0) : kEmptyTraceSerial};
  if (ext->ClassHistogram(add_counts, &target) != JVMPI_SUCCESS) {
    error = "the heap walk that counts the objects allocated before the attach failed";
    return false;
  }
  return true;
}

}  // namespace hprof::agent
