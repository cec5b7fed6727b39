// SPDX-License-Identifier: Apache-2.0
// The structural parser's own tests: a well-formed profile in JDK 8's layout passes, and each kind
// of damage is reported. No JVM is run.
#include <gtest/gtest.h>

#include <string>

#include "hprof_text.h"

namespace hproftest {
namespace {

const char* const kDate = "Mon Nov 23 07:25:44 2026";

std::string Header() {
  return std::string("JAVA PROFILE 1.0.1, created ") + kDate +
         "\n\nA prelude: any text.\nRecords follow.\n\n--------\n\n";
}

std::string GoodBody() {
  return std::string(
             "THREAD START (obj=50000150, id = 200001, name=\"main\", group=\"main\")\n"
             "THREAD START (obj=50000160, id = 200002, name=\"Worker, 1\", group=\"main\")\n"
             "WAIT: MONITOR Ljava/lang/Object;, timeout=20, thread 200001\n"
             "WAITED: MONITOR Ljava/lang/Object;, time_waited=20, thread 200001\n"
             "SLEEP: timeout=15, thread 200002\n"
             "THREAD END (id = 200002)\n"
             "TRACE 300000:\n"
             "\t<empty>\n"
             "TRACE 300001: (thread=200001)\n"
             "\tjava.lang.Object.<init>(Object.java:37)\n"
             "\tDemo.main(Demo.java:Unknown line)\n"
             "TRACE 300002:\n"
             "\tDemo.work(<Unknown Source>:Compiled method)\n"
             "\tjava.lang.Thread.sleep(Thread.java:Native method)\n"
             "HEAP DUMP BEGIN (3 objects, 96 bytes) ") +
         kDate +
         "\n"
         "ROOT 0 (kind=<thread>, id=200000, trace=300000)\n"
         "ROOT 50000150 (kind=<thread>, id=200001, trace=300001)\n"
         "ROOT 50000200 (kind=<Java stack>, thread=200001, frame=1)\n"
         "ROOT 50000300 (kind=<system class>, name=java.lang.Object)\n"
         "OBJ 50000200 (sz=24, trace=300001, class=Demo$Node@50000300)\n"
         "\tnext\t\t50000210\n"
         "\tverylongname\t50000220\n"
         "OBJ 50000210 (sz=24, trace=300001, class=Demo$Node@50000300)\n"
         "ARR 50000220 (sz=32, trace=300002, nelems=3, elem type=Demo$Node[]@50000310)\n"
         "\t[0]\t\t50000200\n"
         "\t[2]\t\t50000210\n"
         "ARR 50000230 (sz=80, trace=300002, nelems=16, elem type=int[])\n"
         "CLS 50000300 (name=Demo$Node, trace=300000)\n"
         "\tsuper\t\t50000320\n"
         "\tstatic ROOT\t50000200\n"
         "\tconstant pool entry 7\t50000230\n"
         "CLS 50000320 (name=java.lang.Object, trace=300000)\n"
         "HEAP DUMP END\n"
         "SITES BEGIN (ordered by live bytes) " +
         kDate +
         "\n"
         "          percent          live          alloc'ed  stack class\n"
         " rank   self  accum     bytes objs     bytes  objs trace name\n"
         "    1 66.67% 66.67%        64    2       128     4 300001 Demo$Node\n"
         "    2 33.33% 100.00%        32    1        32     1 300002 Demo$Node[]\n"
         "SITES END\n"
         "CPU SAMPLES BEGIN (total = 4) " +
         kDate +
         "\n"
         "rank   self  accum   count trace method\n"
         "   1 75.00% 75.00%       3 300002 Demo.work\n"
         "   2 25.00% 100.00%       1 300001 java.lang.Object.<init>\n"
         "CPU SAMPLES END\n"
         "MONITOR TIME BEGIN (total = 10 ms) " +
         kDate +
         "\n"
         "rank   self  accum   count trace monitor\n"
         "   1 100.00% 100.00%       2 300001 Demo$Lock (Java)\n"
         "MONITOR TIME END\n"
         "MONITOR DUMP BEGIN\n"
         "    THREAD 200001, trace 300001, status: MW\n"
         "    THREAD 200002, trace 300002, status: S|intr|CW\n"
         "    MONITOR LDemo$Lock;\n"
         "\towner: thread 200001, entry count: 1\n"
         "\twaiting to enter: thread 200002\n"
         "\twaiting to be notified:\n"
         "    MONITOR LDemo$Other;\n"
         "\towner: thread 200002, entry count: 2\n"
         "\twaiting to enter: thread 200001, <unknown thread>\n"
         "\twaiting to be notified:\n"
         "    MONITOR Ljava/lang/Object; unowned\n"
         "\twaiting to enter:\n"
         "\twaiting to be notified: thread 200002\n"
         "    DEADLOCK among 2 threads:\n"
         "\tthread 200001 (trace 300001) waits to enter MONITOR LDemo$Other;, owned by thread "
         "200002\n"
         "\tthread 200002 (trace 300002) waits to enter MONITOR LDemo$Lock;, owned by thread "
         "200001\n"
         "MONITOR DUMP END\n";
}

std::string Good() {
  return Header() + GoodBody();
}

// `text` with the first occurrence of `from` replaced by `to` (which must exist).
std::string Replace(const std::string& text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at == std::string::npos) return text;
  return text.substr(0, at) + to + text.substr(at + from.size());
}

// True when some error message contains `needle`.
bool Reports(const Profile& p, const std::string& needle) {
  for (const std::string& e : p.errors) {
    if (e.find(needle) != std::string::npos) return true;
  }
  return false;
}

TEST(ProfileParser, AcceptsAWellFormedProfileAndReadsItsRecords) {
  const Profile p = ParseProfile(Good());
  ASSERT_TRUE(p.ok()) << p.error_text();
  EXPECT_EQ(p.created, kDate);
  ASSERT_EQ(p.thread_starts.size(), 2u);
  EXPECT_EQ(p.thread_starts[1].name, "Worker, 1");
  EXPECT_EQ(p.thread_serial("main"), 200001u);
  ASSERT_EQ(p.thread_ends.size(), 1u);
  EXPECT_EQ(p.thread_ends[0].first, 200002u);
  ASSERT_EQ(p.traces.size(), 3u);
  EXPECT_TRUE(p.trace(300000)->frames.empty());
  EXPECT_EQ(p.trace(300001)->thread, 200001u);
  EXPECT_EQ(p.trace(300001)->frames[1].line, "Unknown line");
  EXPECT_EQ(p.top_method(300002), "Demo.work");
  EXPECT_EQ(p.trace(300002)->frames[0].source, "<Unknown Source>");
  EXPECT_EQ(p.trace(300002)->frames[1].line, "Native method");
  ASSERT_EQ(p.waits.size(), 3u);
  EXPECT_EQ(p.waits[0].kind, WaitRecord::kWait);
  EXPECT_EQ(p.waits[0].value, 20);
  EXPECT_EQ(p.waits[1].kind, WaitRecord::kWaited);
  EXPECT_EQ(p.waits[2].kind, WaitRecord::kSleep);
  EXPECT_EQ(p.waits[2].thread, 200002u);

  ASSERT_EQ(p.heap_dumps.size(), 1u);
  const HeapDump& d = p.heap_dumps[0];
  EXPECT_EQ(d.objects, 3u);
  EXPECT_EQ(d.roots.size(), 4u);
  ASSERT_NE(d.obj("50000200"), nullptr);
  EXPECT_EQ(d.obj("50000200")->fields.size(), 2u);
  EXPECT_EQ(d.obj("50000200")->fields[1].first, "verylongname");
  ASSERT_NE(d.arr("50000220"), nullptr);
  EXPECT_EQ(d.arr("50000220")->elements.size(), 2u);
  EXPECT_EQ(d.arr("50000220")->class_id, "50000310");
  EXPECT_EQ(d.arr("50000230")->elem_type, "int[]");
  ASSERT_NE(d.cls_named("Demo$Node"), nullptr);
  EXPECT_EQ(d.cls_named("Demo$Node")->statics.size(), 1u);
  EXPECT_EQ(d.cls_named("Demo$Node")->attrs.at("super"), "50000320");
  EXPECT_EQ(d.cls_named("Demo$Node")->constants.size(), 1u);
  EXPECT_EQ(d.objs_of_class("Demo$Node").size(), 2u);
  const auto dangling = d.dangling_references();
  EXPECT_TRUE(dangling.empty()) << dangling.size() << " " << (dangling.empty() ? "" : dangling[0]);

  ASSERT_EQ(p.sites.size(), 1u);
  ASSERT_EQ(p.sites[0].rows.size(), 2u);
  EXPECT_EQ(p.sites[0].rows[0].alloc_objs, 4u);
  ASSERT_EQ(p.cpu_samples.size(), 1u);
  EXPECT_EQ(p.cpu_samples[0].total, 4u);
  ASSERT_EQ(p.monitor_times.size(), 1u);
  EXPECT_EQ(p.monitor_times[0].rows[0].name, "Demo$Lock (Java)");
  ASSERT_EQ(p.monitor_dumps.size(), 1u);
  EXPECT_EQ(p.monitor_dumps[0].threads.size(), 2u);
  EXPECT_EQ(p.monitor_dumps[0].threads[1].status, "S|intr|CW");
  ASSERT_EQ(p.monitor_dumps[0].monitors.size(), 3u);
  EXPECT_EQ(p.monitor_dumps[0].monitors[1].entering.size(), 2u);
  EXPECT_FALSE(p.monitor_dumps[0].monitors[1].entering[1].has_value());
  ASSERT_EQ(p.monitor_dumps[0].deadlocks.size(), 1u);
  EXPECT_EQ(p.monitor_dumps[0].deadlocks[0][0].owner, 200002u);
  EXPECT_EQ(p.count("SITES"), 1u);
  EXPECT_EQ(p.sections.size(), 5u);
}

TEST(ProfileParser, ReportsDanglingHeapReferences) {
  const Profile p = ParseProfile(Replace(Good(), "\tnext\t\t50000210\n", "\tnext\t\t5000ffff\n"));
  ASSERT_TRUE(p.ok()) << p.error_text();
  const auto dangling = p.heap_dumps[0].dangling_references();
  ASSERT_EQ(dangling.size(), 1u);
  EXPECT_NE(dangling[0].find("next -> 5000ffff"), std::string::npos) << dangling[0];
}

TEST(ProfileParser, RejectsABadHeader) {
  EXPECT_TRUE(Reports(ParseProfile(Replace(Good(), "1.0.1", "1.0.2")), "header"));
  EXPECT_TRUE(Reports(ParseProfile(Replace(Good(), "Mon Nov 23", "Monday 23")), "header"));
  EXPECT_TRUE(Reports(ParseProfile(Replace(Good(), "--------\n", "-------\n")), "prelude"));
  EXPECT_TRUE(Reports(ParseProfile(""), "empty"));
}

TEST(ProfileParser, RejectsATruncatedFile) {
  const std::string text = Good();
  EXPECT_TRUE(Reports(ParseProfile(text.substr(0, text.size() - 10)), "line break"));
  // Cut after a complete line inside MONITOR DUMP: its END is missing.
  const std::string cut = text.substr(0, text.find("    DEADLOCK"));
  EXPECT_TRUE(Reports(ParseProfile(cut), "MONITOR DUMP BEGIN without MONITOR DUMP END"));
}

TEST(ProfileParser, RejectsUnbalancedSections) {
  EXPECT_TRUE(
      Reports(ParseProfile(Replace(Good(), "SITES END\n", "")), "SITES BEGIN without SITES END"));
  EXPECT_TRUE(Reports(ParseProfile(Good() + "CPU SAMPLES END\n"),
                      "CPU SAMPLES END without CPU SAMPLES BEGIN"));
  EXPECT_TRUE(Reports(ParseProfile(Replace(Good(), "HEAP DUMP END\n", "")),
                      "HEAP DUMP BEGIN without HEAP DUMP END"));
}

TEST(ProfileParser, RejectsUndefinedTraces) {
  // Each place a trace is referenced from.
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"TRACE 300000:\n\t<empty>\n", ""},                // ROOT, CLS
           {"4 300001 Demo$Node\n", "4 300009 Demo$Node\n"},  // SITES
           {"3 300002 Demo.work", "3 300007 Demo.work"},      // CPU SAMPLES
           {"2 300001 Demo$Lock", "2 300006 Demo$Lock"},      // MONITOR TIME
           {"(sz=24, trace=300001, class=Demo$Node@50000300)\n\tnext",
            "(sz=24, trace=300005, class=Demo$Node@50000300)\n\tnext"},          // OBJ
           {"trace=300002, nelems=16", "trace=300004, nelems=16"},               // ARR
           {"THREAD 200001, trace 300001", "THREAD 200001, trace 300003"},       // MONITOR DUMP
           {"thread 200002 (trace 300002)", "thread 200002 (trace 300008)"}}) {  // DEADLOCK
    const Profile p = ParseProfile(Replace(Good(), from, to));
    EXPECT_TRUE(Reports(p, "which is not defined")) << "after replacing " << from << "\n"
                                                    << p.error_text();
  }
  EXPECT_TRUE(Reports(ParseProfile(Good() + "TRACE 300001:\n\tA.b(A.java:1)\n"), "defined twice"));
}

TEST(ProfileParser, RejectsThreadsThatWereNotStarted) {
  EXPECT_TRUE(
      Reports(ParseProfile(Replace(Good(), "THREAD END (id = 200002)", "THREAD END (id = 200005)")),
              "thread 200005, which has no THREAD START"));
  EXPECT_TRUE(Reports(
      ParseProfile(Replace(Good(), "timeout=20, thread 200001", "timeout=20, thread 200000")),
      "thread 200000, which has no THREAD START"));
  EXPECT_TRUE(Reports(ParseProfile(Replace(Good(), "waiting to enter: thread 200002",
                                           "waiting to enter: thread 200004")),
                      "no THREAD START"));
  // Referenced before it started.
  const std::string late = Header() + "THREAD END (id = 200001)\n" + GoodBody();
  EXPECT_TRUE(Reports(ParseProfile(late), "before its THREAD START"));
  EXPECT_TRUE(Reports(ParseProfile(Good() + "THREAD END (id = 200002)\n"), "ended twice"));
}

TEST(ProfileParser, ChecksPercentages) {
  // accum is not the running sum of self.
  EXPECT_TRUE(Reports(ParseProfile(Replace(Good(), "    2 33.33% 100.00%", "    2 33.33% 99.00%")),
                      "is not the previous accum"));
  // The last accum above 100.
  EXPECT_TRUE(Reports(
      ParseProfile(Replace(Good(), "   2 25.00% 100.00%       1 300001 java.lang.Object.<init>",
                           "   2 26.00% 101.00%       1 300001 java.lang.Object.<init>")),
      "above 100.00%"));
  // CPU self% that is not count/total.
  EXPECT_TRUE(
      Reports(ParseProfile(Replace(Good(), "(total = 4)", "(total = 5)")), "is not count/total"));
  // Ranks out of sequence, rows out of order.
  EXPECT_TRUE(Reports(ParseProfile(Replace(Good(), "    2 33.33%", "    3 33.33%")), "rank 3"));
  const std::string unsorted =
      Replace(Replace(Good(), "    1 66.67% 66.67%        64    2       128     4 300001",
                      "    1 33.33% 33.33%        32    1       128     4 300001"),
              "    2 33.33% 100.00%        32    1        32     1 300002",
              "    2 66.67% 100.00%        64    2        64     2 300002");
  EXPECT_TRUE(Reports(ParseProfile(unsorted), "descending")) << ParseProfile(unsorted).error_text();
  // Rounding is tolerated: 33.33 + 33.33 + 33.33 = 99.99 printed as 100.00.
  const Profile rounded = ParseProfile(
      Replace(Good(),
              "    1 66.67% 66.67%        64    2       128     4 300001 Demo$Node\n"
              "    2 33.33% 100.00%        32    1        32     1 300002 Demo$Node[]\n",
              "    1 33.33% 33.33%        32    1       128     4 300001 Demo$Node\n"
              "    2 33.33% 66.67%        32    1        32     1 300002 Demo$Node[]\n"
              "    3 33.33% 100.00%        32    1        32     1 300002 Demo$Node[][]\n"));
  EXPECT_TRUE(rounded.ok()) << rounded.error_text();
}

TEST(ProfileParser, ChecksRowLayout) {
  EXPECT_TRUE(Reports(
      ParseProfile(Replace(Good(), "    1 66.67% 66.67%        64", "  1 66.67% 66.67%        64")),
      "layout"));
  EXPECT_TRUE(Reports(ParseProfile(Replace(Good(), "   1 75.00% 75.00%       3 300002 Demo.work",
                                           "   1 75.00% 75.00% 3 300002 Demo.work")),
                      "layout"));
  EXPECT_TRUE(Reports(ParseProfile(Replace(Good(), " rank   self  accum     bytes objs",
                                           " rank  self  accum     bytes objs")),
                      "column header"));
  EXPECT_TRUE(
      Reports(ParseProfile(Replace(Good(), "rank   self  accum   count trace method\n", "")),
              "no column header"));
  EXPECT_TRUE(Reports(
      ParseProfile(Replace(Good(), "    64    2       128     4", "   164    2        28     4")),
      "more live than allocated"));
}

TEST(ProfileParser, ChecksHeapDumpRecords) {
  // A short field name needs two TABs.
  EXPECT_TRUE(Reports(ParseProfile(Replace(Good(), "\tnext\t\t50000210", "\tnext\t50000210")),
                      "unrecognized line in HEAP DUMP"));
  // Records out of JDK 8's order (a ROOT after the instances).
  EXPECT_TRUE(
      Reports(ParseProfile(Replace(Good(), "CLS 50000320 (name=java.lang.Object, trace=300000)\n",
                                   "CLS 50000320 (name=java.lang.Object, trace=300000)\n"
                                   "ROOT 50000200 (kind=<busy monitor>)\n")),
              "JDK 8 order"));
  EXPECT_TRUE(Reports(ParseProfile(Replace(Good(), "ROOT 50000300 (kind=<system class>",
                                           "ROOT 50000300 (kind=<sticky class>")),
                      "ROOT kind"));
  EXPECT_TRUE(Reports(ParseProfile(Replace(Good(), "\t[2]\t\t50000210", "\t[3]\t\t50000210")),
                      "beyond nelems"));
  EXPECT_TRUE(Reports(ParseProfile(Replace(Good(), "elem type=int[]", "elem type=int")),
                      "not an array class name"));
  EXPECT_TRUE(Reports(ParseProfile(Replace(Good(), "OBJ 50000210 (sz=24", "OBJ 50000200 (sz=24")),
                      "dumped twice"));
}

TEST(ProfileParser, ChecksMonitorDump) {
  EXPECT_TRUE(Reports(ParseProfile(Replace(Good(), "status: MW", "status: XX")),
                      "unrecognized line in MONITOR DUMP"));
  EXPECT_TRUE(Reports(ParseProfile(Replace(Good(), "\towner: thread 200001, entry count: 1\n", "")),
                      "without an owner line"));
  EXPECT_TRUE(
      Reports(ParseProfile(Replace(Good(), "owned by thread 200001\n", "owned by thread 200002\n")),
              "not a cycle"));
  EXPECT_TRUE(
      Reports(ParseProfile(Replace(Good(), "DEADLOCK among 2", "DEADLOCK among 3")), "lists 2"));
}

TEST(ProfileParser, RejectsUnknownLines) {
  EXPECT_TRUE(Reports(ParseProfile(Good() + "garbage\n"), "unrecognized record"));
  EXPECT_TRUE(Reports(ParseProfile(Good() + "\n"), "unrecognized record"));
  // An event line in the middle of a section.
  EXPECT_TRUE(
      Reports(ParseProfile(Replace(Good(), "SITES END\n", "THREAD END (id = 200001)\nSITES END\n")),
              "unrecognized SITES row"));
  EXPECT_TRUE(Reports(ParseProfile(Replace(Good(), "\tDemo.main(Demo.java:Unknown line)",
                                           "\tDemo.main(Demo.java:Unknown)")),
                      "TRACE frame"));
  EXPECT_TRUE(Reports(ParseProfile(Replace(Good(), "WAIT: MONITOR Ljava/lang/Object;, timeout",
                                           "WAIT: MONITOR Ljava/lang/Object;, time_waited")),
                      "WAIT/WAITED"));
}

TEST(ProfileParser, WaitMonitorsAreJvmSignatures) {
  EXPECT_TRUE(Reports(ParseProfile(Replace(Good(), "WAIT: MONITOR Ljava/lang/Object;",
                                           "WAIT: MONITOR L<Unknown Class>;")),
                      "is not a JVM signature"));
  EXPECT_TRUE(Reports(ParseProfile(Replace(Good(), "WAIT: MONITOR Ljava/lang/Object;",
                                           "WAIT: MONITOR java.lang.Object")),
                      "is not a JVM signature"));
  EXPECT_TRUE(
      ParseProfile(Replace(Good(), "WAIT: MONITOR Ljava/lang/Object;", "WAIT: MONITOR [[I")).ok());
}

TEST(ProfileParser, CtimeDates) {
  EXPECT_TRUE(IsCtimeDate("Mon Nov 23 07:25:44 2026"));
  EXPECT_TRUE(IsCtimeDate("Tue Dec  1 17:05:04 2026"));
  EXPECT_FALSE(IsCtimeDate("Tue Dec 1 17:05:04 2026"));
  EXPECT_FALSE(IsCtimeDate("2026-11-23 07:25:44"));
}

}  // namespace
}  // namespace hproftest
