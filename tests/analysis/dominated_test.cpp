// SPDX-License-Identifier: Apache-2.0
// Going down the dominator tree (HeapDump::dominated, dominator_roots) on a synthetic dump whose
// tree is known, and the indexing progress callback (OpenOptions::on_progress).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "analysis.h"
#include "synthetic_dump.h"
#include "test_files.h"

using analysis::HeapDump;
using analysis::ObjectInfo;
using analysis_test::SyntheticDump;
using hprof::BasicType;
using hprof::Value;

namespace {

std::string temp_path(const std::string& name) {
  return analysis_test::temp_path("dominated", name);
}

// R (a JNI global root) -> X, Y; X -> P, Q; Y -> Q, Z; P -> int[100] I. Q is reached through X
// and through Y, so R dominates it: R's children are X, Y and Q; X's only child is P.
struct KnownTree {
  SyntheticDump dump{8, hprof::Version::k1_0_2};
  uint64_t r, x, y, p, q, z, i;

  KnownTree() {
    uint64_t object = dump.add_class("java/lang/Object", 0, {});
    uint64_t node =
        dump.add_class("Node", object, {{"a", BasicType::kObject}, {"b", BasicType::kObject}});
    auto add = [&](uint64_t a, uint64_t b) {
      return dump.add_instance(node, {Value::of_object(a), Value::of_object(b)});
    };
    i = dump.add_int_array(100);
    z = dump.add_int_array(10);
    p = add(i, 0);
    q = add(0, 0);
    x = add(p, q);
    y = add(q, z);
    r = add(x, y);
    dump.add_root(hprof::SubTag::kRootJniGlobal, r);
  }
};

std::vector<uint64_t> ids(const std::vector<ObjectInfo>& objects) {
  std::vector<uint64_t> out;
  for (const auto& o : objects) out.push_back(o.id);
  return out;
}

TEST(DominatorTreeDown, ChildrenOfKnownObjectsBiggestFirst) {
  KnownTree t;
  const std::string path = temp_path("known.hprof");
  t.dump.write(path);
  auto d = HeapDump::open(path, {.use_index_file = false});

  auto under_r = d->dominated(t.r, 0, 100);
  EXPECT_EQ(under_r.total, 3u);
  const std::vector<uint64_t> got = ids(under_r.children);
  EXPECT_EQ(std::set<uint64_t>(got.begin(), got.end()), (std::set<uint64_t>{t.x, t.y, t.q}));
  // X retains P and its int[100]: the biggest; Y (with int[10]) next; Q alone last.
  EXPECT_EQ(got, (std::vector<uint64_t>{t.x, t.y, t.q}));
  EXPECT_EQ(ids(d->dominated(t.x, 0, 100).children), std::vector<uint64_t>{t.p});
  EXPECT_EQ(ids(d->dominated(t.y, 0, 100).children), std::vector<uint64_t>{t.z});
  EXPECT_EQ(ids(d->dominated(t.p, 0, 100).children), std::vector<uint64_t>{t.i});
  EXPECT_EQ(d->dominated(t.q, 0, 100).total, 0u);
  // R is at the top of the tree, below the GC roots as a whole.
  auto top = d->dominator_roots(0, 1000);
  const std::vector<uint64_t> top_ids = ids(top.children);
  EXPECT_NE(std::find(top_ids.begin(), top_ids.end(), t.r), top_ids.end());
  EXPECT_EQ(top.total, top.children.size());

  // Paging: slices of the same order; past the end, empty with the same total.
  auto second = d->dominated(t.r, 1, 1);
  EXPECT_EQ(second.total, 3u);
  EXPECT_EQ(ids(second.children), std::vector<uint64_t>{t.y});
  EXPECT_EQ(ids(d->dominated(t.r, 1, 5).children), (std::vector<uint64_t>{t.y, t.q}));
  auto past = d->dominated(t.r, 7, 5);
  EXPECT_EQ(past.total, 3u);
  EXPECT_TRUE(past.children.empty());
  EXPECT_THROW(d->dominated(t.dump.id(99999), 0, 10), analysis::Error);
}

// The whole tree, walked down from its top: every reachable object once, under its immediate
// dominator; each object's retained size is its shallow size plus its children's.
TEST(DominatorTreeDown, WholeTreeIsConsistent) {
  KnownTree t;
  const std::string path = temp_path("whole.hprof");
  t.dump.write(path);
  auto d = HeapDump::open(path, {.use_index_file = false});
  std::set<uint64_t> seen;
  std::function<void(const ObjectInfo*, const std::vector<ObjectInfo>&)> walk =
      [&](const ObjectInfo* parent, const std::vector<ObjectInfo>& children) {
        uint64_t sum = 0, previous = ~uint64_t{0};
        for (const auto& c : children) {
          EXPECT_TRUE(seen.insert(c.id).second) << "object listed twice: " << c.id;
          EXPECT_LE(c.retained_bytes, previous) << "children biggest first";
          previous = c.retained_bytes;
          sum += c.retained_bytes;
          auto idom = d->immediate_dominator(c.id);
          if (parent == nullptr) {
            EXPECT_FALSE(idom.has_value()) << c.class_name << " at the top has a dominator";
          } else {
            ASSERT_TRUE(idom.has_value());
            EXPECT_EQ(idom->id, parent->id);
          }
          auto page = d->dominated(c.id, 0, 1000);
          ASSERT_EQ(page.total, page.children.size());
          walk(&c, page.children);
        }
        if (parent) {
          EXPECT_EQ(parent->shallow_bytes + sum, parent->retained_bytes) << parent->id;
        }
      };
  auto top = d->dominator_roots(0, 1000);
  ASSERT_EQ(top.total, top.children.size());
  walk(nullptr, top.children);
  EXPECT_EQ(seen.size(), d->summary().reachable_objects);
  for (uint64_t id : {t.r, t.x, t.y, t.p, t.q, t.z, t.i}) EXPECT_TRUE(seen.count(id)) << id;
}

// The progress callback: each phase's percentages never go down and end at 100; a reused index
// reports nothing (there is no indexing).
TEST(IndexingProgress, CallbackSeesPhasesEndingAt100) {
  KnownTree t;
  const std::string path = temp_path("progress.hprof");
  t.dump.write(path);
  std::vector<std::pair<std::string, unsigned>> seen;
  analysis::OpenOptions options;
  options.on_progress = [&](const std::string& phase, unsigned percent) {
    seen.emplace_back(phase, percent);
  };
  HeapDump::open(path, options);
  ASSERT_FALSE(seen.empty());
  std::set<std::string> phases;
  for (size_t k = 0; k < seen.size(); ++k) {
    phases.insert(seen[k].first);
    EXPECT_LE(seen[k].second, 100u);
    if (k + 1 < seen.size() && seen[k + 1].first == seen[k].first) {
      EXPECT_LE(seen[k].second, seen[k + 1].second) << seen[k].first;
    } else {
      EXPECT_EQ(seen[k].second, 100u) << seen[k].first << " ends below 100";
    }
  }
  EXPECT_TRUE(phases.count("reading records"));
  EXPECT_TRUE(phases.count("dominators"));
  seen.clear();
  HeapDump::open(path, options);  // the index saved beside it is reused
  EXPECT_TRUE(seen.empty());
}

}  // namespace
