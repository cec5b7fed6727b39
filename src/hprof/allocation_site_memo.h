// Finds the site of an allocation (heap=sites) from the allocating stack and the allocated class.
// Every allocation asks; javac allocates at tens of thousands of sites (depth 4). Answers come
// from a per-thread memo of recent (stack, class) -> site answers (no lock), then from a shared
// open-addressing table of every (stack, class) seen, frames stored inline, so a known site costs
// one probe instead of interning the trace (a node-based map, its frames behind another pointer)
// and looking the site up in a second map.
#pragma once

#include <jvmpi.h>

#include <cstdint>
#include <mutex>
#include <vector>

#include "allocation_sites.h"
#include "tables.h"

namespace hprof::agent {

// The runtime's LineOfLocation (jvmpi_ext.h): the source line of a bytecode index.
using LineOfLocation = jint(JNICALL*)(jmethodID method, jint location);

class SiteFinder {
 public:
  SiteFinder();
  // The index in `sites` of the site (type, class_id, trace of these frames and thread), created
  // on first use: the same answer as sites.site_index({type, class_id, traces.intern(...)}). A
  // finder serves one sites table and one trace table for its life.
  // With `lines`, the frames' lineno fields hold bytecode indexes (GetCallTraceLocations) and the
  // finder keys on them, turning them into source lines (for the trace) only for a stack it has
  // not seen; a finder is called with or without `lines` for its whole life, never both.
  uint32_t find(AllocationSites& sites, TraceTable& traces, const JVMPI_CallFrame* frames,
                int count, unsigned thread_serial, jint type, jobjectID class_id,
                LineOfLocation lines = nullptr);

  static constexpr int kInlineFrames = 4;  // HPROF's default depth; deeper stacks skip both caches

  struct Entry {
    uint64_t hash = 0;
    jobjectID class_id = nullptr;
    jint type = 0;
    unsigned thread = 0;
    int count = -1;  // -1: empty
    uint32_t site = 0;
    JVMPI_CallFrame frames[kInlineFrames];
  };

 private:
  bool lookup(uint64_t hash, const Entry& key, uint32_t* site) const;  // caller holds mutex_
  void insert(const Entry& entry);                                     // caller holds mutex_

  const uint64_t id_;  // tells finders apart in the per-thread memo; never 0
  mutable std::mutex mutex_;
  std::vector<Entry> table_;
  size_t size_ = 0;
};

}  // namespace hprof::agent
