// SPDX-License-Identifier: Apache-2.0
// Semi-NCA (Georgiadis, Tarjan): semidominators as in Lengauer-Tarjan (path compression, simple
// linking), then each immediate dominator as the nearest common ancestor of the parent and the
// semidominator in the tree built so far. It needs no buckets, so besides the predecessors it
// keeps four 32-bit arrays over reachable objects (parent, semidominator, label, ancestor) plus
// the preorder. Vertex 0 is the super-root; arrays are indexed by depth-first number so the hot
// loops touch dense memory, and the depth-first search and path compression run on explicit
// stacks.
//
// Memory per reachable object at the peak (semidominators): 4 preorder + 16 for the four arrays
// + 4 for the start of each predecessor list (8 if there are 2^32 or more) + 4 per reference.
// The depth-first number of each node lives in the caller's idom array until the predecessors
// are built: that array is the output anyway, so the map costs nothing extra.
#include "dominators.h"

#include <algorithm>

namespace analysis::detail {

namespace {

class SemiNca {
 public:
  SemiNca(const Graph& g, const ProgressFn& progress) : g_(g), progress_(progress) {}

  void run(std::span<const uint32_t> roots, std::span<const Edge> weak_edges,
           std::span<const uint32_t> sizes, uint64_t size_unit, DominatorOutput out) {
    const uint32_t n = g_.node_count;
    dfnum_ = out.idom;
    if (progress_) progress_("depth-first search", 0, n);
    std::fill(dfnum_.begin(), dfnum_.end(), kNone);
    vertex_.reserve(static_cast<size_t>(n) + 1);  // no doubling copies of the big arrays
    parent_.reserve(static_cast<size_t>(n) + 1);
    vertex_.push_back(n);  // the super-root
    parent_.push_back(0);
    for (uint32_t r : roots)
      if (r < n && dfnum_[r] == kNone) search_from(r);
    strong_count_ = static_cast<uint32_t>(vertex_.size());
    // Objects reachable only through weak edges: each newly reached referent becomes a child of
    // the super-root; repeat while a weakly reached object opens another weak edge.
    for (bool grew = true; grew;) {
      grew = false;
      for (auto [from, to] : weak_edges) {
        if (from >= n || to >= n || dfnum_[from] == kNone || dfnum_[to] != kNone) continue;
        search_from(to);
        grew = true;
      }
    }
    std::vector<StackFrame>().swap(stack_);
    const uint32_t count = static_cast<uint32_t>(vertex_.size());
    *out.strongly_reachable = strong_count_ - 1;
    *out.weakly_reachable = count - strong_count_;

    if (progress_) progress_("predecessors", 0, 1);
    // At most one predecessor per reference, root and weak edge: 32-bit list starts if that fits.
    if (g_.edge_target.size() + roots.size() + weak_edges.size() < kNone) {
      std::vector<uint32_t> begin;
      build_predecessors(roots, weak_edges, begin);
      semidominators(begin);
    } else {
      std::vector<uint64_t> begin;
      build_predecessors(roots, weak_edges, begin);
      semidominators(begin);
    }
    std::vector<uint32_t>().swap(pred_);
    for (auto* v : {&label_, &ancestor_, &path_}) std::vector<uint32_t>().swap(*v);
    nearest_common_ancestors();  // parent_ becomes idom (in depth-first numbers)
    std::vector<uint32_t>().swap(semi_);

    if (progress_) progress_("retained sizes", 0, 1);
    std::span<uint32_t> idom = out.idom;
    std::span<uint64_t> retained = out.retained;
    std::fill(idom.begin(), idom.end(), kNone);
    std::fill(retained.begin(), retained.end(), 0);
    for (uint32_t d = 1; d < count; ++d) {
      const uint32_t v = vertex_[d];
      idom[v] = vertex_[parent_[d]];
      retained[v] = uint64_t{sizes[v]} * size_unit;
    }
    // Children have larger depth-first numbers than their dominators.
    for (uint32_t d = count - 1; d >= 1; --d)
      if (parent_[d] != 0) retained[vertex_[parent_[d]]] += retained[vertex_[d]];
  }

 private:
  struct StackFrame {
    uint32_t df;    // depth-first number of the vertex
    uint32_t next;  // its next outgoing edge to follow, counted from its first
  };

  void report(const char* phase, uint64_t done, uint64_t total) {
    if (progress_ && (done & 0xFFFF) == 0) progress_(phase, done, total);
  }

  std::span<const uint32_t> successors(uint32_t v) const {
    return g_.edge_target.subspan(g_.edge_begin[v], g_.edge_begin[v + 1] - g_.edge_begin[v]);
  }

  // Depth-first search from `start`, a child of the super-root, numbering vertices in preorder.
  void search_from(uint32_t start) {
    std::vector<StackFrame>& stack = stack_;
    auto enter = [&](uint32_t v, uint32_t parent_df) {
      uint32_t d = static_cast<uint32_t>(vertex_.size());
      dfnum_[v] = d;
      vertex_.push_back(v);
      parent_.push_back(parent_df);
      stack.push_back({d, 0});
      report("depth-first search", d, g_.node_count);
    };
    enter(start, 0);
    while (!stack.empty()) {
      StackFrame& top = stack.back();
      std::span<const uint32_t> out = successors(vertex_[top.df]);
      if (top.next == out.size()) {
        stack.pop_back();
        continue;
      }
      uint32_t w = out[top.next++];
      if (w < g_.node_count && dfnum_[w] == kNone) enter(w, top.df);
    }
  }

  // Every edge of the graph the dominators are computed on, in depth-first numbers. An edge from
  // a weakly reached object into a strongly reached one is dropped: it exists only because a
  // weak reference was followed.
  template <typename Visit>
  void for_each_edge(std::span<const uint32_t> roots, std::span<const Edge> weak_edges,
                     Visit&& visit) const {
    const uint32_t n = g_.node_count, count = static_cast<uint32_t>(vertex_.size());
    for (uint32_t r : roots)
      if (r < n && dfnum_[r] != kNone) visit(0u, dfnum_[r]);
    // Every weakly reached object that a reached object refers to weakly hangs off the
    // super-root, whichever of them happened to start a search.
    for (const Edge& e : weak_edges)
      if (e.from < n && e.to < n && dfnum_[e.from] != kNone && dfnum_[e.to] != kNone &&
          dfnum_[e.to] >= strong_count_)
        visit(0u, dfnum_[e.to]);
    for (uint32_t d = 1; d < count; ++d) {
      for (uint32_t w : successors(vertex_[d])) {
        if (w >= n) continue;
        uint32_t dw = dfnum_[w];
        if (dw == kNone || (d >= strong_count_ && dw < strong_count_)) continue;
        visit(d, dw);
      }
    }
  }

  // Predecessor lists in depth-first numbers (CSR); the list of w is filled back to front.
  template <typename Offset>
  void build_predecessors(std::span<const uint32_t> roots, std::span<const Edge> weak_edges,
                          std::vector<Offset>& begin) {
    const uint32_t count = static_cast<uint32_t>(vertex_.size());
    begin.assign(static_cast<size_t>(count) + 1, 0);
    for_each_edge(roots, weak_edges, [&](uint32_t, uint32_t to) { ++begin[to + 1]; });
    for (uint32_t d = 0; d < count; ++d) begin[d + 1] += begin[d];
    pred_.resize(begin[count]);
    // The end of each list is its cursor, counting down to its start; then every start sits one
    // place to the right of where it belongs.
    for_each_edge(roots, weak_edges,
                  [&](uint32_t from, uint32_t to) { pred_[--begin[to + 1]] = from; });
    for (uint32_t d = 0; d < count; ++d) begin[d] = begin[d + 1];
    begin[count] = static_cast<Offset>(pred_.size());
  }

  // eval(v) with path compression, iteratively: climb to the forest root collecting the path,
  // then compress it top-down. Returns a vertex of minimal semidominator on the path.
  uint32_t eval(uint32_t v) {
    if (ancestor_[v] == kNone) return v;
    path_.clear();
    uint32_t u = v;
    while (ancestor_[ancestor_[u]] != kNone) {
      path_.push_back(u);
      u = ancestor_[u];
    }
    for (size_t i = path_.size(); i-- > 0;) {
      uint32_t x = path_[i];
      uint32_t a = ancestor_[x];
      if (semi_[label_[a]] < semi_[label_[x]]) label_[x] = label_[a];
      ancestor_[x] = ancestor_[a];
    }
    return label_[v];
  }

  template <typename Offset>
  void semidominators(std::vector<Offset>& begin) {
    if (progress_) progress_("dominators", 0, 1);
    const uint32_t count = static_cast<uint32_t>(vertex_.size());
    semi_.resize(count);
    label_.resize(count);
    for (uint32_t d = 0; d < count; ++d) semi_[d] = label_[d] = d;
    ancestor_.assign(count, kNone);
    for (uint32_t w = count - 1; w >= 1; --w) {
      report("dominators", count - w, count);
      uint32_t s = semi_[w];
      for (Offset i = begin[w]; i < begin[w + 1]; ++i) {
        uint32_t v = pred_[i];
        // An unprocessed vertex (v < w) is its own label with semidominator v.
        uint32_t sv = v < w ? v : semi_[eval(v)];
        if (sv < s) s = sv;
      }
      semi_[w] = s;
      ancestor_[w] = parent_[w];  // link w to its parent
    }
    std::vector<Offset>().swap(begin);
  }

  // idom(w) is the nearest common ancestor of parent(w) and semi(w) in the dominator tree of the
  // vertices before w; parent_ is overwritten with idom in preorder (idom(w) < w).
  void nearest_common_ancestors() {
    const uint32_t count = static_cast<uint32_t>(vertex_.size());
    for (uint32_t w = 1; w < count; ++w) {
      uint32_t x = parent_[w];
      while (x > semi_[w]) x = parent_[x];
      parent_[w] = x;
    }
    parent_[0] = 0;
  }

  const Graph& g_;
  const ProgressFn& progress_;
  std::span<uint32_t> dfnum_;  // node -> depth-first number, in the caller's idom array
  std::vector<uint32_t> vertex_, parent_, semi_, label_, ancestor_, pred_, path_;
  std::vector<StackFrame> stack_;
  uint32_t strong_count_ = 0;
};

}  // namespace

void compute_dominators(const Graph& graph, std::span<const uint32_t> roots,
                        std::span<const Edge> weak_edges, std::span<const uint32_t> sizes,
                        uint64_t size_unit, const ProgressFn& progress, DominatorOutput out) {
  SemiNca(graph, progress).run(roots, weak_edges, sizes, size_unit, out);
}

DominatorResult compute_dominators(const Graph& graph, std::span<const uint32_t> roots,
                                   std::span<const Edge> weak_edges,
                                   std::span<const uint32_t> sizes, uint64_t size_unit,
                                   const ProgressFn& progress) {
  DominatorResult result;
  result.idom.resize(graph.node_count);
  result.retained.resize(graph.node_count);
  compute_dominators(
      graph, roots, weak_edges, sizes, size_unit, progress,
      {result.idom, result.retained, &result.strongly_reachable, &result.weakly_reachable});
  return result;
}

}  // namespace analysis::detail
