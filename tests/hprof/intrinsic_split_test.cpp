// SPDX-License-Identifier: Apache-2.0
// cpu=samples (sampler=cputime) where the time goes into HotSpot's intrinsics: known answers from
// hproftest.IntrinsicSplit, whose main thread measures the CPU each of its work methods took.
// AsyncGetCallTrace cannot walk a thread stopped in a stub; the runtime walks again from the
// stub's Java caller. Without that, the samples in Math.sin, arraycopy, CRC32, ... were lost and
// the plain-Java method took their share. Also: the CPU SAMPLES header's counters, and "set depth"
// over net= reaching the runtime's sampler.
#include <cmath>
#include <map>
#include <regex>

#include "hprof_test.h"

#ifdef HPROF_TESTS_HAVE_FORMATS_READER
#include "hprof_format.h"
#endif

namespace hproftest {
namespace {

class IntrinsicSplitTest : public HprofTest {
 protected:
  void RunSplit(int interval_ms, int budget_ms);
};

// Fields "name=value" of the line starting with `tag` in `text`.
std::map<std::string, double> Fields(const std::string& text, const std::string& tag) {
  std::map<std::string, double> out;
  for (const std::string& line : SplitLines(text)) {
    if (line.rfind(tag, 0) != 0) continue;
    static const std::regex kField(R"((\w+)=(-?[0-9.]+))");
    for (auto it = std::sregex_iterator(line.begin(), line.end(), kField);
         it != std::sregex_iterator(); ++it) {
      out[(*it)[1]] = std::stod((*it)[2]);
    }
  }
  return out;
}

// The work method of IntrinsicSplit nearest the top of the trace ("trig", ...), or "".
std::string WorkMethod(const Trace& t) {
  static const std::string kPrefix = "hproftest.IntrinsicSplit.";
  for (const TraceFrame& f : t.frames) {
    if (f.method.rfind(kPrefix, 0) != 0) continue;
    const std::string name = f.method.substr(kPrefix.size());
    if (name != "main") return name;
  }
  return "";
}

void IntrinsicSplitTest::RunSplit(int interval_ms, int budget_ms) {
  JavaCommand command =
      Command("cpu=samples,interval=" + std::to_string(interval_ms) + ",thread=y,depth=16,cutoff=0",
              "hproftest.IntrinsicSplit", {std::to_string(budget_ms)});
  command.env.emplace_back("JVMPI_SAMPLER_STATS", "1");
  const RunResult run = Run(command);
  ASSERT_TRUE(run.exited(0)) << run.describe();
  const auto truth = Fields(run.out, "INTRINSICSPLIT");
  ASSERT_EQ(truth.count("cpu_ns"), 1u) << run.describe();
  const Profile p = ReadProfile();
  ASSERT_WELL_FORMED(p, run);
  ASSERT_EQ(p.cpu_samples.size(), 1u) << run.describe();
  const CostSection& section = p.cpu_samples[0];

  // The header's counters: every signal is a sample taken (a Java stack, possibly recovered), an
  // unattributable one (counted under <unknown Java frame> / <in VM code>) or a lost one. A signal
  // still in its handler when the report was written may be counted as received only.
  for (const char* counter : {"signals", "taken", "recovered", "unattributable"}) {
    ASSERT_EQ(section.sampler.count(counter), 1u)
        << "no " << counter << " in the CPU SAMPLES header";
  }
  const double signals = static_cast<double>(section.sampler.at("signals"));
  const double taken = static_cast<double>(section.sampler.at("taken"));
  const uint64_t lost = section.sampler.count("lost") ? section.sampler.at("lost") : 0;
  const uint64_t accounted =
      section.sampler.at("taken") + section.sampler.at("unattributable") + lost;
  EXPECT_LE(accounted, section.sampler.at("signals"));
  EXPECT_GE(accounted + 2, section.sampler.at("signals"));
  // Intrinsics are where the walker failed for 60-90 % of the signals before; recovered, the
  // samples with a Java stack are at least 95 % of the signals.
  EXPECT_GE(taken, 0.95 * signals) << section.sampler.at("recovered") << " recovered, "
                                   << section.sampler.at("unattributable") << " unattributable\n"
                                   << run.describe();
  EXPECT_GT(section.sampler.at("recovered"), 0u) << "no sample needed recovery: the program no "
                                                    "longer runs in intrinsics";

  const auto main_thread = p.thread_serial("main");
  ASSERT_TRUE(main_thread.has_value());
  // Main-thread samples per work method, and those of the loop's CPU: the work methods' and the
  // unattributable ones (which may have been taken in them). The start-up before the loop (class
  // initialization, the crypto provider) and the clock reads between calls are in neither.
  std::map<std::string, double> samples;
  double main_samples = 0;
  for (const CostRow& r : section.rows) {
    const Trace* t = p.trace(r.trace);
    ASSERT_NE(t, nullptr);
    if (t->thread != main_thread) continue;
    const std::string work = WorkMethod(*t);
    const std::string top = p.top_method(r.trace);
    const bool unattributable =
        top.rfind("<unknown Java frame>.", 0) == 0 || top.rfind("<in VM code>.", 0) == 0;
    if (work.empty() && !unattributable) continue;
    main_samples += static_cast<double>(r.count);
    samples[unattributable ? "<unattributable>" : work] += static_cast<double>(r.count);
  }
  ASSERT_GT(main_samples, 0) << run.describe();
  std::string shares;  // for the failure messages
  for (const auto& [m, n] : samples) {
    shares += " " + (m.empty() ? std::string("<none>") : m) + "=" +
              std::to_string(n / main_samples).substr(0, 5);
  }
  // Each method's share of those samples against its share of the loop's CPU (unattributable
  // samples count in the whole, so a lost share shows). 5 points, or 4.5 standard
  // errors of the binomial noise when the samples are too few for 5 points to hold on noise
  // alone (at 10 ms and 3 s: ~300 samples, one standard error ~2.2 points at a share of 1/6).
  double work_cpu = 0;
  for (const char* m : {"trig", "copy", "text", "crc", "aes", "ints"}) {
    work_cpu += truth.at(std::string("cpu_") + m);
  }
  int checked = 0;
  for (const char* m : {"trig", "copy", "text", "crc", "aes", "ints"}) {
    const double cpu = truth.at(std::string("cpu_") + m);
    if (truth.at(m) == 0) continue;  // no AES on this JDK
    ++checked;
    const double want = cpu / work_cpu;
    const double got = samples[m] / main_samples;
    const double tolerance = std::max(0.05, 4.5 * std::sqrt(want * (1 - want) / main_samples));
    EXPECT_NEAR(got, want, tolerance) << m << " at interval=" << interval_ms << " ms ("
                                      << main_samples << " samples; shares:" << shares << ")\n"
                                      << run.describe();
  }
  EXPECT_GE(checked, 5);
}

TEST_P(IntrinsicSplitTest, SharesOfIntrinsicMethodsAt10ms) {
  RunSplit(10, 3000);
}

TEST_P(IntrinsicSplitTest, SharesOfIntrinsicMethodsAt1ms) {
  RunSplit(1, 1500);
}

// "set depth" (net= CONTROL 7) reaches the runtime's sampler: started at depth 1, the samples after
// the command carry the deeper stacks.
TEST_P(IntrinsicSplitTest, SetDepthOverNetChangesTheSamplersDepth) {
  LoopbackReceiver front_end;
  JavaProcess jvm(jdk(),
                  Command("cpu=samples,interval=1,depth=1,cutoff=0,net=127.0.0.1:" +
                              std::to_string(front_end.port()),
                          "hproftest.IntrinsicSplit", {"1500"}),
                  dir().path());
  ASSERT_TRUE(front_end.accept_one(60)) << "HPROF did not connect\n" << jvm.wait().describe();
  // main() runs after JVM_INIT_DONE, where the sampler started at depth 1.
  ASSERT_TRUE(jvm.wait_for_stdout("INTRINSICSPLIT STARTED")) << jvm.wait().describe();
  // CONTROL (0x08), serial, length 4; sub-command 7 "set depth", u2 depth 6.
  const std::string set_depth("\x08\0\0\0\0\0\0\0\x04\0\x07\0\x06", 13);
  front_end.send(set_depth);
  const std::string stream = front_end.read_to_eof(jvm);
  const RunResult run = jvm.wait();
  ASSERT_TRUE(run.exited(0)) << run.describe();
  const Profile p = ParseProfile(stream);
  ASSERT_WELL_FORMED(p, run);
  ASSERT_EQ(p.cpu_samples.size(), 1u) << run.describe();
  size_t deepest = 0;
  for (const CostRow& r : p.cpu_samples[0].rows) {
    const Trace* t = p.trace(r.trace);
    ASSERT_NE(t, nullptr);
    deepest = std::max(deepest, t->frames.size());
  }
  // main -> a work method -> the library method it calls: 3 frames at least once deeper than 1.
  EXPECT_GE(deepest, 3u) << "the samples kept the depth the sampler started with\n"
                         << run.describe();
}

#ifdef HPROF_TESTS_HAVE_FORMATS_READER
// format=b: the counters come as the CPU SAMPLER note, which this library's reader parses, beside a
// CPU SAMPLES record whose total they account for.
TEST_P(IntrinsicSplitTest, BinaryReportCarriesTheSamplerNote) {
  const RunResult run =
      Run("cpu=samples,interval=1,format=b,file=out.hprof", "hproftest.IntrinsicSplit", {"1500"});
  ASSERT_TRUE(run.exited(0)) << run.describe();
  const hprof::Profile p = hprof::read_file(path("out.hprof"));
  ASSERT_EQ(p.cpu_samples.size(), 1u);
  const auto note = hprof::sampler_note(p);
  ASSERT_TRUE(note.has_value()) << "no CPU SAMPLER note";
  EXPECT_GT(note->signals, 0u);
  EXPECT_LE(note->taken + note->unattributable + note->lost, note->signals);
  EXPECT_GE(note->taken + note->unattributable + note->lost + 2, note->signals);
  EXPECT_GE(static_cast<double>(note->taken), 0.95 * static_cast<double>(note->signals));
  EXPECT_GT(note->recovered, 0u);
}
#endif

INSTANTIATE_FOR_JDKS(IntrinsicSplitTest);

}  // namespace
}  // namespace hproftest
