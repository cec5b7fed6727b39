// SPDX-License-Identifier: Apache-2.0
// Dominator tree and retained sizes of a heap graph (internal to the analysis library).
//
// The graph is in CSR form over nodes 0..n-1; a virtual super-root (node n) has an edge to every
// GC root. Weak edges (Reference.referent) never retain: objects reachable only through them are
// attached directly to the super-root (they retain only what they alone hold), and the paths
// they open into strongly reachable objects are ignored, so strong dominators are unaffected.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace analysis::detail {

inline constexpr uint32_t kNone = 0xFFFFFFFFu;

// An edge between two nodes (used for the weak edges kept outside the CSR).
struct Edge {
  uint32_t from;
  uint32_t to;
};

struct Graph {
  uint32_t node_count = 0;
  std::span<const uint64_t> edge_begin;  // node_count + 1 entries
  std::span<const uint32_t> edge_target;
};

struct DominatorResult {
  // idom[v]: immediate dominator of v; node_count for the super-root; kNone if unreachable.
  std::vector<uint32_t> idom;
  // retained[v]: size of v plus everything v dominates (0 if unreachable).
  std::vector<uint64_t> retained;
  uint32_t strongly_reachable = 0;  // objects, not counting the super-root
  uint32_t weakly_reachable = 0;    // reachable only through a weak edge
};

// phase callback: (done, total) for progress; may be empty.
using ProgressFn = std::function<void(const char* phase, uint64_t done, uint64_t total)>;

// Where compute_dominators writes (node_count entries each; may be a mapped file).
struct DominatorOutput {
  std::span<uint32_t> idom;
  std::span<uint64_t> retained;
  uint32_t* strongly_reachable;
  uint32_t* weakly_reachable;
};

// Iterative semi-NCA (Lengauer-Tarjan's semidominators with path compression, then nearest
// common ancestors). `roots` may hold duplicates; nodes >= node_count are ignored. The size of
// node v is sizes[v] * size_unit.
void compute_dominators(const Graph& graph, std::span<const uint32_t> roots,
                        std::span<const Edge> weak_edges, std::span<const uint32_t> sizes,
                        uint64_t size_unit, const ProgressFn& progress, DominatorOutput out);
DominatorResult compute_dominators(const Graph& graph, std::span<const uint32_t> roots,
                                   std::span<const Edge> weak_edges,
                                   std::span<const uint32_t> sizes, uint64_t size_unit,
                                   const ProgressFn& progress);

}  // namespace analysis::detail
