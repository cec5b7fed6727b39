// SPDX-License-Identifier: Apache-2.0
// The flame-graph page's context and stacks, on a java.hprof.txt whose answer is known: lambda
// frames lose their run-specific hidden-class names, stacks as deep as HPROF's depth= go under
// one "[truncated ...]" frame instead of making false roots, and the context rows are shown,
// escaped.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "profiles.h"

namespace {

// depth=3: trace 300001 (3 frames) was cut, 300002 (2 frames, from main) was not. The lambda's
// hidden class is named as JDK 17 names it (Lambda$N/0x...), HPROF writing '.' for '/'.
const char kText[] =
    "JAVA PROFILE 1.0.1, created Wed Nov 25 09:00:00 2026\n"
    "\n"
    "--------\n"
    "\n"
    "THREAD START (obj=50000191, id = 200001, name=\"main\", group=\"main\")\n"
    "TRACE 300001: (thread=200001)\n"
    "\tapp.Hot.spin(Hot.java:10)\n"
    "\tapp.Main$$Lambda$14.0x0000000801001234.run(<Unknown Source>:Unknown line)\n"
    "\tapp.Hot.run(Hot.java:5)\n"
    "TRACE 300002: (thread=200001)\n"
    "\tapp.Main$$Lambda$15.0x00000008010015a8.run(<Unknown Source>:Unknown line)\n"
    "\tapp.Main.main(Main.java:4)\n"
    "SITES BEGIN (ordered by live bytes) Wed Nov 25 09:00:01 2026\n"
    "          percent          live          alloc'ed  stack class\n"
    " rank   self  accum     bytes objs     bytes  objs trace name\n"
    "    1 80.00% 80.00%      4000   10      8000    20 300001 byte[]\n"
    "SITES END\n"
    "CPU SAMPLES BEGIN (total = 10) Wed Nov 25 09:00:02 2026\n"
    "rank   self  accum   count trace method\n"
    "   1 70.00% 70.00%       7 300001 app.Hot.spin\n"
    "   2 30.00% 100.00%       3 300002 app.Main$$Lambda$15.0x00000008010015a8.run\n"
    "CPU SAMPLES END\n";

profiles::JavaProfile Parse() {
  profiles::StreamReader r("test");
  r.feed(kText);
  r.finish();
  return std::move(r.profile());
}

TEST(PageLambdas, RunSpecificPartsOfHiddenClassNamesGo) {
  EXPECT_EQ(profiles::normalized_method("demo.DemoApp$$Lambda$14.0x0000000801001234.run"),
            "demo.DemoApp$$Lambda.run");
  EXPECT_EQ(profiles::normalized_method("demo.DemoApp$$Lambda$14/0x0000000801001234.run"),
            "demo.DemoApp$$Lambda.run");
  // JDK 21 and later: no counter, only the address.
  EXPECT_EQ(profiles::normalized_method("demo.DemoApp$$Lambda.0x00007f3c1c00a000.run"),
            "demo.DemoApp$$Lambda.run");
  EXPECT_EQ(profiles::normalized_method("java.lang.invoke.LambdaForm$MH.0x0000000801004400.invoke"),
            "java.lang.invoke.LambdaForm$MH.invoke");
  // Names that only look alike keep every character.
  for (const char* kept : {"app.Hex.0x1f", "app.A$$Lambda", "app.B$$Lambda$3.run",
                           "app.Lambda$1.0x00ff.run", "app.C.lambda$main$0", "0x12.a"}) {
    EXPECT_EQ(profiles::normalized_method(kept), kept);
  }
}

TEST(PageLambdas, TwoHiddenClassesOfOneLambdaSiteAreOneFrame) {
  const auto p = Parse();
  const auto j = nlohmann::json::parse(profiles::flame_json(p, profiles::Measure::kCpuSamples));
  const std::string text = j.dump();
  EXPECT_EQ(text.find("0x0000"), std::string::npos) << text;
  EXPECT_NE(text.find("\"app.Main$$Lambda.run\""), std::string::npos) << text;
}

// Children of the root, name -> value.
std::map<std::string, uint64_t> Roots(const nlohmann::json& flame) {
  std::map<std::string, uint64_t> out;
  for (const auto& c : flame["root"]["c"]) out[c["n"].get<std::string>()] = c["v"].get<uint64_t>();
  return out;
}

TEST(PageTruncation, CutStacksGoUnderOneMarkedFrame) {
  const auto p = Parse();
  const auto cpu =
      nlohmann::json::parse(profiles::flame_json(p, profiles::Measure::kCpuSamples, false, 3));
  EXPECT_EQ(Roots(cpu),
            (std::map<std::string, uint64_t>{{"[truncated at depth 3]", 7}, {"app.Main.main", 3}}));
  EXPECT_EQ(cpu["root"]["c"][0]["c"][0]["n"], "app.Hot.run");
  // Allocation stacks end in the class: the depth counts the trace's frames only.
  const auto alloc =
      nlohmann::json::parse(profiles::flame_json(p, profiles::Measure::kAllocBytes, false, 3));
  EXPECT_EQ(Roots(alloc), (std::map<std::string, uint64_t>{{"[truncated at depth 3]", 8000}}));
  // Per thread: the marker goes under the thread's frame.
  const auto threads =
      nlohmann::json::parse(profiles::flame_json(p, profiles::Measure::kCpuSamples, true, 3));
  ASSERT_EQ(threads["root"]["c"].size(), 1u);
  std::map<std::string, uint64_t> under_thread;
  for (const auto& c : threads["root"]["c"][0]["c"]) under_thread[c["n"]] = c["v"];
  EXPECT_EQ(under_thread,
            (std::map<std::string, uint64_t>{{"[truncated at depth 3]", 7}, {"app.Main.main", 3}}));
  // Depth unknown: stacks as the report has them.
  const auto plain = nlohmann::json::parse(profiles::flame_json(p, profiles::Measure::kCpuSamples));
  EXPECT_EQ(Roots(plain),
            (std::map<std::string, uint64_t>{{"app.Hot.run", 7}, {"app.Main.main", 3}}));
}

TEST(PageContext, RowsAreShownEscapedAndTheCutIsExplained) {
  const auto p = Parse();
  profiles::HtmlOptions o;
  o.context = {{"program", "app.Main <b>x</b>"}, {"JVM", "OpenJDK 17"}};
  o.cut_depth = 3;
  const std::string html = profiles::to_html(p, profiles::available_measures(p), "jvmprof: t", o);
  EXPECT_NE(html.find("<tr><th>program</th><td>app.Main &lt;b&gt;x&lt;/b&gt;</td></tr>"),
            std::string::npos);
  EXPECT_NE(html.find("<tr><th>JVM</th><td>OpenJDK 17</td></tr>"), std::string::npos);
  EXPECT_NE(html.find("cut at 3 frames"), std::string::npos);
  EXPECT_NE(html.find("[truncated at depth 3]"), std::string::npos);
  // Without context, no table.
  EXPECT_EQ(profiles::to_html(p, profiles::available_measures(p), "t").find("id=\"context\""),
            std::string::npos);
}

}  // namespace
