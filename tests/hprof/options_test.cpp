// SPDX-License-Identifier: Apache-2.0
// HPROF's options: every option of the help table accepted with its valid values and rejected
// with bad ones, help, _JAVA_HPROF_OPTIONS, file=, force=n, depth=, lineno=, cutoff=, doe=,
// verbose=, thread= and -Xrunhprof.
#include <sys/stat.h>

#include <map>
#include <mutex>

#include "hprof_test.h"

namespace hproftest {
namespace {

// The rows of JDK 8's option table, as the help screen starts them.
const std::vector<std::string> kHelpRows = {"heap=dump|sites|all",
                                            "cpu=samples|times|old",
                                            "monitor=y|n",
                                            "format=a|b",
                                            "file=<file>",
                                            "net=<host>:<port>",
                                            "depth=<size>",
                                            "interval=<ms>",
                                            "cutoff=<value>",
                                            "lineno=y|n",
                                            "thread=y|n",
                                            "doe=y|n",
                                            "msa=y|n",
                                            "force=y|n",
                                            "verbose=y|n",
                                            "directio=y|n",
                                            "gc_okay=y|n"};

// The help screen has a line starting with the row (followed by a blank or the line's end).
bool HasHelpRow(const std::string& text, const std::string& row) {
  return text.find("\n" + row + " ") != std::string::npos ||
         text.find("\n" + row + "\n") != std::string::npos;
}

bool IsNumberedLine(const std::string& line) {
  return !line.empty() && line.find_first_not_of("0123456789") == std::string::npos;
}

class OptionsTest : public HprofTest {
 protected:
  // The help screen of this JDK's run (`-agentlib:hprof=help`), once per process and JDK.
  std::string Help() {
    static std::mutex mutex;
    static std::map<int, std::string> cache;
    std::lock_guard lock(mutex);
    if (!cache.count(GetParam())) {
      TempDir scratch;
      const RunResult run = RunJava(jdk(), Command("help", "hproftest.Trivial"), scratch.path());
      cache[GetParam()] = run.out;
    }
    return cache[GetParam()];
  }

  // The VM starts with the option and the program runs to its end.
  void ExpectAccepted(const std::string& options) {
    SCOPED_TRACE("-agentlib:hprof=" + options);
    const RunResult run = Run(options, "hproftest.Trivial");
    EXPECT_TRUE(run.exited(0)) << run.describe();
    EXPECT_NE(run.out.find("RAN"), std::string::npos) << "the program did not run\n"
                                                      << run.describe();
  }

  // The VM does not start: stderr holds the help table and one line naming the option.
  void ExpectRejected(const std::string& options, const std::string& option_name,
                      bool with_help = true) {
    SCOPED_TRACE("-agentlib:hprof=" + options);
    const RunResult run = Run(options, "hproftest.Trivial");
    EXPECT_TRUE(run.exited_nonzero()) << "the VM should not start\n" << run.describe();
    EXPECT_EQ(run.out.find("RAN"), std::string::npos) << "the program ran\n" << run.describe();
    if (with_help) {
      for (const std::string& row : kHelpRows) {
        EXPECT_TRUE(HasHelpRow(run.err, row)) << "stderr lacks the help table row " << row << "\n"
                                              << run.describe();
      }
    }
    const auto extra = LinesOutsideHelp(run.err, Help());
    ASSERT_EQ(extra.size(), 1u) << "expected one error line besides the help table\n"
                                << run.describe();
    EXPECT_NE(extra[0].find(option_name), std::string::npos)
        << "the error line does not name " << option_name << ": " << extra[0];
  }

  void CheckOption(const std::string& name, const std::vector<std::string>& good,
                   const std::vector<std::string>& bad) {
    for (const std::string& v : good) ExpectAccepted(name + "=" + v);
    for (const std::string& v : bad) ExpectRejected(name + "=" + v, name);
  }
};

TEST_P(OptionsTest, HelpPrintsTheTableAndExitsZero) {
  const RunResult run = Run("help", "hproftest.Trivial");
  EXPECT_TRUE(run.exited(0)) << run.describe();
  EXPECT_EQ(run.out.find("RAN"), std::string::npos) << "help must not run the program";
  EXPECT_FALSE(FileExists(path("java.hprof.txt"))) << "help must not create the output file";
  EXPECT_NE(run.out.find("Option Name and Value"), std::string::npos) << run.describe();
  for (const std::string& row : kHelpRows) {
    EXPECT_TRUE(HasHelpRow(run.out, row)) << "help lacks " << row;
  }
  EXPECT_NE(run.out.find("cpu=samples,interval=20,depth=3"), std::string::npos)
      << "the first example";
  EXPECT_NE(run.out.find("-Xrunhprof"), std::string::npos) << "the -Xrun note";
}

TEST_P(OptionsTest, Heap) {
  CheckOption("heap", {"dump", "sites", "all"}, {"heapy", "", "Sites"});
}
TEST_P(OptionsTest, Cpu) {
  CheckOption("cpu", {"samples", "y", "times", "old"}, {"fast", "", "n"});
}
TEST_P(OptionsTest, Sampler) {
  CheckOption("sampler", {"cputime", "suspend"}, {"signal", "", "Suspend"});
}
TEST_P(OptionsTest, SampleNeedsHeapSitesAndBytes) {
  ExpectAccepted("heap=sites,sample=512k");
  ExpectAccepted("heap=sites,sample=65536");
  ExpectAccepted("heap=sites,sample=0");
  ExpectRejected("heap=sites,sample=12", "sample");
  ExpectRejected("heap=sites,sample=lots", "sample");
  ExpectRejected("heap=all,sample=512k", "sample");
  ExpectRejected("heap=sites,format=b,sample=1m", "sample");
}
TEST_P(OptionsTest, NetQueueTakesBytes) {
  ExpectAccepted("netqueue=64k");
  ExpectAccepted("netqueue=16m");
  ExpectRejected("netqueue=1k", "netqueue");
  ExpectRejected("netqueue=lots", "netqueue");
  ExpectRejected("netqueue=2048m", "netqueue");
}
TEST_P(OptionsTest, NetTlsAndTokenNeedNet) {
  ExpectRejected("nettls=ca.pem", "nettls");
  ExpectRejected("nettoken=token", "nettoken");
  ExpectRejected("net=127.0.0.1:7370,nettls=", "nettls");
}
// Refused while the agent loads, before any connection, with one line (no help table: the
// options were well-formed).
TEST_P(OptionsTest, NetBeyondLoopbackNeedsTls) {
  const RunResult run = Run("net=192.0.2.1:7370", "hproftest.Trivial");
  EXPECT_TRUE(run.exited_nonzero()) << run.describe();
  EXPECT_EQ(run.out.find("RAN"), std::string::npos) << run.describe();
  EXPECT_NE(run.err.find("is not a loopback address: give nettls="), std::string::npos)
      << run.describe();
}
TEST_P(OptionsTest, NetTokenFileMustBeReadableByItsOwnerOnly) {
  const std::string token = path("token");
  {
    std::FILE* f = std::fopen(token.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("s3cret\n", f);
    std::fclose(f);
  }
  ASSERT_EQ(chmod(token.c_str(), 0640), 0);
  const RunResult run = Run("net=127.0.0.1:1,nettoken=" + token, "hproftest.Trivial");
  EXPECT_TRUE(run.exited_nonzero()) << run.describe();
  EXPECT_EQ(run.out.find("RAN"), std::string::npos) << run.describe();
  EXPECT_NE(run.err.find("readable by nobody else (chmod 600"), std::string::npos)
      << run.describe();
}
TEST_P(OptionsTest, PeriodTakesSeconds) {
  ExpectAccepted("period=1");
  ExpectAccepted("cpu=samples,period=10");
  ExpectRejected("period=0", "period");
  ExpectRejected("period=ten", "period");
  ExpectRejected("period=86401", "period");
}
TEST_P(OptionsTest, LabelTakesKeyValuePairs) {
  ExpectAccepted("label=service=checkout;env=prod");
  ExpectAccepted("label=a=1,label=b=2");
  ExpectRejected("label=service", "label");
  ExpectRejected("label==prod", "label");
  ExpectRejected("label=ser vice=x", "label");
}
TEST_P(OptionsTest, Monitor) {
  CheckOption("monitor", {"y", "n"}, {"maybe", "yes", ""});
}
TEST_P(OptionsTest, Format) {
  CheckOption("format", {"a", "b"}, {"c", "binary"});
}
TEST_P(OptionsTest, File) {
  CheckOption("file", {"out.txt"}, {""});
}
TEST_P(OptionsTest, Depth) {
  CheckOption("depth", {"0", "1", "4", "100"}, {"-1", "x", "4x", ""});
}
TEST_P(OptionsTest, Interval) {
  CheckOption("interval", {"1", "10", "250"}, {"0", "-5", "abc"});
}
TEST_P(OptionsTest, Cutoff) {
  CheckOption("cutoff", {"0", "0.0001", "0.5", "1"}, {"abc", "-0.5", ""});
}
TEST_P(OptionsTest, YesNoOptions) {
  for (const std::string name :
       {"lineno", "thread", "doe", "msa", "force", "verbose", "directio"}) {
    CheckOption(name, {"y", "n"}, {"x", "yes", ""});
  }
}
TEST_P(OptionsTest, ObsoleteGcOkayIsAcceptedAndIgnored) {
  CheckOption("gc_okay", {"y", "n"}, {"x"});
}
TEST_P(OptionsTest, NetRejectsMalformedAddresses) {
  for (const std::string v : {"nohost", "localhost:", "localhost:notaport", "localhost:70000"}) {
    ExpectRejected("net=" + v, "net");
  }
}

TEST_P(OptionsTest, UnknownAndMalformedOptionsAreRejected) {
  ExpectRejected("bogus=1", "bogus");
  ExpectRejected("heap=sites,bogus=1", "bogus");
  ExpectRejected("averyveryverylongname=1", "averyveryverylongname");
  ExpectRejected("heap", "heap");
}

TEST_P(OptionsTest, ConflictingOptionsAreRejected) {
  ExpectRejected("format=b,monitor=y", "monitor");
  ExpectRejected("format=b,cpu=times", "cpu");
  ExpectRejected("format=b,cpu=old", "cpu");
}

TEST_P(OptionsTest, EnvironmentOptionsAreAppended) {
  // The environment's options are used ...
  JavaCommand c = Command("heap=sites", "hproftest.Trivial");
  c.env = {{"_JAVA_HPROF_OPTIONS", "file=fromenv.txt"}};
  RunResult run = Run(c);
  ASSERT_TRUE(run.exited(0)) << run.describe();
  EXPECT_FALSE(FileExists(path("java.hprof.txt"))) << "file= from the environment was ignored";
  const Profile p = ReadProfile("fromenv.txt");
  EXPECT_WELL_FORMED(p, run);
  EXPECT_EQ(p.count("SITES"), 1u) << "heap=sites from the command line was ignored";
  // ... after the command line's: the later depth wins.
  c = Command("heap=sites,depth=7,file=both.txt", "hproftest.Trivial");
  c.env = {{"_JAVA_HPROF_OPTIONS", "depth=1"}};
  run = Run(c);
  ASSERT_TRUE(run.exited(0)) << run.describe();
  const Profile q = ReadProfile("both.txt");
  EXPECT_WELL_FORMED(q, run);
  ASSERT_FALSE(q.traces.empty());
  for (const auto& [serial, t] : q.traces) {
    EXPECT_LE(t.frames.size(), 1u) << "TRACE " << serial << ": depth=1 from the environment";
  }
  // ... and checked like them.
  c = Command("heap=sites", "hproftest.Trivial");
  c.env = {{"_JAVA_HPROF_OPTIONS", "depth=oops"}};
  run = Run(c);
  EXPECT_TRUE(run.exited_nonzero()) << run.describe();
  EXPECT_NE(run.err.find("depth"), std::string::npos) << run.describe();
}

TEST_P(OptionsTest, FileWritesWhereTold) {
  ASSERT_EQ(mkdir(path("sub").c_str(), 0755), 0);
  const RunResult run = Run("heap=sites,file=sub/profile.out", "hproftest.Trivial");
  ASSERT_TRUE(run.exited(0)) << run.describe();
  EXPECT_FALSE(FileExists(path("java.hprof.txt")));
  const Profile p = ReadProfile("sub/profile.out");
  EXPECT_WELL_FORMED(p, run);
  EXPECT_EQ(p.count("SITES"), 1u);
}

TEST_P(OptionsTest, ForceYesReplacesAnExistingFile) {
  WriteFile(path("java.hprof.txt"), "OLD\n");
  const RunResult run = Run("heap=sites", "hproftest.Trivial");
  ASSERT_TRUE(run.exited(0)) << run.describe();
  const Profile p = ReadProfile();
  EXPECT_WELL_FORMED(p, run);
  EXPECT_EQ(p.count("SITES"), 1u);
}

TEST_P(OptionsTest, ForceNoKeepsAnExistingFileAndWritesNameDotPid) {
  WriteFile(path("java.hprof.txt"), "OLD\n");
  RunResult run = Run("heap=sites,force=n", "hproftest.Trivial");
  ASSERT_TRUE(run.exited(0)) << run.describe();
  EXPECT_EQ(ReadFile(path("java.hprof.txt")), "OLD\n") << "force=n overwrote the file";
  const std::string pid = std::to_string(run.pid);
  ASSERT_TRUE(FileExists(path("java.hprof." + pid + ".txt"))) << "no java.hprof." << pid << ".txt\n"
                                                              << run.describe();
  Profile p = ReadProfile("java.hprof." + pid + ".txt");
  EXPECT_WELL_FORMED(p, run);
  // A name without .txt gets <name>.<pid>.txt.
  WriteFile(path("prof"), "OLD\n");
  run = Run("heap=sites,force=n,file=prof", "hproftest.Trivial");
  ASSERT_TRUE(run.exited(0)) << run.describe();
  EXPECT_EQ(ReadFile(path("prof")), "OLD\n");
  const std::string name = "prof." + std::to_string(run.pid) + ".txt";
  ASSERT_TRUE(FileExists(path(name))) << "no " << name << "\n" << run.describe();
  p = ReadProfile(name);
  EXPECT_WELL_FORMED(p, run);
  // No existing file: force=n writes the name itself.
  run = Run("heap=sites,force=n,file=fresh.txt", "hproftest.Trivial");
  ASSERT_TRUE(run.exited(0)) << run.describe();
  EXPECT_TRUE(FileExists(path("fresh.txt"))) << run.describe();
}

TEST_P(OptionsTest, UnwritableFileIsOneClearErrorAndNoStart) {
  const std::string target = "/nonexistent-hprof-dir/x.txt";
  const RunResult run = Run("heap=sites,file=" + target, "hproftest.Trivial");
  EXPECT_TRUE(run.exited_nonzero()) << run.describe();
  EXPECT_EQ(run.out.find("RAN"), std::string::npos) << run.describe();
  const auto lines = LinesOutsideHelp(run.err, "");
  ASSERT_EQ(lines.size(), 1u) << "expected exactly one error line\n" << run.describe();
  EXPECT_NE(lines[0].find(target), std::string::npos) << "the error names the file: " << lines[0];
}

TEST_P(OptionsTest, DepthLimitsTraces) {
  RunResult run = Run("cpu=samples,heap=sites,depth=2", "hproftest.Trivial");
  ASSERT_TRUE(run.exited(0)) << run.describe();
  Profile p = ReadProfile();
  ASSERT_WELL_FORMED(p, run);
  size_t at_limit = 0;
  for (const auto& [serial, t] : p.traces) {
    EXPECT_LE(t.frames.size(), 2u) << "TRACE " << serial;
    at_limit += t.frames.size() == 2 ? 1 : 0;
  }
  EXPECT_GT(at_limit, 0u) << "no trace reaches depth 2";
  // depth=0: every trace is empty and there are no CPU samples.
  run = Run("cpu=samples,heap=sites,depth=0", "hproftest.Trivial");
  ASSERT_TRUE(run.exited(0)) << run.describe();
  p = ReadProfile();
  ASSERT_WELL_FORMED(p, run);
  for (const auto& [serial, t] : p.traces) EXPECT_TRUE(t.frames.empty()) << "TRACE " << serial;
  ASSERT_EQ(p.cpu_samples.size(), 1u);
  EXPECT_TRUE(p.cpu_samples[0].rows.empty()) << "depth=0 takes no CPU samples";
}

TEST_P(OptionsTest, LinenoNoPrintsUnknownLine) {
  RunResult run = Run("heap=sites,lineno=n", "hproftest.Trivial");
  ASSERT_TRUE(run.exited(0)) << run.describe();
  Profile p = ReadProfile();
  ASSERT_WELL_FORMED(p, run);
  size_t frames = 0;
  for (const auto& [serial, t] : p.traces) {
    for (const TraceFrame& f : t.frames) {
      ++frames;
      EXPECT_EQ(f.line, "Unknown line") << "TRACE " << serial << ": " << f.text;
    }
  }
  EXPECT_GT(frames, 0u);
  // The default prints line numbers.
  run = Run("heap=sites", "hproftest.Trivial");
  ASSERT_TRUE(run.exited(0)) << run.describe();
  p = ReadProfile();
  size_t numbered = 0;
  for (const auto& [serial, t] : p.traces) {
    for (const TraceFrame& f : t.frames) numbered += IsNumberedLine(f.line) ? 1 : 0;
  }
  EXPECT_GT(numbered, 0u) << "lineno=y (default) prints line numbers";
}

TEST_P(OptionsTest, CutoffTrimsRows) {
  RunResult run = Run("heap=sites,cutoff=0", "hproftest.Trivial");
  ASSERT_TRUE(run.exited(0)) << run.describe();
  Profile all = ReadProfile();
  ASSERT_WELL_FORMED(all, run);
  run = Run("heap=sites,cutoff=0.05", "hproftest.Trivial");
  ASSERT_TRUE(run.exited(0)) << run.describe();
  Profile trimmed = ReadProfile();
  ASSERT_WELL_FORMED(trimmed, run);
  ASSERT_EQ(all.sites.size(), 1u);
  ASSERT_EQ(trimmed.sites.size(), 1u);
  const auto& rows = trimmed.sites[0].rows;
  EXPECT_FALSE(rows.empty()) << "some site holds 5% of the live bytes";
  EXPECT_LT(rows.size(), all.sites[0].rows.size()) << "cutoff=0.05 trimmed nothing";
  for (const SiteRow& r : rows) EXPECT_GE(r.self, 4.995) << "rank " << r.rank;
  // The rows kept are the first rows of the untrimmed list.
  EXPECT_LE(rows.size(), 20u) << "at most 20 rows can each hold 5%";
}

TEST_P(OptionsTest, DoeNoWritesNoSectionsAtExit) {
  const RunResult run = Run("heap=all,cpu=samples,monitor=y,doe=n", "hproftest.Trivial");
  ASSERT_TRUE(run.exited(0)) << run.describe();
  const Profile p = ReadProfile();
  EXPECT_WELL_FORMED(p, run);
  EXPECT_TRUE(p.sections.empty()) << p.sections.size() << " sections with doe=n, the first "
                                  << p.sections[0].name;
  EXPECT_EQ(run.err.find("Dumping"), std::string::npos) << run.describe();
}

TEST_P(OptionsTest, VerboseControlsDumpingMessages) {
  RunResult run = Run("heap=sites", "hproftest.Trivial");
  ASSERT_TRUE(run.exited(0)) << run.describe();
  EXPECT_NE(run.err.find("Dumping allocation sites"), std::string::npos) << run.describe();
  run = Run("heap=sites,verbose=n", "hproftest.Trivial");
  ASSERT_TRUE(run.exited(0)) << run.describe();
  EXPECT_EQ(run.err.find("Dumping"), std::string::npos) << run.describe();
  EXPECT_EQ(ReadProfile().count("SITES"), 1u);
}

TEST_P(OptionsTest, ThreadYesPutsTheThreadInTraceHeaders) {
  RunResult run = Run("heap=sites,thread=y", "hproftest.Trivial");
  ASSERT_TRUE(run.exited(0)) << run.describe();
  Profile p = ReadProfile();
  ASSERT_WELL_FORMED(p, run);
  const auto main = p.thread_serial("main");
  size_t on_main = 0;
  for (const auto& [serial, t] : p.traces) {
    if (t.frames.empty()) continue;  // the empty trace belongs to no thread
    ASSERT_TRUE(t.thread.has_value()) << "TRACE " << serial << " lacks (thread=N)";
    on_main += t.thread == main ? 1 : 0;
  }
  EXPECT_GT(on_main, 0u) << "Trivial allocates on main";
  run = Run("heap=sites,thread=n", "hproftest.Trivial");
  ASSERT_TRUE(run.exited(0)) << run.describe();
  p = ReadProfile();
  for (const auto& [serial, t] : p.traces) EXPECT_FALSE(t.thread.has_value()) << serial;
}

TEST_P(OptionsTest, XrunhprofWorksLikeAgentlib) {
  JavaCommand c;
  c.vm_args = {"-Xrunhprof:heap=sites,depth=3"};
  c.main_class = "hproftest.Trivial";
  const RunResult run = Run(c);
  ASSERT_TRUE(run.exited(0)) << run.describe();
  EXPECT_NE(run.out.find("RAN"), std::string::npos);
  const Profile p = ReadProfile();
  ASSERT_WELL_FORMED(p, run);
  EXPECT_EQ(p.count("SITES"), 1u);
  for (const auto& [serial, t] : p.traces) EXPECT_LE(t.frames.size(), 3u) << serial;
  // And its errors are the same.
  c.vm_args = {"-Xrunhprof:heap=bad"};
  const RunResult bad = Run(c);
  EXPECT_TRUE(bad.exited_nonzero()) << bad.describe();
  EXPECT_EQ(bad.out.find("RAN"), std::string::npos);
}

TEST_P(OptionsTest, DefaultIsHeapAll) {
  const RunResult run = Run("", "hproftest.Trivial");
  ASSERT_TRUE(run.exited(0)) << run.describe();
  const Profile p = ReadProfile();
  ASSERT_WELL_FORMED(p, run);
  EXPECT_EQ(p.count("HEAP DUMP"), 1u);
  EXPECT_EQ(p.count("SITES"), 1u);
  EXPECT_EQ(p.count("CPU SAMPLES"), 0u);
  EXPECT_EQ(p.count("MONITOR TIME"), 0u);
}

// A full disk: the write error is reported once, the section is said to have failed (no "done."),
// and the program runs to its end. The device file is written to, never re-created: /dev/full and
// /dev/null are still character devices afterwards.
TEST_P(OptionsTest, FullDiskIsReportedNotDone) {
  const RunResult run = Run("heap=sites,cpu=samples,file=/dev/full", "hproftest.Trivial");
  EXPECT_TRUE(run.exited(0)) << run.describe();
  EXPECT_NE(run.out.find("RAN"), std::string::npos) << run.describe();
  EXPECT_NE(run.err.find("writing /dev/full failed"), std::string::npos) << run.describe();
  EXPECT_NE(run.err.find("failed: the report could not be written"), std::string::npos)
      << run.describe();
  EXPECT_EQ(run.err.find(" done."), std::string::npos) << run.describe();
  struct stat st {};
  ASSERT_EQ(stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/full was replaced";
}

TEST_P(OptionsTest, DeviceFileIsNotReplaced) {
  const RunResult run = Run("heap=sites,file=/dev/null", "hproftest.Trivial");
  EXPECT_TRUE(run.exited(0)) << run.describe();
  EXPECT_NE(run.err.find(" done."), std::string::npos) << run.describe();
  struct stat st {};
  ASSERT_EQ(stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/null was replaced";
}

INSTANTIATE_FOR_JDKS(OptionsTest);

}  // namespace
}  // namespace hproftest
