// SPDX-License-Identifier: Apache-2.0
// The profiles library on profiles whose answer is known: a hand-written java.hprof.txt and the
// same facts written as format=b by the formats library's writer must give the same stacks with
// exact counts; streams fed in pieces, cut off or corrupt keep what was complete.
#include "profiles.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "hprof_format.h"

namespace {

// Known answer: 3 traces; CPU samples 7 + 2 + 1 = 10; sites with known bytes/objects.
const char kText[] =
    "JAVA PROFILE 1.0.1, created Wed Nov 25 09:00:00 2026\n"
    "\n"
    "Header text: TRACE 1: and CPU SAMPLES BEGIN in the prelude must not count.\n"
    "CPU SAMPLES BEGIN (total = 99)\n"
    "--------\n"
    "\n"
    "THREAD START (obj=50000191, id = 200001, name=\"main\", group=\"main\")\n"
    "THREAD START (obj=50000192, id = 200002, name=\"odd \\\"name\\\", group=\", group=\"g\")\n"
    "TRACE 300001: (thread=200001)\n"
    "\tapp.Hot.spin(Hot.java:10)\n"
    "\tapp.Hot.run(Hot.java:5)\n"
    "\tapp.Main.main(Main.java:3)\n"
    "TRACE 300002: (thread=200001)\n"
    "\tapp.Cold.idle(<Unknown Source>:Unknown line)\n"
    "\tapp.Main.main(Main.java:4)\n"
    "TRACE 300003: (thread=200002)\n"
    "\tjava.lang.Object.wait(Object.java:Native method)\n"
    "THREAD END (id = 200002)\n"
    "SITES BEGIN (ordered by live bytes) Wed Nov 25 09:00:01 2026\n"
    "          percent          live          alloc'ed  stack class\n"
    " rank   self  accum     bytes objs     bytes  objs trace name\n"
    "    1 80.00% 80.00%      4000   10      8000    20 300001 byte[]\n"
    "    2 20.00% 100.00%      1000    5      3000    15 300002 app.Node\n"
    "SITES END\n"
    "CPU SAMPLES BEGIN (total = 10) Wed Nov 25 09:00:02 2026\n"
    "rank   self  accum   count trace method\n"
    "   1 70.00% 70.00%       7 300001 app.Hot.spin\n"
    "   2 20.00% 90.00%       2 300002 app.Cold.idle\n"
    "   3 10.00% 100.00%       1 300003 java.lang.Object.wait\n"
    "CPU SAMPLES END\n";

const char kCollapsedCpu[] =
    "app.Main.main;app.Cold.idle 2\n"
    "app.Main.main;app.Hot.run;app.Hot.spin 7\n"
    "java.lang.Object.wait 1\n";
const char kCollapsedAllocBytes[] =
    "app.Main.main;app.Cold.idle;app.Node 3000\n"
    "app.Main.main;app.Hot.run;app.Hot.spin;byte[] 8000\n";

profiles::JavaProfile Parse(std::string_view bytes, size_t piece = 0) {
  profiles::StreamReader r("test");
  if (piece == 0) {
    r.feed(bytes);
  } else {
    for (size_t i = 0; i < bytes.size(); i += piece) r.feed(bytes.substr(i, piece));
  }
  r.finish();
  return std::move(r.profile());
}

// The same profile as format=b, written by the formats library (a writer we did not write here).
// `sampler_note`: HPROF's CPU SAMPLER note to append (4-byte ids: its id is 0xFFFFFFFD).
std::string Binary(const char* sampler_note = nullptr) {
  hprof::MemorySink sink;
  {
    hprof::WriterOptions o;
    o.version = hprof::Version::k1_0_2;
    o.id_size = 4;
    hprof::BinaryWriter w(sink, o);
    hprof::Id next = 1;
    auto str = [&](std::string_view s) {
      w.utf8(next, s);
      return next++;
    };
    const hprof::Id main_class = str("app.Main"), hot = str("app.Hot"), cold = str("app.Cold"),
                    object = str("java.lang.Object"), node = str("app.Node");
    w.load_class({1, 1001, 0, main_class, 0});
    w.load_class({2, 1002, 0, hot, 0});
    w.load_class({3, 1003, 0, cold, 0});
    w.load_class({4, 1004, 0, object, 0});
    w.load_class({5, 1005, 0, node, 0});
    const hprof::Id mmain = str("main"), spin = str("spin"), run = str("run"), idle = str("idle"),
                    wait = str("wait"), sig = str("()V"), file = str("Main.java");
    w.stack_frame({1, spin, sig, file, 2, 10, 0});
    w.stack_frame({2, run, sig, file, 2, 5, 0});
    w.stack_frame({3, mmain, sig, file, 1, 3, 0});
    w.stack_frame({4, idle, sig, 0, 3, -1, 0});
    w.stack_frame({5, mmain, sig, file, 1, 4, 0});
    w.stack_frame({6, wait, sig, 0, 4, -3, 0});
    w.start_thread({200001, 1, 0, str("main"), str("main"), 0, 0});
    w.stack_trace({300001, 200001, {1, 2, 3}, 0});
    w.stack_trace({300002, 200001, {4, 5}, 0});
    w.stack_trace({300003, 200002, {6}, 0});
    hprof::AllocSites sites;
    sites.sites.push_back({0, 0, 300001, 4000, 10, 8000, 20});
    sites.sites.back().kind = 8;  // byte[]
    sites.sites.push_back({0, 5, 300002, 1000, 5, 3000, 15});
    w.alloc_sites(sites);
    hprof::CpuSamples cpu;
    cpu.total = 10;
    cpu.traces = {{7, 300001}, {2, 300002}, {1, 300003}};
    w.cpu_samples(cpu);
    if (sampler_note != nullptr) w.utf8(0xFFFFFFFDu, sampler_note);
    w.flush();
  }
  return std::string(sink.data().begin(), sink.data().end());
}

TEST(ProfilesText, KnownProfileGivesExactCollapsedStacks) {
  const auto p = Parse(kText);
  EXPECT_FALSE(p.binary);
  ASSERT_TRUE(p.cpu_samples.has_value());
  EXPECT_EQ(p.cpu_samples->total, 10u) << "the prelude's CPU SAMPLES BEGIN was taken";
  EXPECT_EQ(profiles::to_collapsed(profiles::stacks(p, profiles::Measure::kCpuSamples)),
            kCollapsedCpu);
  EXPECT_EQ(profiles::to_collapsed(profiles::stacks(p, profiles::Measure::kAllocBytes)),
            kCollapsedAllocBytes);
  EXPECT_EQ(profiles::to_collapsed(profiles::stacks(p, profiles::Measure::kLiveObjects)),
            "app.Main.main;app.Cold.idle;app.Node 5\n"
            "app.Main.main;app.Hot.run;app.Hot.spin;byte[] 10\n");
}

// heap=sites,sample=: the SITES header names the interval its estimates come from; exact SITES
// (JDK 8's header) carry none.
TEST(ProfilesText, SitesHeaderSaysWhetherCountsAreSampled) {
  EXPECT_EQ(Parse(kText).sites_sample_bytes, 0u);
  std::string sampled = kText;
  const std::string exact_header = "SITES BEGIN (ordered by live bytes) ";
  const size_t at = sampled.find(exact_header);
  ASSERT_NE(at, std::string::npos);
  sampled.replace(at, exact_header.size(),
                  "SITES BEGIN (ordered by live bytes, estimates from allocations sampled every "
                  "524288 bytes) ");
  const auto p = Parse(sampled);
  ASSERT_TRUE(p.sites.has_value());
  EXPECT_EQ(p.sites->size(), 2u);
  EXPECT_EQ(p.sites_sample_bytes, 524288u);
}

TEST(ProfilesText, FramesThreadsAndLineCodes) {
  const auto p = Parse(kText);
  ASSERT_EQ(p.traces.size(), 3u);
  const auto* t = p.trace(300001);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->thread, 200001u);
  ASSERT_EQ(t->frames.size(), 3u);
  EXPECT_EQ(t->frames[0], (profiles::Frame{"app.Hot.spin", "Hot.java", 10}));
  EXPECT_EQ(p.trace(300002)->frames[0].line, -1);
  EXPECT_EQ(p.trace(300003)->frames[0].line, -3);
  EXPECT_EQ(p.thread_name(200001), "main");
  EXPECT_EQ(p.thread_name(200002), "odd \\\"name\\\", group=") << "quotes inside the name";
  EXPECT_TRUE(p.threads.at(200002).ended);
  EXPECT_EQ(profiles::to_collapsed(profiles::stacks(p, profiles::Measure::kCpuSamples, true)),
            "thread main;app.Main.main;app.Cold.idle 2\n"
            "thread main;app.Main.main;app.Hot.run;app.Hot.spin 7\n"
            "thread odd \\\"name\\\", group=;java.lang.Object.wait 1\n");
}

TEST(ProfilesBinary, SameFactsAsFormatBGiveTheSameStacks) {
  const auto p = Parse(Binary());
  EXPECT_TRUE(p.binary);
  EXPECT_EQ(profiles::to_collapsed(profiles::stacks(p, profiles::Measure::kCpuSamples)),
            kCollapsedCpu);
  EXPECT_EQ(profiles::to_collapsed(profiles::stacks(p, profiles::Measure::kAllocBytes)),
            kCollapsedAllocBytes);
  EXPECT_EQ(p.thread_name(200001), "main");
}

TEST(ProfilesStream, AnySplitGivesTheSameProfile) {
  for (size_t piece : {1, 2, 7, 64, 4096}) {
    const auto t = Parse(kText, piece);
    EXPECT_EQ(profiles::to_collapsed(profiles::stacks(t, profiles::Measure::kCpuSamples)),
              kCollapsedCpu)
        << "text in pieces of " << piece;
    const auto b = Parse(Binary(), piece);
    EXPECT_EQ(profiles::to_collapsed(profiles::stacks(b, profiles::Measure::kAllocBytes)),
              kCollapsedAllocBytes)
        << "binary in pieces of " << piece;
  }
}

// A stream cut inside a section: finish() reports it, the complete sections before stay.
TEST(ProfilesStream, CutOffStreamKeepsCompleteSections) {
  for (const std::string& whole : {std::string(kText), Binary()}) {
    const std::string cut = whole.substr(0, whole.size() - 20);
    profiles::StreamReader r("cut");
    r.feed(cut);
    EXPECT_THROW(r.finish(), profiles::ProfileError);
    const auto& p = r.profile();
    ASSERT_TRUE(p.sites.has_value()) << (p.binary ? "binary" : "text");
    EXPECT_FALSE(p.cpu_samples.has_value()) << "a half-received section was taken";
    EXPECT_EQ(profiles::to_collapsed(profiles::stacks(p, profiles::Measure::kAllocBytes)),
              kCollapsedAllocBytes);
  }
}

TEST(ProfilesStream, CorruptInputIsOneLineErrorAndEarlierDataStays) {
  std::string bad = kText;
  bad.replace(bad.find("   2 20.00% 90.00%       2"), 26, "   2 20.00% 90.00%     xyz");
  profiles::StreamReader r("bad.txt");
  try {
    r.feed(bad);
    FAIL() << "corrupt row accepted";
  } catch (const profiles::ProfileError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos);
    EXPECT_NE(m.find("bad.txt:"), std::string::npos) << m;
  }
  EXPECT_TRUE(r.profile().sites.has_value());

  EXPECT_THROW(Parse("JAVA PROFILX 1.0.1"), profiles::ProfileError);
  EXPECT_THROW(Parse("GET / HTTP/1.1\r\n"), profiles::ProfileError);
  EXPECT_THROW(Parse(""), profiles::ProfileError);

  // Binary: a record whose length runs past the data is a truncation.
  std::string b = Binary();
  EXPECT_THROW(Parse(b.substr(0, 40)), profiles::ProfileError);
}

TEST(ProfilesStream, OversizedLineOrRecordIsRefusedWithoutBuffering) {
  profiles::StreamReader text("long", /*max_line=*/1000, /*max_record=*/1 << 20);
  text.feed("JAVA PROFILE 1.0.1, created x\n--------\n");
  EXPECT_THROW(text.feed(std::string(5000, 'A')), profiles::ProfileError);

  // A binary record announcing 3 GB: refused once more than max_record is buffered.
  std::string head = Binary().substr(0, 31);  // header: magic + NUL + id size + time
  ASSERT_EQ(head.substr(0, 18), "JAVA PROFILE 1.0.2");
  std::string rec = std::string("\x01", 1) + std::string(4, '\0') + "\xC0\x00\x00\x00";
  profiles::StreamReader bin("huge", 1000, /*max_record=*/1 << 16);
  bin.feed(head + rec);
  std::string chunk(1 << 14, 'x');
  bool refused = false;
  for (int i = 0; i < 16 && !refused; ++i) {
    try {
      bin.feed(chunk);
    } catch (const profiles::ProfileError& e) {
      refused = true;
      EXPECT_NE(std::string(e.what()).find("larger than"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(refused);
}

// Untrusted names: nothing from the profile appears unescaped in the HTML page.
TEST(ProfilesHtml, NamesFromTheProfileAreEscaped) {
  std::string text = kText;
  const std::string evil = "app.<img src=x onerror=alert(1)></script><script>alert(2)</script>";
  text.replace(text.find("app.Hot.spin(Hot"), 12, evil);
  const auto p = Parse(text);
  const std::string html = profiles::to_html(p, profiles::available_measures(p), "title <b>&</b>");
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("alert(2)</script>"), std::string::npos);
  EXPECT_NE(html.find("title &lt;b&gt;&amp;&lt;/b&gt;"), std::string::npos);
  EXPECT_NE(html.find("\\u003cimg src=x onerror=alert(1)\\u003e"), std::string::npos);
  // One data block, one script block, closed exactly once each.
  size_t closes = 0;
  for (size_t at = html.find("</script>"); at != std::string::npos;
       at = html.find("</script>", at + 1))
    ++closes;
  EXPECT_EQ(closes, 2u);
}

// The CPU-time sampler's counters: from the CPU SAMPLES BEGIN line (format=a) or HPROF's CPU
// SAMPLER note (format=b, a UTF8 record with the reserved id), onto the page; absent for JDK 8's
// plain line.
TEST(ProfilesSampler, CountersFromTheHeaderOrTheNoteReachThePage) {
  EXPECT_TRUE(Parse(kText).cpu_sampler.empty());
  std::string text = kText;
  const std::string plain = "CPU SAMPLES BEGIN (total = 10)";
  text.replace(text.find(plain), plain.size(),
               "CPU SAMPLES BEGIN (total = 10, signals = 12, taken = 9, recovered = 4, "
               "unattributable = 1, lost = 2)");
  const auto p = Parse(text);
  const std::map<std::string, uint64_t> want = {
      {"signals", 12}, {"taken", 9}, {"recovered", 4}, {"unattributable", 1}, {"lost", 2}};
  EXPECT_EQ(p.cpu_sampler, want);
  EXPECT_EQ(p.cpu_samples->total, 10u);
  const std::string html = profiles::to_html(p, profiles::available_measures(p), "t");
  EXPECT_NE(html.find("CPU sampler: 12 signals, 9 samples taken (4 recovered from stubs), 1 "
                      "unattributable, 2 lost"),
            std::string::npos);

  EXPECT_TRUE(Parse(Binary()).cpu_sampler.empty());
  EXPECT_EQ(Parse(Binary("CPU SAMPLER: signals=12 taken=9 recovered=4 unattributable=1 lost=2"))
                .cpu_sampler,
            want);
}

TEST(ProfilesFlameJson, TreeValuesAddUp) {
  const auto p = Parse(kText);
  const std::string j = profiles::flame_json(p, profiles::Measure::kCpuSamples);
  EXPECT_NE(j.find("\"total\":10"), std::string::npos) << j;
  EXPECT_NE(j.find("{\"c\":[{\"n\":\"app.Hot.spin\",\"v\":7}],\"n\":\"app.Hot.run\",\"v\":7}"),
            std::string::npos)
      << j;
}

}  // namespace

namespace {

// HPROF's MONITOR DUMP of two threads deadlocked on LockA and LockB (the known answer), with an
// unrelated waiter; the cycle is found from owners and waiters, not from HPROF's DEADLOCK lines.
TEST(ProfilesMonitors, DeadlockIsACycleOfTheWaitForGraph) {
  const char dump[] =
      "MONITOR DUMP BEGIN\n"
      "    THREAD 200007, trace 300001, status: MW\n"
      "    THREAD 200008, trace 300005, status: MW\n"
      "    THREAD 200006, trace 300002, status: CW\n"
      "    MONITOR Lapp/LockA;\n"
      "\towner: thread 200007, entry count: 1\n"
      "\twaiting to enter: thread 200008\n"
      "\twaiting to be notified:\n"
      "    MONITOR Lapp/LockB;\n"
      "\towner: thread 200008, entry count: 2\n"
      "\twaiting to enter: thread 200007\n"
      "\twaiting to be notified:\n"
      "    MONITOR Ljava/lang/ref/ReferenceQueue$Lock; unowned\n"
      "\twaiting to enter:\n"
      "\twaiting to be notified: thread 200006\n"
      "MONITOR DUMP END\n";
  const auto d = profiles::parse_monitor_dump(dump);
  ASSERT_EQ(d.threads.size(), 3u);
  EXPECT_EQ(d.threads[0].status, "MW");
  ASSERT_EQ(d.monitors.size(), 3u);
  EXPECT_EQ(d.monitors[1].signature, "Lapp/LockB;");
  EXPECT_EQ(d.monitors[1].owner, 200008u);
  EXPECT_EQ(d.monitors[1].entry_count, 2u);
  EXPECT_FALSE(d.monitors[2].owner.has_value());
  EXPECT_EQ(d.monitors[2].waiting_to_be_notified, std::vector<uint32_t>{200006});
  const auto cycles = profiles::deadlock_cycles(d);
  ASSERT_EQ(cycles.size(), 1u);
  using Step = std::pair<uint32_t, size_t>;
  EXPECT_EQ(cycles[0], (std::vector<Step>{{200007, 1}, {200008, 0}}));

  // No cycle when the owner of B is not waiting.
  std::string open = dump;
  open.replace(open.find("\twaiting to enter: thread 200008\n"), 33, "\twaiting to enter:\n");
  EXPECT_TRUE(profiles::deadlock_cycles(profiles::parse_monitor_dump(open)).empty());
}

}  // namespace

// net=: the agent's DROPPED lines carry running totals; the last one read counts.
TEST(ProfilesText, DroppedLinesGiveTheLatestTotals) {
  std::string text = kText;
  text += "DROPPED: 7 events (420 bytes) while the front end was not reading\n";
  text += "DROPPED: 12 events (700 bytes) while the front end was not reading\n";
  const auto p = Parse(text);
  EXPECT_EQ(p.dropped_events, 12u);
  EXPECT_EQ(p.dropped_bytes, 700u);
  profiles::StreamReader bad("bad");
  EXPECT_THROW(bad.feed("DROPPED: many events\n"), profiles::ProfileError);
}

// net= with format=b: the agent's DROPPED notes (UTF8 records under the all-ones name id) carry
// running totals; the last one counts. A name with the same text under an ordinary id (a thread a
// program named so) is a name, not a note.
TEST(ProfilesBinary, DroppedNotesGiveTheLatestTotals) {
  hprof::MemorySink sink;
  {
    hprof::WriterOptions o;
    o.version = hprof::Version::k1_0_2;
    o.id_size = 8;
    hprof::BinaryWriter w(sink, o);
    const hprof::Id note = ~uint64_t{0};
    w.utf8(note, "DROPPED: 7 events (420 bytes) while the front end was not reading");
    const std::string fake = "DROPPED: 99 events (1 bytes) while the front end was not reading";
    w.utf8(1, fake);
    w.utf8(2, "main");
    w.start_thread({200001, 1, 0, 1, 2, 0, 0});
    w.utf8(note, "DROPPED: 12 events (700 bytes) while the front end was not reading");
    w.flush();
  }
  const auto p = Parse(std::string(sink.data().begin(), sink.data().end()));
  EXPECT_EQ(p.dropped_events, 12u);
  EXPECT_EQ(p.dropped_bytes, 700u);
  ASSERT_EQ(p.threads.count(200001), 1u);
  EXPECT_EQ(p.threads.at(200001).name,
            "DROPPED: 99 events (1 bytes) while the front end was not reading");
}

// Two-column folded stacks: every stack either side has, the base scaled to the target's total.
TEST(ProfilesDiff, CollapsedColumnsAreNormalisedToTheTargetTotal) {
  using profiles::Stack;
  const std::vector<Stack> base = {{{"main", "a"}, 30, 0}, {{"main", "b"}, 10, 0}};
  const std::vector<Stack> target = {{{"main", "a"}, 20, 0}, {{"main", "c"}, 60, 0}};
  EXPECT_EQ(profiles::to_diff_collapsed(base, target),
            "main;a 60 20\n"
            "main;b 20 0\n"
            "main;c 0 60\n");
  EXPECT_EQ(profiles::to_diff_collapsed(base, target, /*normalise=*/false),
            "main;a 30 20\n"
            "main;b 10 0\n"
            "main;c 0 60\n");
}

namespace {

const char kPeriodBlock[] =
    "PERIOD BEGIN: seq=2 start=1000 end=2000\n"
    "CPU SAMPLES: total=9 rows=2\n"
    "300001 7\n"
    "300002 2\n"
    "SITES: rows=1\n"
    "300002 3000 15 1000 5 app.Node\n"
    "MONITOR TIME: total_ns=5000000 rows=1\n"
    "300003 4 5000000 app.Lock\n"
    "PERIOD END: seq=2\n";

// The known text profile with a PERIOD block and an IDENTITY line after its traces.
std::string TextWithPeriod() {
  std::string text = kText;
  const size_t at = text.find("THREAD END");
  text.insert(at, std::string("IDENTITY: pid=4711 host=web-3 main=app.Main vm=17.0.9 start=999 "
                              "labels=service=checkout;env=prod%20eu\n") +
                      kPeriodBlock);
  return text;
}

}  // namespace

TEST(ProfilesPeriod, BlockParsesIntoDeltasWithNamedRows) {
  const auto base = Parse(kText);
  profiles::PeriodDelta d;
  std::string why;
  ASSERT_TRUE(profiles::parse_period(kPeriodBlock, d, why, &base.traces)) << why;
  EXPECT_EQ(d.seq, 2u);
  EXPECT_EQ(d.start_ms, 1000);
  EXPECT_EQ(d.end_ms, 2000);
  ASSERT_TRUE(d.cpu_samples.has_value());
  EXPECT_EQ(d.cpu_samples->total, 9u);
  ASSERT_EQ(d.cpu_samples->rows.size(), 2u);
  EXPECT_EQ(d.cpu_samples->rows[0].name, "app.Hot.spin");
  ASSERT_TRUE(d.sites.has_value());
  EXPECT_EQ((*d.sites)[0].class_name, "app.Node");
  EXPECT_EQ((*d.sites)[0].alloc_objects, 15u);
  ASSERT_TRUE(d.monitor_time.has_value());
  EXPECT_EQ(d.monitor_time->rows[0].name, "app.Lock");
  EXPECT_EQ(d.monitor_time->rows[0].time_ns, 5000000u);
  EXPECT_EQ(d.monitor_time->total, 5u);  // ms
  EXPECT_FALSE(d.cpu_time.has_value());
  // One period as a profile: its rows, the traces they name, nothing else.
  const auto one = profiles::period_profile(base, d);
  EXPECT_EQ(profiles::to_collapsed(profiles::stacks(one, profiles::Measure::kCpuSamples)),
            "app.Main.main;app.Cold.idle 2\napp.Main.main;app.Hot.run;app.Hot.spin 7\n");
  EXPECT_EQ(one.traces.count(300003), 1u);
  EXPECT_EQ(one.traces.size(), 3u);
}

TEST(ProfilesPeriod, MalformedBlocksAreRefused) {
  profiles::PeriodDelta d;
  std::string why;
  std::string block = kPeriodBlock;
  // A row count that does not match, an END of another period, a missing END, a bad number.
  for (const auto& [from, to] :
       std::vector<std::pair<std::string, std::string>>{{"rows=2", "rows=3"},
                                                        {"PERIOD END: seq=2", "PERIOD END: seq=3"},
                                                        {"PERIOD END: seq=2\n", ""},
                                                        {"300001 7", "300001 x7"},
                                                        {"start=1000", "start="}}) {
    std::string bad = block;
    bad.replace(bad.find(from), from.size(), to);
    EXPECT_FALSE(profiles::parse_period(bad, d, why)) << bad;
    EXPECT_FALSE(why.empty());
  }
  // In a stream, a malformed block is a ProfileError, and what came before stays.
  std::string text = TextWithPeriod();
  text.replace(text.find("rows=2"), 6, "rows=9");
  profiles::StreamReader r("bad");
  EXPECT_THROW(r.feed(text), profiles::ProfileError);
  EXPECT_EQ(r.profile().traces.size(), 3u);
}

TEST(ProfilesPeriod, TextAndBinaryStreamsHandPeriodsOnInAnySplit) {
  // format=b: the same block in a UTF8 record with the PERIOD note's id (4-byte ids: 0xFFFFFFFC),
  // and the identity in the IDENTITY note's (0xFFFFFFFB), after the known binary profile.
  std::string binary = Binary();
  {
    hprof::MemorySink sink;
    hprof::WriterOptions o;
    o.version = hprof::Version::k1_0_2;
    o.id_size = 4;
    hprof::BinaryWriter w(sink, o);
    w.utf8(0xFFFFFFFBu,
           "IDENTITY: pid=4711 host=web-3 main=app.Main vm=17.0.9 start=999 "
           "labels=service=checkout;env=prod%20eu");
    w.utf8(0xFFFFFFFCu, kPeriodBlock);
    w.flush();
    // The records without their own header (magic and NUL, u4 id size, u8 time).
    const std::string extra(sink.data().begin(), sink.data().end());
    binary += extra.substr(std::strlen("JAVA PROFILE 1.0.2") + 1 + 4 + 8);
  }
  for (const std::string& stream : {TextWithPeriod(), binary}) {
    for (size_t piece : {size_t{0}, size_t{1}, size_t{7}}) {
      std::vector<profiles::PeriodDelta> got;
      profiles::StreamReader r("stream");
      r.on_period([&](const profiles::PeriodDelta& d) { got.push_back(d); });
      if (piece == 0) {
        r.feed(stream);
      } else {
        for (size_t i = 0; i < stream.size(); i += piece)
          r.feed(std::string_view(stream).substr(i, piece));
      }
      r.finish();
      ASSERT_EQ(got.size(), 1u) << "piece " << piece;
      EXPECT_EQ(got[0].seq, 2u);
      EXPECT_EQ(got[0].cpu_samples->rows[1].count, 2u);
      EXPECT_EQ(r.profile().periods, 1u);
      EXPECT_EQ(r.profile().last_period_end_ms, 2000);
      // The cumulative sections are untouched by the period.
      EXPECT_EQ(r.profile().cpu_samples->total, 10u);
      EXPECT_EQ(r.profile().agent_identity.at("pid"), "4711");
      EXPECT_EQ(r.profile().agent_identity.at("host"), "web-3");
      EXPECT_EQ(r.profile().agent_labels.at("service"), "checkout");
      EXPECT_EQ(r.profile().agent_labels.at("env"), "prod eu");
    }
  }
}
