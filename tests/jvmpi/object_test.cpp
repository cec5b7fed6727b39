// SPDX-License-Identifier: Apache-2.0
// Object events and dumps (runtime part 2): OBJECT_ALLOC, ARENA_NEW, OBJECT_FREE, OBJECT_MOVE,
// JNI global reference events, and the OBJECT_DUMP, HEAP_DUMP and MONITOR_DUMP requests.
#include <set>

#include "jvmpi_test.h"

namespace jvmpitest {
namespace {

constexpr int kCount = 100;  // ObjectProgram.COUNT
constexpr int kLong = 11, kClass = 2, kInstanceDump = 0x21;

class JvmpiObjects : public JvmpiTest {
 protected:
  void SetUp() override {
    JvmpiTest::SetUp();
    if (IsSkipped()) return;
    result_ = Run(WithAgent("objects", "jvmpitest.ObjectProgram"));
    ASSERT_TRUE(result_.exited(0)) << result_.Describe();
    ASSERT_NE(result_.out.find("FACT\tallocated=100"), std::string::npos) << result_.Describe();
    log_ = Log();
    out_ = ParseLines(result_.out);
    for (const auto& e : Select(log_, "ENABLE")) EXPECT_EQ(e.num("rc"), 0) << e.raw;
  }

  std::vector<Line> TrackedAllocs() {
    return Select(log_, "OA", {{"thread", "jvmpitest-allocator"}, {"is_array", "0"}});
  }

  JvmResult result_;
  std::vector<Line> log_, out_;
};

TEST_P(JvmpiObjects, EveryAllocationOfTheThreadIsReported) {
  auto allocs = TrackedAllocs();
  ASSERT_EQ(allocs.size(), static_cast<size_t>(kCount)) << "OBJECT_ALLOC of Tracked objects";
  std::set<std::string> ids;
  for (const auto& a : allocs) {
    EXPECT_NE(a.ptr("obj"), 0u);
    EXPECT_EQ(a.num("requested"), 0);
    EXPECT_EQ(a.num("arena"), 1);
    EXPECT_GE(a.num("size"), 4 + 8 + 4) << "smaller than its fields: " << a.raw;
    ids.insert(a.get("obj"));
  }
  EXPECT_EQ(ids.size(), static_cast<size_t>(kCount)) << "object IDs must be unique";
  // new Tracked[5]: an array of references carries the element class.
  auto ref_array =
      Select(log_, "OA", {{"thread", "jvmpitest-allocator"}, {"is_array", std::to_string(kClass)}});
  ASSERT_EQ(ref_array.size(), 1u) << "OBJECT_ALLOC of new Tracked[5]";
  EXPECT_GE(ref_array[0].num("size"), 5 * 4);
  // new long[777]: type JVMPI_LONG, no class.
  bool found_long_array = false;
  for (const auto& p : Select(log_, "OA_PRIM", {{"is_array", std::to_string(kLong)}})) {
    found_long_array |= p.num("size") >= 777 * 8 && p.num("size") < 777 * 8 + 64;
    EXPECT_EQ(p.ptr("class_id"), 0u) << p.raw;
  }
  EXPECT_TRUE(found_long_array) << "no OBJECT_ALLOC for new long[777]";
}

TEST_P(JvmpiObjects, OneArenaAnnouncedBeforeAllocations) {
  auto arenas = Select(log_, "ARENA_NEW");
  ASSERT_EQ(arenas.size(), 1u);
  EXPECT_EQ(arenas[0].num("id"), 1);
  EXPECT_EQ(arenas[0].num("allocs_before"), 0) << "OBJECT_ALLOC before ARENA_NEW";
  EXPECT_LT(arenas[0].index, TrackedAllocs().front().index);
}

TEST_P(JvmpiObjects, DeadObjectsAreFreedInsideGcPairs) {
  ASSERT_NE(result_.out.find("FACT\tcollected=true"), std::string::npos) << result_.Describe();
  EXPECT_NE(result_.out.find("freed_all=true"), std::string::npos) << result_.Describe();
  std::set<std::string> allocated, freed;
  for (const auto& a : TrackedAllocs()) allocated.insert(a.get("obj"));
  bool in_gc = false;
  for (const auto& l : log_) {
    if (l.tag == "GC_START") in_gc = true;
    if (l.tag == "GC_FINISH") in_gc = false;
    if (l.tag != "OF") continue;
    EXPECT_TRUE(in_gc) << "OBJECT_FREE outside GC_START/GC_FINISH: " << l.raw;
    EXPECT_TRUE(freed.insert(l.get("obj")).second) << "freed twice: " << l.raw;
  }
  EXPECT_EQ(freed, allocated);
}

TEST_P(JvmpiObjects, ObjectDumpOfAnInstance) {
  auto request = Select(log_, "REQUEST", {{"what", "object_dump"}});
  ASSERT_EQ(request.size(), 1u);
  EXPECT_EQ(request[0].num("rc"), 0);
  auto dump = Select(log_, "OBJDUMP");
  ASSERT_EQ(dump.size(), 1u) << "RequestEvent(OBJECT_DUMP) delivered nothing";
  EXPECT_EQ(dump[0].num("requested"), 1);
  ASSERT_EQ(dump[0].ptr("type"), static_cast<uint64_t>(kInstanceDump)) << "want INSTANCE_DUMP";
  EXPECT_EQ(dump[0].get("obj"), request[0].get("obj"));
  auto cls = Select(log_, "TRACKED_CLASS");
  ASSERT_EQ(cls.size(), 1u);
  EXPECT_EQ(dump[0].get("class"), cls[0].get("id"));
  EXPECT_EQ(dump[0].num("bytes"), 4 + 8 + 8) << "int, long and one reference";
  auto field = [&](const char* name) {
    auto f = Select(log_, "DUMPFIELD", {{"name", name}});
    EXPECT_EQ(f.size(), 1u) << name;
    return f.empty() ? std::string() : f[0].get("value");
  };
  EXPECT_EQ(field("a"), std::to_string(0x01020304));
  EXPECT_EQ(field("b"), std::to_string(0x1122334455667788LL));
  auto shared = Select(log_, "OBJID", {{"what", "1"}});
  ASSERT_EQ(shared.size(), 1u);
  EXPECT_EQ(field("ref"), shared[0].get("id")) << "the reference field holds the shared object";
  auto end = Select(log_, "OBJDUMP_END");
  ASSERT_EQ(end.size(), 1u);
  EXPECT_EQ(end[0].num("consumed"), dump[0].num("bytes"));
}

TEST_P(JvmpiObjects, HeapDumpLevel0ListsTheLiveObjects) {
  auto request = Select(log_, "REQUEST", {{"what", "heap_dump"}});
  ASSERT_EQ(request.size(), 1u);
  EXPECT_EQ(request[0].num("rc"), 0);
  auto dump = Select(log_, "HEAPDUMP", {{"at_shutdown", "0"}});
  ASSERT_EQ(dump.size(), 1u) << "RequestEvent(HEAP_DUMP) delivered nothing";
  EXPECT_EQ(dump[0].num("level"), 0);
  EXPECT_EQ(dump[0].num("leftover"), 0) << "buffer is not a whole number of level-0 records";
  EXPECT_GT(dump[0].num("records"), kCount);
  EXPECT_EQ(dump[0].num("tracked_found"), kCount) << "live Tracked objects missing from the dump";
  EXPECT_EQ(dump[0].num("tracked_types_ok"), 1) << "an instance not typed JVMPI_NORMAL_OBJECT";
}

// StreamHeapDump hands over, chunk by chunk, exactly the bytes RequestEvent(HEAP_DUMP) puts in its
// one buffer, at every level, for the same quiet heap (the agent compares them; 64 KiB chunks so
// the dump spans many).
TEST_P(JvmpiObjects, StreamedHeapDumpIsTheOneBufferDump) {
  auto cmp = Select(log_, "STREAMCMP");
  ASSERT_EQ(cmp.size(), 3u) << "the agent found no StreamHeapDump in the extension table";
  for (const auto& c : cmp) {
    EXPECT_EQ(c.num("rc_buffer"), 0) << c.raw;
    EXPECT_EQ(c.num("rc_stream"), 0) << c.raw;
    EXPECT_GT(c.num("buffer_bytes"), 0) << c.raw;
    EXPECT_EQ(c.num("stream_bytes"), c.num("buffer_bytes")) << c.raw;
    EXPECT_EQ(c.num("first_diff"), -1) << "streamed bytes differ: " << c.raw;
    EXPECT_GT(c.num("chunks"), 1) << c.raw;
    EXPECT_EQ(c.num("chunks_bounded"), c.num("chunks")) << "a chunk far above its size: " << c.raw;
    EXPECT_EQ(c.num("class_calls"), 1) << c.raw;
    EXPECT_EQ(c.num("finished"), 1) << c.raw;
  }
}

// A class loaded too late for a streamed dump to learn it before its walk is learnt after it;
// the objects that learning makes (here: what the agent's CLASS_LOAD of that class allocates)
// are in the streamed dump all the same, as they are in the one-buffer dump, which walks again.
TEST_P(JvmpiObjects, StreamedHeapDumpHoldsWhatLearningLateClassesMade) {
  auto late = Select(log_, "STREAMLATE");
  ASSERT_EQ(late.size(), 1u) << "the agent found no StreamHeapDump in the extension table";
  EXPECT_EQ(late[0].num("rc"), 0) << late[0].raw;
  EXPECT_EQ(late[0].num("defined"), 2) << "the agent could not define its late classes";
  ASSERT_EQ(late[0].num("seed_made"), 1) << "the late class was not learnt after the walk";
  EXPECT_EQ(late[0].num("seed_in_dump"), 1) << "the streamed dump lacks the object made while "
                                               "the late class was learnt: "
                                            << late[0].raw;
}

TEST_P(JvmpiObjects, MonitorDumpShowsOwnerAndWaiter) {
  auto request = Select(log_, "REQUEST", {{"what", "monitor_dump"}});
  ASSERT_EQ(request.size(), 1u);
  EXPECT_EQ(request[0].num("rc"), 0);
  auto dump = Select(log_, "MONDUMP");
  ASSERT_EQ(dump.size(), 1u) << "RequestEvent(MONITOR_DUMP) delivered nothing";
  EXPECT_GT(dump[0].num("num_traces"), 0);
  EXPECT_EQ(dump[0].num("status_null"), 0);
  auto end = Select(log_, "MONDUMP_END");
  ASSERT_EQ(end.size(), 1u) << "malformed monitor dump buffer";
  EXPECT_EQ(end[0].num("leftover"), 0);
  auto lock = Select(log_, "MONDUMP_JAVA");
  ASSERT_EQ(lock.size(), 1u) << "the contended lock is not in the dump";
  EXPECT_EQ(lock[0].get("owner"), "jvmpitest-owner");
  EXPECT_EQ(lock[0].num("entries"), 1);
  EXPECT_EQ(lock[0].get("enter"), "jvmpitest-blocked");
  EXPECT_EQ(lock[0].get("notify"), "");
}

TEST_P(JvmpiObjects, JniGlobalReferenceEvents) {
  auto refs = Select(out_, "REFS");
  ASSERT_EQ(refs.size(), 1u) << result_.Describe();
  auto probe = Select(log_, "REQUEST", {{"what", "object_dump"}});
  ASSERT_EQ(probe.size(), 1u);
  const std::string obj = probe[0].get("obj");
  auto global = Select(log_, "GREF_ALLOC", {{"ref", refs[0].get("global")}});
  ASSERT_EQ(global.size(), 1u) << "no JNI_GLOBALREF_ALLOC for NewGlobalRef";
  EXPECT_EQ(global[0].get("obj"), obj);
  auto global_free = Select(log_, "GREF_FREE", {{"ref", refs[0].get("global")}});
  ASSERT_EQ(global_free.size(), 1u) << "no JNI_GLOBALREF_FREE for DeleteGlobalRef";
  EXPECT_GT(global_free[0].index, global[0].index);
  auto weak = Select(log_, "WREF_ALLOC", {{"ref", refs[0].get("weak")}});
  ASSERT_EQ(weak.size(), 1u) << "no JNI_WEAK_GLOBALREF_ALLOC for NewWeakGlobalRef";
  EXPECT_EQ(weak[0].get("obj"), obj);
  auto weak_free = Select(log_, "WREF_FREE", {{"ref", refs[0].get("weak")}});
  ASSERT_EQ(weak_free.size(), 1u) << "no JNI_WEAK_GLOBALREF_FREE for DeleteWeakGlobalRef";
  EXPECT_GT(weak_free[0].index, weak[0].index);
}

TEST_P(JvmpiObjects, RequestForAFreedObjectFails) {
  ASSERT_NE(result_.out.find("freed_all=true"), std::string::npos) << result_.Describe();
  auto request = Select(log_, "REQUEST", {{"what", "freed_alloc"}});
  ASSERT_EQ(request.size(), 1u);
  EXPECT_NE(request[0].ptr("obj"), 0u);
  EXPECT_EQ(request[0].num("rc"), -1) << "JVMPI_FAIL for a dead ID (docs/jvmpi-conformance.md)";
  EXPECT_TRUE(Select(log_, "OA", {{"requested", "1"}}).empty()) << "an event for a freed object";
}

TEST_P(JvmpiObjects, HeapDumpFromTheShutDownHandler) {
  auto request = Select(log_, "SHUT_DOWN_REQUEST");
  ASSERT_EQ(request.size(), 1u) << "no JVM_SHUT_DOWN";
  EXPECT_EQ(request[0].num("rc"), 0);
  auto dump = Select(log_, "HEAPDUMP", {{"at_shutdown", "1"}});
  ASSERT_EQ(dump.size(), 1u) << "RequestEvent(HEAP_DUMP) in the JVM_SHUT_DOWN handler";
  EXPECT_GT(dump[0].num("records"), 0);
  EXPECT_EQ(dump[0].num("leftover"), 0);
  EXPECT_EQ(dump[0].num("tracked_found"), 0) << "freed objects are in the dump";
}

JVMPI_TEST_SUITE(JvmpiObjects);

}  // namespace
}  // namespace jvmpitest
