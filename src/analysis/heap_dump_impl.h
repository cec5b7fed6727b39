// SPDX-License-Identifier: Apache-2.0
// Internal: what a HeapDump holds, and the helpers the query files share.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "analysis.h"
#include "heap_index.h"

namespace analysis {

struct HeapDump::Impl {
  std::string path;
  bool gzip = false;
  bool index_reused = false;
  uint64_t file_bytes = 0;
  std::unique_ptr<detail::HeapIndex> index;

  // The dump itself, mapped on first use (a reopened dump needs it only for record details).
  std::span<const uint8_t> dump() const;
  mutable detail::MappedFile dump_file;
  mutable std::once_flag dump_once;
  // The caches below are built on first use by whichever query needs them; queries may run on
  // several threads at once (jvmprof serve), so building and checking them holds this lock.
  mutable std::recursive_mutex lazy_mu;

  // The dominator tree's children in CSR form (node_count is the super-root), built once; each
  // node's children are sorted by retained size, biggest first (ties in node order).
  using Tree = detail::DominatorChildren;  // each node's children sorted by retained size
  const Tree& tree() const;
  DominatedPage children_page(uint32_t node, uint64_t offset, uint64_t limit) const;
  mutable std::unique_ptr<Tree> tree_;
  mutable std::unique_ptr<std::vector<ClassStats>> histogram_;  // by class index

  const detail::HeapIndex& ix() const { return *index; }
  uint64_t id_of(uint32_t node) const;
  ObjectInfo info(uint32_t node) const;
  // "class NAME" for a class object; else its class's name.
  std::string class_name(uint32_t node) const;
  // The class whose class object is `node` (kNone if it is none's); a sorted table built once.
  uint32_t class_of_object(uint32_t node) const;
  mutable std::unique_ptr<std::vector<std::pair<uint32_t, uint32_t>>> class_objects_;
  uint32_t find_node(uint64_t id) const;  // kNone if absent; O(1): the id table
  const std::vector<ClassStats>& class_stats() const;
  // Retained set of `node` by class, biggest first; `objects` gets its size.
  std::vector<ClassStats> retained_by_class(uint32_t node, size_t limit, uint64_t* objects) const;
  // Shortest paths from GC roots to `node` (see HeapDump::paths_to).
  std::vector<RootPath> paths_to(uint32_t node, size_t max_paths) const;
  // How `from` refers to `to`: "field", "[3]", "static NAME", "<class>", ...
  std::string describe_reference(uint32_t from, uint32_t to) const;
  uint64_t reachable_bytes() const;
  // Text of a UTF8 record (field and static names); the table is read from the dump once.
  std::string utf8_name(uint64_t id) const;
  mutable std::unique_ptr<std::vector<std::pair<uint64_t, uint64_t>>> utf8_;  // id, offset

  // Who refers to each node: strong and weak edges reversed (CSR), built on first use.
  struct Referrers {
    std::vector<uint64_t> begin;  // node_count + 1 entries
    std::vector<uint32_t> from;
    std::vector<bool> weak;
  };
  const Referrers& referrer_index() const;
  mutable std::unique_ptr<Referrers> referrers_;
  bool text_dump = false;  // converted from a text (format=a) HEAP DUMP: see text_dump.cpp
};

}  // namespace analysis
