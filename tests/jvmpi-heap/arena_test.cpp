// SPDX-License-Identifier: Apache-2.0
// ARENA_NEW once, arena 1, before the first OBJECT_ALLOC (every OBJECT_ALLOC in arena 1);
// OBJECT_MOVE and ARENA_DELETE can be enabled but are never sent, also across collections that move
// objects (ArenaProgram.java).
#include <gtest/gtest.h>
#include <jvmpi.h>

#include "alloc_report.h"
#include "heap_test.h"

namespace jvmpiheap {
namespace {

class Arenas : public HeapTest {};

TEST_P(Arenas, OneArenaFirstAndNoMovesOrDeletes) {
  const LaunchResult r = run_java("alloc", "", "jvmpiheap.ArenaProgram");
  expect_clean_exit(r);
  const AllocReport report = read_alloc_report(out_dir() + "/final.txt");
  ASSERT_TRUE(report.present);
  EXPECT_EQ(report.counter("enable_object_move_rc"), JVMPI_SUCCESS);
  EXPECT_EQ(report.counter("enable_arena_delete_rc"), JVMPI_SUCCESS);
  EXPECT_EQ(report.counter("arena_new_count"), 1);
  EXPECT_EQ(report.counter("arena_new_id"), 1);
  EXPECT_GT(report.counter("alloc_events"), 10000);
  EXPECT_EQ(report.counter("alloc_bad_arena"), 0) << "OBJECT_ALLOC in an arena other than 1";
  EXPECT_EQ(report.counter("alloc_before_arena"), 0) << "OBJECT_ALLOC events before ARENA_NEW";
  EXPECT_LT(report.counter("arena_new_seq"), report.counter("first_alloc_seq"));
  EXPECT_GE(report.counter("gc_finishes"), 5) << "the program's collections were not reported";
  EXPECT_EQ(report.counter("object_move_count"), 0);
  EXPECT_EQ(report.counter("arena_delete_count"), 0);
}

INSTANTIATE_TEST_SUITE_P(Jdks, Arenas, testing::ValuesIn(all_jdks()), jdk_param_name);

}  // namespace
}  // namespace jvmpiheap
