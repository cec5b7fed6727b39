// SPDX-License-Identifier: Apache-2.0
// However the program ends, the profile is complete and well formed: normal end, System.exit(3),
// an uncaught exception, SIGTERM, OutOfMemoryError; and SIGQUIT dumps mid-run.
#include <signal.h>

#include <algorithm>

#include "hprof_test.h"

namespace hproftest {
namespace {

const char* const kAllModes = "heap=all,cpu=samples,monitor=y";
const std::vector<std::string> kAllSections = {"HEAP DUMP", "SITES", "CPU SAMPLES", "MONITOR TIME",
                                               "MONITOR DUMP"};

class ExitTest : public HprofTest {
 protected:
  // The profile parses, and each requested section is there `times` times.
  void ExpectComplete(const RunResult& run, size_t times = 1) {
    const Profile p = ReadProfile();
    EXPECT_WELL_FORMED(p, run);
    for (const std::string& s : kAllSections) {
      EXPECT_EQ(p.count(s), times) << s << " sections\n" << run.describe();
    }
    const auto main = p.thread_serial("main");
    EXPECT_TRUE(main.has_value()) << "no THREAD START for main";
  }
};

TEST_P(ExitTest, NormalEnd) {
  const RunResult run = Run(kAllModes, "hproftest.ExitPaths", {"normal"});
  ASSERT_TRUE(run.exited(0)) << run.describe();
  ASSERT_NE(run.out.find("END normal"), std::string::npos) << run.describe();
  ExpectComplete(run);
}

TEST_P(ExitTest, SystemExitKeepsItsCode) {
  const RunResult run = Run(kAllModes, "hproftest.ExitPaths", {"exit3"});
  ASSERT_TRUE(run.exited(3)) << run.describe();
  ExpectComplete(run);
}

TEST_P(ExitTest, UncaughtExceptionInMain) {
  const RunResult run = Run(kAllModes, "hproftest.ExitPaths", {"throw"});
  ASSERT_TRUE(run.exited(1)) << run.describe();
  EXPECT_NE(run.err.find("IllegalStateException: uncaught on purpose"), std::string::npos)
      << run.describe();
  ExpectComplete(run);
}

TEST_P(ExitTest, Sigterm) {
  JavaProcess jvm(jdk(), Command(kAllModes, "hproftest.ExitPaths", {"block"}), dir().path());
  ASSERT_TRUE(jvm.wait_for_stdout("READY")) << jvm.wait().describe();
  jvm.signal(SIGTERM);
  const RunResult run = jvm.wait();
  // The JVM's SIGTERM handler runs the shutdown and exits with 128 + 15.
  ASSERT_TRUE(run.exited(143)) << run.describe();
  ExpectComplete(run);
}

TEST_P(ExitTest, OutOfMemoryErrorEndsMain) {
  // cutoff=0: once main has ended the hoard is garbage, and a GC before the exit dump may leave
  // its site with 0 live bytes, which the default cutoff (of live bytes) would not list.
  const RunResult run =
      Run(std::string(kAllModes) + ",cutoff=0", "hproftest.ExitPaths", {"oom"}, {"-Xmx48m"});
  ASSERT_TRUE(run.exited(1)) << run.describe();
  EXPECT_NE(run.err.find("java.lang.OutOfMemoryError"), std::string::npos) << run.describe();
  ExpectComplete(run);
  // The hoard of long[65536] arrays (at least 16 of them fit in 48 MB) is in the sites.
  const Profile p = ReadProfile();
  bool hoard = false;
  for (const SitesSection& s : p.sites) {
    for (const SiteRow& r : s.rows) {
      hoard |= r.class_name == "long[]" && r.alloc_bytes >= 16u * 65536 * 8 &&
               p.top_method(r.trace) == "hproftest.ExitPaths.main";
    }
  }
  EXPECT_TRUE(hoard) << "no long[] site in ExitPaths.main that allocated the hoard";
}

// The heap stays full to the end: without the runtime's heap reserve HotSpot cannot create the
// DestroyJavaVM thread, posts no VMDeath, and every section was lost (0-byte file).
TEST_P(ExitTest, OutOfMemoryErrorWithTheHeapStillFull) {
  const RunResult run =
      Run(std::string(kAllModes) + ",cutoff=0", "hproftest.ExitPaths", {"oom-full"}, {"-Xmx48m"});
  ASSERT_TRUE(run.exited(1)) << run.describe();
  EXPECT_NE(run.err.find("java.lang.OutOfMemoryError"), std::string::npos) << run.describe();
  ExpectComplete(run);
  // The hoard is alive in the dump: at least 16 long[65536] arrays.
  const Profile p = ReadProfile();
  uint64_t hoard_live = 0;
  for (const SitesSection& s : p.sites) {
    for (const SiteRow& r : s.rows) {
      if (r.class_name == "long[]" && p.top_method(r.trace) == "hproftest.ExitPaths.main") {
        hoard_live = std::max<uint64_t>(hoard_live, r.live_bytes);
      }
    }
  }
  EXPECT_GE(hoard_live, 16u * 65536 * 8) << "the live hoard is missing from SITES";
}

// SIGQUIT mid-run writes the sections while the program still runs; they are written again at
// exit.
TEST_P(ExitTest, SigquitDumpsMidRunAndAgainAtExit) {
  JavaProcess jvm(jdk(), Command(kAllModes, "hproftest.Blocker"), dir().path());
  ASSERT_TRUE(jvm.wait_for_stdout("READY")) << jvm.wait().describe();
  jvm.signal(SIGQUIT);
  const std::string file = path("java.hprof.txt");
  const bool dumped = jvm.wait_until([&] {
    const std::string text = ReadFile(file);
    return text.find("MONITOR DUMP END\n") != std::string::npos;
  });
  ASSERT_TRUE(dumped) << "no dump after SIGQUIT\n" << jvm.wait().describe();
  ASSERT_TRUE(jvm.running()) << "the program ended: the dump was not mid-run";
  EXPECT_EQ(jvm.stdout_so_far().find("GOT"), std::string::npos);
  // The mid-run file is already well formed with every section once.
  const Profile mid = ParseProfile(ReadFile(file));
  EXPECT_TRUE(mid.ok()) << "mid-run java.hprof.txt:\n" << Problems(mid);
  for (const std::string& s : kAllSections) EXPECT_EQ(mid.count(s), 1u) << s << " mid-run";

  jvm.write_stdin("go\n");
  const RunResult run = jvm.wait();
  ASSERT_TRUE(run.exited(0)) << run.describe();
  EXPECT_NE(run.out.find("GOT go"), std::string::npos);
  ExpectComplete(run, 2);
}

TEST_P(ExitTest, TwoSigquitsGiveTwoDumps) {
  JavaProcess jvm(jdk(), Command("heap=sites,cpu=samples", "hproftest.Blocker"), dir().path());
  ASSERT_TRUE(jvm.wait_for_stdout("READY")) << jvm.wait().describe();
  const std::string file = path("java.hprof.txt");
  auto sites_ends = [&] {
    const std::string text = ReadFile(file);
    size_t n = 0;
    for (size_t at = text.find("CPU SAMPLES END\n"); at != std::string::npos;
         at = text.find("CPU SAMPLES END\n", at + 1)) {
      ++n;
    }
    return n;
  };
  for (size_t i = 1; i <= 2; ++i) {
    jvm.signal(SIGQUIT);
    ASSERT_TRUE(jvm.wait_until([&] { return sites_ends() >= i; })) << "dump " << i;
  }
  jvm.write_stdin("go\n");
  const RunResult run = jvm.wait();
  ASSERT_TRUE(run.exited(0)) << run.describe();
  const Profile p = ReadProfile();
  EXPECT_WELL_FORMED(p, run);
  EXPECT_EQ(p.count("SITES"), 3u);
  EXPECT_EQ(p.count("CPU SAMPLES"), 3u);
}

INSTANTIATE_FOR_JDKS(ExitTest);

}  // namespace
}  // namespace hproftest
