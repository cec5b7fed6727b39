// SPDX-License-Identifier: Apache-2.0
// RequestEvent(OBJECT_ALLOC) and RequestEvent(OBJECT_DUMP) answer for the object whose ID was
// given, with its class and size, right after allocation, after full collections that compact the
// heap, and for objects allocated after them; a collected object's ID answers JVMPI_FAIL
// (ResolveProgram.java, agents/resolve_agent.c).
#include <gtest/gtest.h>
#include <jvmpi.h>

#include "heap_test.h"

namespace jvmpiheap {
namespace {

class ResolveTest : public HeapTest {};

struct Expected {
  std::string name;
  std::string class_name;  // OBJECT_ALLOC's class: the element class for arrays, "-" for none
  int kind;                // is_array
  int dump_type;
  std::string dump_class;  // the instance's class, the array's element class, "-" otherwise
};

void expect_answer(const Facts& facts, const Expected& e, const std::string& point) {
  const std::string k = e.name + "." + point + ".";
  SCOPED_TRACE(e.name + " at " + point);
  ASSERT_EQ(facts.num(k + "rc_alloc"), JVMPI_SUCCESS);
  ASSERT_EQ(facts.num(k + "rc_dump"), JVMPI_SUCCESS);
  EXPECT_EQ(facts.get(k + "class"), e.class_name);
  EXPECT_EQ(facts.num(k + "kind"), e.kind);
  // The size the allocation event gave: the same object.
  EXPECT_EQ(facts.num(k + "size"), facts.num(e.name + ".event_size"));
  EXPECT_EQ(facts.num(k + "dump_type"), e.dump_type);
  EXPECT_EQ(facts.num(k + "dump_id_ok"), 1) << "the dump record names another object";
  EXPECT_EQ(facts.get(k + "dump_class"), e.dump_class);
}

TEST_P(ResolveTest, IdsAnswerForTheirObjectBeforeAndAfterCollections) {
  const LaunchResult r = run_java("resolve", "", "jvmpiheap.ResolveProgram", {}, {"-Xmx64m"});
  expect_clean_exit(r);
  const Facts facts(r.out);
  ASSERT_EQ(facts.get("done"), "true") << r.out;
  const std::string p = "jvmpiheap.ResolveProgram$";
  const std::vector<Expected> objects = {
      {"small", p + "Small", JVMPI_NORMAL_OBJECT, JVMPI_GC_INSTANCE_DUMP, p + "Small"},
      {"big", p + "Big", JVMPI_NORMAL_OBJECT, JVMPI_GC_INSTANCE_DUMP, p + "Big"},
      {"ints", "-", JVMPI_INT, JVMPI_GC_PRIM_ARRAY_DUMP, "-"},
      {"strings", "java.lang.String", JVMPI_CLASS, JVMPI_GC_OBJ_ARRAY_DUMP, "java.lang.String"},
      {"late", p + "Small", JVMPI_NORMAL_OBJECT, JVMPI_GC_INSTANCE_DUMP, p + "Small"},
  };
  for (const Expected& e : objects) {
    // One ID per object, whichever way it was obtained.
    ASSERT_NE(parse_number(facts.get(e.name + ".alloc_id")), 0u) << e.name;
    EXPECT_EQ(facts.get(e.name + ".alloc_id"), facts.get(e.name + ".named_id")) << e.name;
    EXPECT_GT(facts.num(e.name + ".event_size"), 0) << e.name;
  }
  // The sizes tell the objects apart: a wrong object cannot pass the size checks by chance.
  EXPECT_GT(facts.num("big.event_size"), facts.num("small.event_size"));
  EXPECT_GE(facts.num("ints.event_size"), 4000);
  for (const Expected& e : objects) {
    if (e.name != "late") {
      expect_answer(facts, e, "new");
      expect_answer(facts, e, "gc");
    }
    expect_answer(facts, e, "gc2");
  }
  // The dropped object answered while it lived, and not once it was collected.
  EXPECT_EQ(facts.num("dead.new.rc_alloc"), JVMPI_SUCCESS);
  EXPECT_EQ(facts.get("dead.new.class"), p + "Small");
  ASSERT_EQ(facts.get("dead.collected"), "true") << "two full collections kept an unreachable "
                                                    "object";
  EXPECT_EQ(facts.get("dead.gc.rc_alloc"), std::to_string(JVMPI_FAIL));
  EXPECT_EQ(facts.get("dead.gc.rc_dump"), std::to_string(JVMPI_FAIL));
}

INSTANTIATE_TEST_SUITE_P(Jdks, ResolveTest, testing::ValuesIn(all_jdks()), jdk_param_name);

}  // namespace
}  // namespace jvmpiheap
