// SPDX-License-Identifier: Apache-2.0
// Dominators and retained sizes on hand-built graphs with known answers, and against a
// brute-force checker (remove each node, recompute reachability) on thousands of random graphs.
#include "dominators.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

using namespace analysis::detail;

namespace {

struct TestGraph {
  uint32_t n;
  std::vector<std::vector<uint32_t>> out;
  std::vector<uint32_t> roots;
  std::vector<Edge> weak;
  std::vector<uint32_t> sizes;

  explicit TestGraph(uint32_t nodes) : n(nodes), out(nodes), sizes(nodes, 1) {}
  void edge(uint32_t a, uint32_t b) { out[a].push_back(b); }

  DominatorResult solve() const {
    std::vector<uint64_t> begin{0};
    std::vector<uint32_t> target;
    for (const auto& e : out) {
      target.insert(target.end(), e.begin(), e.end());
      begin.push_back(target.size());
    }
    Graph g{n, begin, target};
    return compute_dominators(g, roots, weak, sizes, 1, {});
  }
};

// ---- brute force ----

// Reachability in the graph the analyzer defines: strong edges from the roots; then objects
// reached only through weak edges hang off the super-root, without their edges into strongly
// reached objects. `removed` is left out.
std::vector<bool> reach(const TestGraph& g, uint32_t removed, const std::vector<bool>& strong,
                        const std::vector<bool>& weak_only) {
  std::vector<bool> seen(g.n, false);
  std::vector<uint32_t> stack;
  auto push = [&](uint32_t v) {
    if (v != removed && !seen[v]) seen[v] = true, stack.push_back(v);
  };
  for (uint32_t r : g.roots) push(r);
  for (const Edge& e : g.weak)
    if ((strong[e.from] || weak_only[e.from]) && weak_only[e.to]) push(e.to);
  while (!stack.empty()) {
    uint32_t v = stack.back();
    stack.pop_back();
    for (uint32_t w : g.out[v])
      if (!(weak_only[v] && strong[w])) push(w);
  }
  return seen;
}

struct Expected {
  std::vector<uint32_t> idom;  // kNone unreachable, n super-root
  std::vector<uint64_t> retained;
};

Expected brute_force(const TestGraph& g) {
  const uint32_t n = g.n;
  // Strongly reachable; then everything reachable when weak edges count too.
  std::vector<bool> none(n, false);
  std::vector<bool> strong(n, false);
  {
    std::vector<uint32_t> stack;
    for (uint32_t r : g.roots)
      if (!strong[r]) strong[r] = true, stack.push_back(r);
    while (!stack.empty()) {
      uint32_t v = stack.back();
      stack.pop_back();
      for (uint32_t w : g.out[v])
        if (!strong[w]) strong[w] = true, stack.push_back(w);
    }
  }
  std::vector<bool> any = strong;
  for (bool grew = true; grew;) {
    grew = false;
    std::vector<uint32_t> stack;
    for (const Edge& e : g.weak)
      if (any[e.from] && !any[e.to]) any[e.to] = true, stack.push_back(e.to), grew = true;
    while (!stack.empty()) {
      uint32_t v = stack.back();
      stack.pop_back();
      for (uint32_t w : g.out[v])
        if (!any[w]) any[w] = true, stack.push_back(w);
    }
  }
  std::vector<bool> weak_only(n);
  for (uint32_t v = 0; v < n; ++v) weak_only[v] = any[v] && !strong[v];
  // dominates[d][v]: v is unreachable once d is removed.
  std::vector<std::vector<bool>> dominates(n, std::vector<bool>(n, false));
  for (uint32_t d = 0; d < n; ++d) {
    if (!any[d]) continue;
    std::vector<bool> r = reach(g, d, strong, weak_only);
    for (uint32_t v = 0; v < n; ++v) dominates[d][v] = any[v] && (v == d || !r[v]);
  }
  Expected e;
  e.idom.assign(n, kNone);
  e.retained.assign(n, 0);
  for (uint32_t v = 0; v < n; ++v) {
    if (!any[v]) continue;
    for (uint32_t d = 0; d < n; ++d)
      if (dominates[d][v]) e.retained[d] += g.sizes[v];
    // The immediate dominator: the strict dominator that all other strict dominators dominate.
    e.idom[v] = n;
    for (uint32_t d = 0; d < n; ++d) {
      if (d == v || !dominates[d][v]) continue;
      bool lowest = true;
      for (uint32_t o = 0; o < n && lowest; ++o)
        if (o != v && o != d && dominates[o][v] && !dominates[o][d]) lowest = false;
      if (lowest) e.idom[v] = d;
    }
  }
  return e;
}

// ---- hand-built graphs ----

TEST(Dominators, ChainAndBranches) {
  // 0 -> 1 -> 2 -> 3, 1 -> 4
  TestGraph g(5);
  g.edge(0, 1), g.edge(1, 2), g.edge(2, 3), g.edge(1, 4);
  g.roots = {0};
  g.sizes = {1, 2, 4, 8, 16};
  auto r = g.solve();
  EXPECT_EQ(r.idom, (std::vector<uint32_t>{5, 0, 1, 2, 1}));
  EXPECT_EQ(r.retained, (std::vector<uint64_t>{31, 30, 12, 8, 16}));
  EXPECT_EQ(r.strongly_reachable, 5u);
}

TEST(Dominators, DiamondIsDominatedByItsTop) {
  // 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3, 3 -> 4
  TestGraph g(5);
  g.edge(0, 1), g.edge(0, 2), g.edge(1, 3), g.edge(2, 3), g.edge(3, 4);
  g.roots = {0};
  auto r = g.solve();
  EXPECT_EQ(r.idom, (std::vector<uint32_t>{5, 0, 0, 0, 3}));
  EXPECT_EQ(r.retained, (std::vector<uint64_t>{5, 1, 1, 2, 1}));
}

TEST(Dominators, CycleIsRetainedByItsEntry) {
  // root 0 -> 1 -> 2 -> 3 -> 1
  TestGraph g(4);
  g.edge(0, 1), g.edge(1, 2), g.edge(2, 3), g.edge(3, 1);
  g.roots = {0};
  auto r = g.solve();
  EXPECT_EQ(r.idom, (std::vector<uint32_t>{4, 0, 1, 2}));
  EXPECT_EQ(r.retained[1], 3u);
}

TEST(Dominators, TwoRootsShareNothing) {
  // roots 0 and 1 both reach 2; only 0 reaches 3
  TestGraph g(4);
  g.edge(0, 2), g.edge(1, 2), g.edge(0, 3);
  g.roots = {0, 1, 1};
  auto r = g.solve();
  EXPECT_EQ(r.idom, (std::vector<uint32_t>{4, 4, 4, 0}));
  EXPECT_EQ(r.retained[0], 2u);
}

TEST(Dominators, UnreachableObjectsAreLeftOut) {
  TestGraph g(3);
  g.edge(1, 2);
  g.roots = {0};
  auto r = g.solve();
  EXPECT_EQ(r.idom, (std::vector<uint32_t>{3, kNone, kNone}));
  EXPECT_EQ(r.retained, (std::vector<uint64_t>{1, 0, 0}));
  EXPECT_EQ(r.strongly_reachable, 1u);
}

TEST(Dominators, TarjansExampleGraph) {
  // The flow graph of Lengauer and Tarjan's paper (R=0, A..L = 1..12), a root's only child.
  enum { R, A, B, C, D, E, F, G, H, I, J, K, L, N };
  TestGraph g(N);
  auto e = [&](int a, int b) { g.edge(static_cast<uint32_t>(a), static_cast<uint32_t>(b)); };
  e(R, A), e(R, B), e(R, C), e(A, D), e(B, A), e(B, D), e(B, E), e(C, F), e(C, G), e(D, L), e(E, H),
      e(F, I), e(G, I), e(G, J), e(H, E), e(H, K), e(I, K), e(J, I), e(K, I), e(K, R), e(L, H);
  g.roots = {R};
  auto r = g.solve();
  std::vector<uint32_t> expected = {N, R, R, R, R, R, C, C, R, R, G, R, D};
  EXPECT_EQ(r.idom, expected);
}

TEST(Dominators, WeakReferentsDoNotRetain) {
  // 0 -> 1 (a Reference) -weak-> 2 -> 3; 0 -> 4 -weak-> 4's referent 5, also held by 0.
  TestGraph g(6);
  g.edge(0, 1), g.edge(2, 3), g.edge(0, 4), g.edge(0, 5);
  g.weak = {{1, 2}, {4, 5}};
  g.roots = {0};
  auto r = g.solve();
  EXPECT_EQ(r.idom[2], 6u) << "weakly reachable only: hangs off the super-root";
  EXPECT_EQ(r.idom[3], 2u);
  EXPECT_EQ(r.idom[5], 0u) << "strongly held referent keeps its strong dominator";
  EXPECT_EQ(r.retained[1], 1u);
  EXPECT_EQ(r.retained[0], 4u);
  EXPECT_EQ(r.weakly_reachable, 2u);
}

TEST(Dominators, WeaklyReachedObjectsDoNotChangeStrongDominators) {
  // 0 -> 1 -> 2; 0 -> 3 (a Reference) -weak-> 4 -> 2: 1 still dominates 2.
  TestGraph g(5);
  g.edge(0, 1), g.edge(1, 2), g.edge(0, 3), g.edge(4, 2);
  g.weak = {{3, 4}};
  g.roots = {0};
  auto r = g.solve();
  EXPECT_EQ(r.idom[2], 1u);
  EXPECT_EQ(r.idom[4], 5u);
}

TEST(Dominators, LongChainNeedsNoRecursion) {
  const uint32_t n = 1'000'000;
  TestGraph g(n);
  for (uint32_t v = 0; v + 1 < n; ++v) g.edge(v, v + 1);
  g.edge(n - 1, 0);
  g.roots = {0};
  auto r = g.solve();
  EXPECT_EQ(r.retained[0], n);
  EXPECT_EQ(r.idom[n - 1], n - 2);
  EXPECT_EQ(r.retained[n / 2], n - n / 2);
}

// ---- random graphs ----

TEST(Dominators, AgreeWithBruteForceOnRandomGraphs) {
  std::mt19937 rng(20261123);
  int checked = 0;
  for (int round = 0; round < 3000; ++round) {
    const uint32_t n = 1 + rng() % 24;
    TestGraph g(n);
    const double density = (rng() % 100) / 100.0 * 3.0 / n;
    for (uint32_t a = 0; a < n; ++a)
      for (uint32_t b = 0; b < n; ++b)
        if (std::uniform_real_distribution<>(0, 1)(rng) < density) g.edge(a, b);
    const uint32_t roots = rng() % 3 + (rng() % 5 == 0 ? 0 : 1);
    for (uint32_t i = 0; i < roots; ++i) g.roots.push_back(rng() % n);
    const uint32_t weak = rng() % 3;
    for (uint32_t i = 0; i < weak; ++i)
      g.weak.push_back({uint32_t(rng() % n), uint32_t(rng() % n)});
    for (auto& s : g.sizes) s = 1 + rng() % 100;
    auto r = g.solve();
    Expected e = brute_force(g);
    ASSERT_EQ(r.idom, e.idom) << "round " << round;
    ASSERT_EQ(r.retained, e.retained) << "round " << round;
    ++checked;
  }
  EXPECT_EQ(checked, 3000);
}

}  // namespace
