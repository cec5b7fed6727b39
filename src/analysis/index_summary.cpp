// SPDX-License-Identifier: Apache-2.0
// The index's summary (counts and per-class totals), computed by walking every object and the
// dominator tree once when the index is built; saved with it so a reopened dump does not walk.
#include <algorithm>

#include "heap_index.h"

namespace analysis::detail {

namespace {

void count_objects(const HeapIndex& ix, IndexSummary& s) {
  const auto size8 = ix.node_size8();
  const auto idom = ix.idom();
  const auto node_class = ix.node_class();
  for (uint32_t v = 0; v < ix.node_count; ++v) {
    const uint64_t size = uint64_t{size8[v]} * 8;
    s.shallow_bytes += size;
    if (idom[v] == kNone) {
      ++s.unreachable_objects;
      s.unreachable_bytes += size;
    } else {
      ++s.reachable_objects;
      s.reachable_bytes += size;
    }
    IndexSummary::ClassTotals& k = s.per_class[node_class[v]];
    ++k.instances;
    k.shallow_bytes += size;
    switch (ix.classes[node_class[v]].kind) {
      case ClassKind::kObjectArray:
        ++s.object_arrays;
        break;
      case ClassKind::kPrimitiveArray:
        ++s.primitive_arrays;
        break;
      default:
        break;
    }
  }
  for (const ClassInfo& k : ix.classes)
    if (k.object != kNone) ++s.classes;
  s.instances = ix.node_count - s.object_arrays - s.primitive_arrays - s.classes;
  std::vector<uint32_t> root_nodes;
  for (const RootEntry& r : ix.roots()) root_nodes.push_back(r.node);
  std::sort(root_nodes.begin(), root_nodes.end());
  s.gc_roots =
      static_cast<uint64_t>(std::unique(root_nodes.begin(), root_nodes.end()) - root_nodes.begin());
}

// Retained bytes per class: a depth-first walk of the dominator tree counting, per class, the
// instances on the current branch; an instance with none of its class above it is counted. The
// children need no order here (unlike the browser's tree, sorted by retained size).
void retained_by_class(const HeapIndex& ix, IndexSummary& s) {
  const uint32_t n = ix.node_count;
  const auto node_class = ix.node_class();
  const auto retained = ix.retained();
  const auto [begin, child] = dominator_children(ix);
  std::vector<uint32_t> active(ix.classes.size(), 0);
  struct Frame {
    uint32_t node;
    uint32_t next;
  };
  std::vector<Frame> stack;
  stack.push_back({n, begin[n]});
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.next == begin[f.node + 1]) {
      if (f.node != n) --active[node_class[f.node]];
      stack.pop_back();
      continue;
    }
    const uint32_t c = child[f.next++];
    const uint32_t k = node_class[c];
    if (active[k]++ == 0) s.per_class[k].retained_bytes += retained[c];
    stack.push_back({c, begin[c]});
  }
}

}  // namespace

DominatorChildren dominator_children(const HeapIndex& ix) {
  const uint32_t n = ix.node_count;
  const auto idom = ix.idom();
  DominatorChildren t;
  t.begin.assign(static_cast<size_t>(n) + 3, 0);
  for (uint32_t v = 0; v < n; ++v)
    if (idom[v] != kNone) ++t.begin[idom[v] + 2];
  for (size_t i = 2; i < t.begin.size(); ++i) t.begin[i] += t.begin[i - 1];
  t.child.resize(t.begin.back());
  for (uint32_t v = 0; v < n; ++v)
    if (idom[v] != kNone) t.child[t.begin[idom[v] + 1]++] = v;
  t.begin.pop_back();
  return t;
}

IndexSummary summarize_index(const HeapIndex& index) {
  IndexSummary s;
  s.per_class.resize(index.classes.size());
  count_objects(index, s);
  retained_by_class(index, s);
  return s;
}

}  // namespace analysis::detail
