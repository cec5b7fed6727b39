// Iterative Lengauer-Tarjan over depth-first numbers. Vertex 0 is the super-root; the arrays are
// indexed by depth-first number so that the hot loops touch dense memory, and every recursion of
// the textbook algorithm (DFS, path compression) runs on an explicit stack.
#include "dominators.h"

#include <algorithm>

namespace analysis::detail {

namespace {

class LengauerTarjan {
 public:
  struct StackFrame {
    uint32_t df;    // depth-first number of the vertex
    uint64_t next;  // its next outgoing edge to follow
  };

  LengauerTarjan(const Graph& g, const ProgressFn& progress) : g_(g), progress_(progress) {}

  DominatorResult run(std::span<const uint32_t> roots, std::span<const Edge> weak_edges,
                      std::span<const uint32_t> sizes, uint64_t size_unit) {
    const uint32_t n = g_.node_count;
    if (progress_) progress_("depth-first search", 0, n);
    dfnum_.assign(static_cast<size_t>(n) + 1, kNone);
    vertex_.reserve(static_cast<size_t>(n) + 1);  // no doubling copies of the big arrays
    parent_.reserve(static_cast<size_t>(n) + 1);
    // Super-root first, then a depth-first search from the strong roots.
    dfnum_[n] = 0;
    vertex_.push_back(n);
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
    weak_edges_ = weak_edges;
    std::vector<StackFrame>().swap(stack_);
    if (progress_) progress_("predecessors", 0, 1);
    build_predecessors(roots);
    std::vector<uint32_t>().swap(dfnum_);  // from here on, depth-first numbers only
    if (progress_) progress_("dominators", 0, 1);
    compute_idom();
    // Peak memory is during compute_idom; what it needed goes before the results are made.
    for (auto* v : {&pred_, &semi_, &label_, &ancestor_, &parent_, &path_})
      std::vector<uint32_t>().swap(*v);
    std::vector<uint64_t>().swap(pred_begin_);
    if (progress_) progress_("retained sizes", 0, 1);

    DominatorResult result;
    const uint32_t count = static_cast<uint32_t>(vertex_.size());
    result.strongly_reachable = strong_count_ - 1;
    result.weakly_reachable = count - strong_count_;
    result.idom.assign(n, kNone);
    result.retained.assign(n, 0);
    for (uint32_t d = 1; d < count; ++d) {
      const uint32_t v = vertex_[d];
      result.idom[v] = vertex_[idom_[d]];
      result.retained[v] = uint64_t{sizes[v]} * size_unit;
    }
    // Children have larger depth-first numbers than their dominators.
    for (uint32_t d = count - 1; d >= 1; --d)
      if (idom_[d] != 0) result.retained[vertex_[idom_[d]]] += result.retained[vertex_[d]];
    return result;
  }

 private:
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
      stack.push_back({d, g_.edge_begin[v]});
      report("depth-first search", d, g_.node_count);
    };
    enter(start, 0);
    while (!stack.empty()) {
      StackFrame& top = stack.back();
      uint32_t v = vertex_[top.df];
      if (top.next == g_.edge_begin[v + 1]) {
        stack.pop_back();
        continue;
      }
      uint32_t w = g_.edge_target[top.next++];
      if (w < g_.node_count && dfnum_[w] == kNone) enter(w, top.df);
    }
  }

  // Predecessors in depth-first numbers. An edge from a weakly reached object into a strongly
  // reached one is dropped: it exists only because a weak reference was followed.
  void build_predecessors(std::span<const uint32_t> roots) {
    const uint32_t count = static_cast<uint32_t>(vertex_.size());
    pred_begin_.assign(static_cast<size_t>(count) + 1, 0);
    auto for_each_edge = [&](auto&& visit) {
      for (uint32_t r : roots)
        if (r < g_.node_count && dfnum_[r] != kNone) visit(0u, dfnum_[r]);
      // Every weakly reached object that a reached object refers to weakly hangs off the
      // super-root, whichever of them happened to start a search.
      for (const Edge& e : weak_edges_)
        if (e.from < g_.node_count && e.to < g_.node_count && dfnum_[e.from] != kNone &&
            dfnum_[e.to] != kNone && dfnum_[e.to] >= strong_count_)
          visit(0u, dfnum_[e.to]);
      for (uint32_t d = 1; d < count; ++d) {
        for (uint32_t w : successors(vertex_[d])) {
          if (w >= g_.node_count) continue;
          uint32_t dw = dfnum_[w];
          if (dw == kNone || (d >= strong_count_ && dw < strong_count_)) continue;
          visit(d, dw);
        }
      }
    };
    for_each_edge([&](uint32_t, uint32_t to) { ++pred_begin_[to + 1]; });
    for (uint32_t d = 0; d < count; ++d) pred_begin_[d + 1] += pred_begin_[d];
    pred_.resize(pred_begin_[count]);
    std::vector<uint64_t> fill(pred_begin_.begin(), pred_begin_.end() - 1);
    for_each_edge([&](uint32_t from, uint32_t to) { pred_[fill[to]++] = from; });
  }

  // eval(v) with path compression, iteratively: climb to the forest root collecting the path,
  // then compress it top-down.
  uint32_t eval(uint32_t v) {
    if (ancestor_[v] == kNone) return v;
    path_.clear();
    uint32_t u = v;
    while (ancestor_[ancestor_[u]] != kNone) {
      path_.push_back(u);
      u = ancestor_[u];
    }
    // `u` is the highest vertex whose ancestor is a forest root; process from the top down.
    for (size_t i = path_.size(); i-- > 0;) {
      uint32_t x = path_[i];
      uint32_t a = ancestor_[x];
      if (semi_[label_[a]] < semi_[label_[x]]) label_[x] = label_[a];
      ancestor_[x] = ancestor_[a];
    }
    return label_[v];
  }

  void compute_idom() {
    const uint32_t count = static_cast<uint32_t>(vertex_.size());
    semi_.resize(count);
    label_.resize(count);
    for (uint32_t d = 0; d < count; ++d) semi_[d] = label_[d] = d;
    ancestor_.assign(count, kNone);
    idom_.assign(count, 0);
    std::vector<uint32_t> bucket_head(count, kNone), bucket_next(count, kNone);
    for (uint32_t w = count - 1; w >= 1; --w) {
      report("dominators", count - w, count);
      for (uint64_t i = pred_begin_[w]; i < pred_begin_[w + 1]; ++i) {
        uint32_t u = eval(pred_[i]);
        if (semi_[u] < semi_[w]) semi_[w] = semi_[u];
      }
      // Add w to the bucket of its semidominator, then link w to its parent.
      uint32_t s = semi_[w];
      bucket_next[w] = bucket_head[s];
      bucket_head[s] = w;
      uint32_t p = parent_[w];
      ancestor_[w] = p;
      for (uint32_t v = bucket_head[p]; v != kNone; v = bucket_next[v]) {
        uint32_t u = eval(v);
        idom_[v] = semi_[u] < semi_[v] ? u : p;
      }
      bucket_head[p] = kNone;
    }
    for (uint32_t w = 1; w < count; ++w)
      if (idom_[w] != semi_[w]) idom_[w] = idom_[idom_[w]];
    idom_[0] = 0;
  }

  const Graph& g_;
  const ProgressFn& progress_;
  std::vector<uint32_t> dfnum_, vertex_, parent_, semi_, label_, ancestor_, idom_, pred_, path_;
  std::vector<uint64_t> pred_begin_;
  std::vector<StackFrame> stack_;
  uint32_t strong_count_ = 0;
  std::span<const Edge> weak_edges_;
};

}  // namespace

DominatorResult compute_dominators(const Graph& graph, std::span<const uint32_t> roots,
                                   std::span<const Edge> weak_edges,
                                   std::span<const uint32_t> sizes, uint64_t size_unit,
                                   const ProgressFn& progress) {
  LengauerTarjan lt(graph, progress);
  return lt.run(roots, weak_edges, sizes, size_unit);
}

}  // namespace analysis::detail
