// SPDX-License-Identifier: Apache-2.0
// JNI global and weak global references made and deleted by a native library (JniRefProgram.java):
// JNI_GLOBALREF_ALLOC/FREE and JNI_WEAK_GLOBALREF_ALLOC/FREE with the reference the library got,
// the ID of the right object (checked with RequestEvent(OBJECT_ALLOC, obj_id) in the agent's
// handler, and against the agent's own OBJECT_ALLOC record of that ID), FREE after ALLOC.
#include <gtest/gtest.h>
#include <jvmpi.h>

#include <sstream>

#include "heap_test.h"

namespace jvmpiheap {
namespace {

struct RefEvent {
  std::string kind;
  std::map<std::string, std::string> fields;
};

std::vector<RefEvent> read_ref_events(const std::string& path) {
  std::vector<RefEvent> list;
  std::istringstream in(read_file(path));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    RefEvent e;
    s >> e.kind;
    std::string kv;
    while (s >> kv) {
      const auto eq = kv.find('=');
      if (eq != std::string::npos) e.fields[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    list.push_back(e);
  }
  return list;
}

class JniReferences : public HeapTest {};

TEST_P(JniReferences, AllocAndFreeWithMatchingRefAndObject) {
  const LaunchResult r = run_java("alloc", "jniref=1", "jvmpiheap.JniRefProgram");
  expect_clean_exit(r);
  const Facts facts(r.out);
  ASSERT_EQ(facts.get("deleted"), "true");
  const auto events = read_ref_events(out_dir() + "/jniref.txt");
  ASSERT_FALSE(events.empty()) << "no JNI reference events at all";

  struct Case {
    const char* what;
    std::string alloc_kind, free_kind, ref, obj, class_name;
    int type;
  };
  const std::string p = "jvmpiheap.JniRefProgram$";
  const Case cases[] = {
      {"global ref", "galloc", "gfree", facts.get("global_ref"), facts.get("id_global"),
       p + "GlobalTarget", JVMPI_NORMAL_OBJECT},
      {"weak global ref", "walloc", "wfree", facts.get("weak_ref"), facts.get("id_weak"),
       p + "WeakTarget", JVMPI_NORMAL_OBJECT},
      {"global ref to int[]", "galloc", "gfree", facts.get("ints_ref"), facts.get("id_ints"), "-",
       JVMPI_INT},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    ASSERT_FALSE(c.ref.empty());
    // The ALLOC of this reference for this object, then the next event naming the reference.
    size_t at = events.size();
    for (size_t i = 0; i < events.size(); ++i) {
      const auto& f = events[i].fields;
      if (events[i].kind == c.alloc_kind && f.count("ref") && f.at("ref") == c.ref) {
        at = i;
        break;
      }
    }
    ASSERT_LT(at, events.size()) << "no " << c.alloc_kind << " event for ref " << c.ref;
    const auto& alloc = events[at].fields;
    EXPECT_EQ(alloc.at("obj"), c.obj) << "ALLOC names another object";
    EXPECT_EQ(alloc.at("rc"), "0") << "RequestEvent(OBJECT_ALLOC, obj_id) failed";
    EXPECT_EQ(alloc.at("class"), c.class_name) << "the requested OBJECT_ALLOC's class";
    EXPECT_EQ(alloc.at("type"), std::to_string(c.type)) << "the requested OBJECT_ALLOC's is_array";
    EXPECT_EQ(alloc.at("alloc_type"), std::to_string(c.type))
        << "the obj_id is not the one OBJECT_ALLOC reported for that object";
    if (c.type == JVMPI_NORMAL_OBJECT) {
      EXPECT_EQ(alloc.at("alloc_class"), c.class_name);
    }
    size_t next = at + 1;
    while (next < events.size() &&
           !(events[next].fields.count("ref") && events[next].fields.at("ref") == c.ref)) {
      ++next;
    }
    ASSERT_LT(next, events.size()) << "no event after the ALLOC names the reference";
    EXPECT_EQ(events[next].kind, c.free_kind) << "the reference's next event is no FREE";
  }
}

INSTANTIATE_TEST_SUITE_P(Jdks, JniReferences, testing::ValuesIn(all_jdks()), jdk_param_name);

}  // namespace
}  // namespace jvmpiheap
