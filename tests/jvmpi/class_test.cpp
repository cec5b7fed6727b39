// SPDX-License-Identifier: Apache-2.0
// Classes: CLASS_LOAD contents against what the program knows about its own class, requested
// CLASS_LOAD, classes of the start-up, CLASS_UNLOAD and CLASS_LOAD_HOOK.
#include <set>
#include <tuple>

#include "jvmpi_test.h"

namespace jvmpitest {
namespace {

constexpr const char* kInner = "jvmpitest.ClassLoadProgram$Inner";

class JvmpiClassLoad : public JvmpiTest {
 protected:
  void SetUp() override {
    JvmpiTest::SetUp();
    if (IsSkipped()) return;
    result_ = Run(WithAgent("classes", "jvmpitest.ClassLoadProgram"));
    ASSERT_TRUE(result_.exited(0)) << result_.Describe();
    ASSERT_NE(result_.out.find("FACT\tdone=1"), std::string::npos) << result_.Describe();
    log_ = Log();
    out_ = ParseLines(result_.out);
  }

  // The class's own (not requested) CLASS event.
  Line ClassLine(const std::string& name, bool requested = false) {
    auto c = Select(log_, "CLASS", {{"name", name}, {"requested", requested ? "1" : "0"}});
    EXPECT_EQ(c.size(), 1u) << "CLASS_LOAD of " << name << (requested ? " (requested)" : "");
    return c.empty() ? Line{} : c[0];
  }

  JvmResult result_;
  std::vector<Line> log_, out_;
};

TEST_P(JvmpiClassLoad, NameSourceAndCounts) {
  auto truth = Select(out_, "CLASS");
  ASSERT_EQ(truth.size(), 1u);
  EXPECT_EQ(truth[0].get("name"), kInner);
  Line c = ClassLine(kInner);
  ASSERT_FALSE(c.raw.empty());
  EXPECT_EQ(c.get("source"), "ClassLoadProgram.java");
  EXPECT_EQ(c.num("interfaces"), truth[0].num("interfaces"));
  EXPECT_NE(c.ptr("id"), 0u) << "class_id is NULL";
  // Declared methods and constructors, plus <clinit> (the static initializer of counter).
  EXPECT_EQ(c.num("methods"), static_cast<int64_t>(Select(out_, "METHOD").size()) + 1);
  int64_t statics = 0, instances = 0;
  for (const auto& f : Select(out_, "FIELD")) (f.get("kind") == "static" ? statics : instances)++;
  EXPECT_EQ(c.num("statics"), statics);
  EXPECT_EQ(c.num("instances"), instances);
  // Class names are external (dotted) everywhere, nested ones with '$'.
  EXPECT_EQ(Select(log_, "CL", {{"name", "jvmpitest.ClassLoadProgram"}}).size(), 1u);
  EXPECT_TRUE(Select(log_, "CL", {{"name", "jvmpitest/ClassLoadProgram"}}).empty());
}

TEST_P(JvmpiClassLoad, MethodsWithSignaturesAndLineRanges) {
  using Sig = std::pair<std::string, std::string>;
  std::set<Sig> want{{"<clinit>", "()V"}}, got;
  for (const auto& m : Select(out_, "METHOD")) want.insert({m.get("name"), m.get("sig")});
  auto methods = Select(log_, "METHOD", {{"class", kInner}, {"requested", "0"}});
  Line c = ClassLine(kInner);
  for (const auto& m : methods) {
    got.insert({m.get("name"), m.get("sig")});
    EXPECT_NE(m.ptr("mid"), 0u) << m.raw;
    EXPECT_EQ(m.num("gmc_ok"), 1) << "GetMethodClass(method_id) != class_id: " << m.raw;
  }
  EXPECT_EQ(got, want);
  for (const auto& lines : Select(out_, "LINES")) {
    SCOPED_TRACE(lines.raw);
    auto m = Select(methods, "METHOD", {{"name", lines.get("name")}});
    ASSERT_EQ(m.size(), 1u);
    EXPECT_EQ(m[0].num("start"), lines.num("first")) << "start_lineno";
    EXPECT_EQ(m[0].num("end"), lines.num("last")) << "end_lineno";
  }
}

TEST_P(JvmpiClassLoad, StaticAndInstanceFields) {
  using Field = std::tuple<std::string, std::string, std::string>;
  std::set<Field> want, got;
  for (const auto& f : Select(out_, "FIELD")) {
    want.insert({f.get("kind"), f.get("name"), f.get("sig")});
  }
  for (const auto& f : Select(log_, "FIELD", {{"class", kInner}, {"requested", "0"}})) {
    got.insert({f.get("kind"), f.get("name"), f.get("sig")});
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(want.size(), 5u) << "ClassLoadProgram$Inner declares five fields";
}

TEST_P(JvmpiClassLoad, RequestEventRedeliversSynchronously) {
  auto j2id = Select(log_, "JOBJECT2ID");
  ASSERT_EQ(j2id.size(), 1u);
  EXPECT_EQ(j2id[0].get("known_as"), kInner) << "jobject2jobjectID(Inner.class) != its class_id";
  auto req = Select(log_, "REQUEST", {{"class", kInner}});
  ASSERT_EQ(req.size(), 1u);
  EXPECT_EQ(req[0].num("rc"), 0) << "RequestEvent(CLASS_LOAD) must answer JVMPI_SUCCESS";
  EXPECT_EQ(req[0].num("delivered_before_return"), 1)
      << "the requested event must arrive on the calling thread before RequestEvent returns";
  Line original = ClassLine(kInner);
  Line again = ClassLine(kInner, true);
  ASSERT_FALSE(again.raw.empty());
  EXPECT_EQ(again.num("same_thread"), 1);
  for (const char* k : {"source", "interfaces", "methods", "statics", "instances", "id"}) {
    EXPECT_EQ(again.get(k), original.get(k)) << k;
  }
  // The same methods with the same IDs and lines.
  auto fields = [](const std::vector<Line>& v) {
    std::set<std::string> s;
    for (const auto& l : v) {
      s.insert(l.get("name") + l.get("sig") + l.get("start") + l.get("end") + l.get("mid") +
               l.get("kind"));
    }
    return s;
  };
  EXPECT_EQ(fields(Select(log_, "METHOD", {{"class", kInner}, {"requested", "1"}})),
            fields(Select(log_, "METHOD", {{"class", kInner}, {"requested", "0"}})));
  EXPECT_EQ(fields(Select(log_, "FIELD", {{"class", kInner}, {"requested", "1"}})),
            fields(Select(log_, "FIELD", {{"class", kInner}, {"requested", "0"}})));
  // The requested copy carries JVMPI_REQUESTED_EVENT; only one CL line is not requested.
  EXPECT_EQ(Select(log_, "CL", {{"name", kInner}, {"requested", "1"}}).size(), 1u);
}

TEST_P(JvmpiClassLoad, StartupClassesAreAnnouncedBeforeInitDone) {
  auto init = Select(log_, "INIT_DONE");
  ASSERT_EQ(init.size(), 1u);
  for (const char* name : {"java.lang.Object", "java.lang.String"}) {
    SCOPED_TRACE(name);
    Line c = ClassLine(name);
    ASSERT_FALSE(c.raw.empty());
    EXPECT_LT(c.index, init[0].index);
    EXPECT_NE(c.ptr("id"), 0u);
    EXPECT_GT(c.num("methods"), 5);
    EXPECT_EQ(c.get("source"), std::string(name).substr(10) + ".java");
  }
  EXPECT_EQ(ClassLine("java.lang.Object").num("interfaces"), 0);
  auto string_methods = Select(log_, "METHOD", {{"class", "java.lang.String"}, {"requested", "0"}});
  bool has_length = false;
  for (const auto& m : string_methods) has_length |= m.get("name") + m.get("sig") == "length()I";
  EXPECT_TRUE(has_length) << "java.lang.String.length()I missing";
  // Requested at JVM_INIT_DONE, from inside an event handler.
  auto req = Select(log_, "REQUEST", {{"class", "java.lang.String"}});
  ASSERT_EQ(req.size(), 1u);
  EXPECT_EQ(req[0].num("rc"), 0);
  EXPECT_EQ(req[0].num("delivered_before_return"), 1);
  EXPECT_EQ(ClassLine("java.lang.String", true).get("id"), ClassLine("java.lang.String").get("id"));
}

JVMPI_TEST_SUITE(JvmpiClassLoad);

class JvmpiClassUnload : public JvmpiTest {};

TEST_P(JvmpiClassUnload, UnloadedClassIsReported) {
  JvmResult r = Run(WithAgent("classes", "jvmpitest.UnloadProgram"));
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  ASSERT_NE(r.out.find("FACT\tloaded=unloadable-hello\tloader_is_custom=true"), std::string::npos)
      << r.Describe();
  ASSERT_NE(r.out.find("FACT\tloader_cleared=true"), std::string::npos)
      << "the JVM did not collect the class loader; nothing to test\n"
      << r.Describe();
  auto log = Log();
  auto loads = Select(log, "CL", {{"name", "jvmpitest.Unloadable"}, {"requested", "0"}});
  ASSERT_EQ(loads.size(), 1u) << r.Describe();
  auto unloads = Select(log, "CU", {{"name", "jvmpitest.Unloadable"}});
  ASSERT_EQ(unloads.size(), 1u) << "no CLASS_UNLOAD for the unloaded class\n" << r.Describe();
  EXPECT_EQ(unloads[0].ptr("id"), loads[0].ptr("id"));
  EXPECT_GT(unloads[0].index, loads[0].index);
  EXPECT_NE(r.out.find("FACT\tunload_seen=true"), std::string::npos);
  // Classes still loaded were not reported unloaded.
  EXPECT_TRUE(Select(log, "CU", {{"name", "jvmpitest.UnloadProgram"}}).empty());
  EXPECT_TRUE(Select(log, "CU", {{"name", "java.lang.String"}}).empty());
}

TEST_P(JvmpiClassUnload, RequestForAnUnloadedClassFails) {
  JvmResult r = Run(WithAgent("classes", "jvmpitest.UnloadProgram"));
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  ASSERT_NE(r.out.find("FACT\tunload_seen=true"), std::string::npos) << r.Describe();
  auto log = Log();
  auto request = Select(log, "REQUEST", {{"class", "unloaded"}});
  ASSERT_EQ(request.size(), 1u) << r.Describe();
  EXPECT_EQ(request[0].num("rc"), -1) << "JVMPI_FAIL for a dead ID (docs/jvmpi-conformance.md)";
  EXPECT_EQ(request[0].num("delivered_before_return"), 0);
  EXPECT_TRUE(Select(log, "CL", {{"name", "jvmpitest.Unloadable"}, {"requested", "1"}}).empty());
}

JVMPI_TEST_SUITE(JvmpiClassUnload);

class JvmpiClassLoadHook : public JvmpiTest {};

TEST_P(JvmpiClassLoadHook, ReplacedBytesAreLoadedAndUnchangedOnesStay) {
  JvmResult r = Run(WithAgent("hook", "jvmpitest.HookProgram"));
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  auto log = Log();
  ASSERT_EQ(Select(log, "ENABLE", {{"rc", "0"}}).size(), 1u) << r.Describe();
  EXPECT_EQ(Select(log, "PATCHED").size(), 1u) << r.Describe();
  EXPECT_EQ(Select(log, "UNTOUCHED").size(), 1u) << r.Describe();
  for (const auto& l : Select(log, "BAD_HOOK")) ADD_FAILURE() << "malformed hook event: " << l.raw;
  auto out = ParseLines(r.out);
  auto target = Select(out, "VALUE", {{"class", "Target"}});
  ASSERT_EQ(target.size(), 1u);
  EXPECT_EQ(target[0].get("value"), "JVMPITEST_REPLACED") << "the agent's bytes were not used";
  auto untouched = Select(out, "VALUE", {{"class", "Untouched"}});
  ASSERT_EQ(untouched.size(), 1u);
  EXPECT_EQ(untouched[0].get("value"), "JVMPITEST_UNTOUCHED");
  auto shut = Select(log, "SHUT_DOWN");
  ASSERT_EQ(shut.size(), 1u);
  EXPECT_GT(shut[0].num("hooks"), 100) << "the JDK's own classes pass through the hook too";
}

JVMPI_TEST_SUITE(JvmpiClassLoadHook);

}  // namespace
}  // namespace jvmpitest
