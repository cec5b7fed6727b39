// SPDX-License-Identifier: Apache-2.0
// Finds the site of an allocation (heap=sites) from the allocating stack and the allocated class.
// Every allocation asks; javac allocates at tens of thousands of sites (depth 4). Answers come
// from a per-thread memo of recent (stack, class) -> site answers, then from a shared
// open-addressing table of every (stack, class) seen, frames stored inline, so a known site costs
// one probe instead of interning the trace (a node-based map, its frames behind another pointer)
// and looking the site up in a second map. A key with its answer fits one cache line, since both
// lookups cost about one cache miss each (the memo misses on about half of javac's allocations,
// whose sites do not fit it). Neither takes a lock for a known site: the shared table
// is read lock-free (slots are published once, filled, and never change; a grown table replaces
// the old one, which is kept for readers still in it), and only a new site takes the mutex.
#pragma once

#include <jvmpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
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

  // A (stack, class) key and its site in one cache line. Frames' locations (bytecode indexes, or
  // lines, or JVMPI's negative codes) are stored plus kLocationBias in 16 bits; a stack with one
  // outside that range, or a type beyond 8 bits, skips both caches (and gets the same answer).
  static constexpr jint kLocationBias = 3;
  struct alignas(64) Entry {
    jobjectID class_id = nullptr;
    jmethodID methods[kInlineFrames] = {};  // unused frames null
    uint16_t locations[kInlineFrames] = {};
    uint32_t site = 0;
    uint32_t thread = 0;
    int8_t type = 0;
    int8_t count = -1;  // -1: empty; in the shared table, written last (release)
  };
  static_assert(sizeof(Entry) == 64);

 private:
  struct Table {
    explicit Table(size_t n) : mask(n - 1), slots(std::make_unique<Entry[]>(n)) {}
    size_t mask;
    std::unique_ptr<Entry[]> slots;
  };
  bool lookup(uint64_t hash, const Entry& key, uint32_t* site) const;  // any thread, no lock
  void insert(uint64_t hash, const Entry& entry);                      // caller holds mutex_

  const uint64_t id_;  // tells finders apart in the per-thread memo; never 0
  std::mutex mutex_;   // serializes inserts and growth
  std::atomic<Table*> table_{nullptr};
  // Every table made, the current one last: a reader may still probe a replaced one, so they
  // live as long as the finder (together less than the current one).
  std::vector<std::unique_ptr<Table>> tables_;
  size_t size_ = 0;
};

}  // namespace hprof::agent
