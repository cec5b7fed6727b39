// SPDX-License-Identifier: Apache-2.0
// A small server's shape (java/hprof-tests/hproftest/ServerLoad.java: worker threads burning CPU,
// allocating at one site and taking a shared lock) under every HPROF mode with 1, 8 and 32
// threads: each run completes and its report names the known hot method, allocation site and
// contended lock, and exact heap=sites counts every allocation of every thread. Also the net=
// default: heap=sites streams sampled counts unless sample=0 asks for exact ones.
#include <algorithm>
#include <set>

#include "hprof_test.h"

namespace hproftest {
namespace {

// ServerLoad's arguments: ITERATIONS requests of RECORDS Records each, KEEP kept per worker.
constexpr uint64_t kIterations = 9600;
constexpr int kSpin = 20000;
constexpr uint64_t kRecordsPerRequest = 4;
constexpr uint64_t kRecords = kIterations * kRecordsPerRequest;
constexpr uint64_t kKeepPerThread = 16;
// Sampled runs keep 4800 Records per thread (153 KB live or more): SITES lists sites by live bytes
// and cuts off small ones, and a site must be live to be listed.
constexpr uint64_t kSampledKeepPerThread = 4800;
constexpr uint64_t kRecordSize = 32;  // 12-byte header + two longs, aligned to 8
constexpr int kThreadCounts[] = {1, 8, 32};

const char* const kHotMethod = "hproftest.ServerLoad.cpuWork";
const char* const kRecordClass = "hproftest.ServerLoad$Record";
const char* const kLockRow = "hproftest.ServerLoad$SharedLock (Java)";

class ServerLoadTest : public HprofTest {
 protected:
  // Runs ServerLoad with `threads` workers, each keeping its last `keep` Records, under
  // `options`; the profile it wrote.
  Profile RunLoad(const std::string& options, int threads, uint64_t keep = kKeepPerThread) {
    const RunResult run =
        Run(options, "hproftest.ServerLoad",
            {std::to_string(threads), std::to_string(kIterations), std::to_string(kSpin),
             std::to_string(kRecordsPerRequest), std::to_string(keep)});
    EXPECT_TRUE(run.exited(0)) << run.describe();
    const uint64_t kept = std::min<uint64_t>(threads * keep, kRecords);
    const std::string done = "SERVERLOAD threads=" + std::to_string(threads) +
                             " records=" + std::to_string(kRecords) +
                             " kept=" + std::to_string(kept);
    EXPECT_NE(run.out.find(done), std::string::npos) << run.describe();
    Profile p = ReadProfile();
    EXPECT_WELL_FORMED(p, run);
    return p;
  }
};

// The hot method heads the CPU section: cpuWork is nearly all of the program's CPU (about 1 s of
// xorshift against a few ms of allocation and locking per thread count).
void ExpectHotMethod(const std::vector<CostSection>& sections, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(sections.size(), 1u);
  ASSERT_FALSE(sections[0].rows.empty()) << "no rows";
  EXPECT_EQ(sections[0].rows[0].name, kHotMethod);
}

// The Record site: one site (every worker's trace is the same without thread=y), holding every
// allocation when exact; estimates within bounds when sampled.
void ExpectRecordSite(const Profile& p, int threads, bool exact) {
  ASSERT_EQ(p.sites.size(), 1u);
  EXPECT_EQ(p.sites[0].estimated, !exact) << "the SITES header says whether counts are estimates";
  std::vector<const SiteRow*> rows;
  for (const SiteRow& r : p.sites[0].rows) {
    if (r.class_name == kRecordClass) rows.push_back(&r);
  }
  ASSERT_EQ(rows.size(), 1u) << "expected exactly one site of " << kRecordClass;
  const SiteRow& site = *rows[0];
  EXPECT_EQ(p.top_method(site.trace), "hproftest.ServerLoad.allocateRecords");
  if (exact) {
    EXPECT_EQ(site.alloc_objs, kRecords) << "every allocation of every thread is counted";
    EXPECT_EQ(site.alloc_bytes, kRecords * kRecordSize);
    // The kept Records are live; dropped ones leave as their frees arrive.
    EXPECT_GE(site.live_objs, threads * kKeepPerThread);
    EXPECT_LE(site.live_objs, kRecords);
    return;
  }
  // sample=8k over kRecords * 32 bytes (1.2 MB): about 150 samples, Poisson, so the estimate's
  // relative error has a standard deviation of about 1/sqrt(150) = 8%; +-50% is over 6 of them.
  // (The row itself needs a live sample: 153 KB live at least, about 19 samples expected.)
  const double expected = static_cast<double>(kRecords * kRecordSize);
  EXPECT_GT(static_cast<double>(site.alloc_bytes), 0.5 * expected);
  EXPECT_LT(static_cast<double>(site.alloc_bytes), 1.5 * expected);
}

// The lock: every worker's first entry was contended (main held the lock until all of them were
// blocked on it), in lockedUpdate.
void ExpectContendedLock(const Profile& p, int threads) {
  ASSERT_EQ(p.monitor_times.size(), 1u);
  uint64_t count = 0;
  std::set<std::string> tops;
  for (const CostRow& r : p.monitor_times[0].rows) {
    if (r.name != kLockRow) continue;
    count += r.count;
    tops.insert(p.top_method(r.trace));
  }
  EXPECT_GE(count, static_cast<uint64_t>(threads)) << "contended entries of SharedLock";
  EXPECT_TRUE(tops.count("hproftest.ServerLoad.lockedUpdate")) << "the contending trace";
}

void ExpectRecordsInDump(const Profile& p, int threads) {
  ASSERT_EQ(p.heap_dumps.size(), 1u);
  EXPECT_GE(p.heap_dumps[0].objs_of_class(kRecordClass).size(), threads * kKeepPerThread)
      << "the kept Records are in the heap dump";
}

TEST_P(ServerLoadTest, CpuSamplesFindTheHotMethod) {
  for (int threads : kThreadCounts) {
    SCOPED_TRACE("threads=" + std::to_string(threads));
    ExpectHotMethod(RunLoad("cpu=samples", threads).cpu_samples, "cpu=samples");
  }
}

TEST_P(ServerLoadTest, CpuTimesFindTheHotMethod) {
  for (int threads : kThreadCounts) {
    SCOPED_TRACE("threads=" + std::to_string(threads));
    ExpectHotMethod(RunLoad("cpu=times", threads).cpu_times, "cpu=times");
  }
}

TEST_P(ServerLoadTest, MonitorFindsTheContendedLock) {
  for (int threads : kThreadCounts) {
    SCOPED_TRACE("threads=" + std::to_string(threads));
    ExpectContendedLock(RunLoad("monitor=y", threads), threads);
  }
}

TEST_P(ServerLoadTest, ExactSitesCountEveryAllocationOfEveryThread) {
  for (int threads : kThreadCounts) {
    SCOPED_TRACE("threads=" + std::to_string(threads));
    ExpectRecordSite(RunLoad("heap=sites", threads), threads, true);
  }
}

TEST_P(ServerLoadTest, SampledSitesEstimateTheSite) {
  for (int threads : kThreadCounts) {
    SCOPED_TRACE("threads=" + std::to_string(threads));
    ExpectRecordSite(RunLoad("heap=sites,sample=8k", threads, kSampledKeepPerThread), threads,
                     false);
  }
}

TEST_P(ServerLoadTest, HeapDumpHoldsTheKeptRecords) {
  ExpectRecordsInDump(RunLoad("heap=dump", 8), 8);
}

TEST_P(ServerLoadTest, HeapAllHasSitesAndDump) {
  const Profile p = RunLoad("heap=all", 32);
  ExpectRecordsInDump(p, 32);
  ExpectRecordSite(p, 32, true);
}

TEST_P(ServerLoadTest, EveryModeAtOnceWith32Threads) {
  const Profile p = RunLoad("cpu=samples,heap=sites,monitor=y", 32);
  ExpectHotMethod(p.cpu_samples, "cpu=samples");
  ExpectRecordSite(p, 32, true);
  ExpectContendedLock(p, 32);
}

TEST_P(ServerLoadTest, EverySampledModeAtOnceWith32Threads) {
  const Profile p =
      RunLoad("cpu=samples,heap=sites,sample=8k,monitor=y", 32, kSampledKeepPerThread);
  ExpectHotMethod(p.cpu_samples, "cpu=samples");
  ExpectRecordSite(p, 32, false);
  ExpectContendedLock(p, 32);
}

// net=: what heap=sites streams by default, and sample=0.
class NetSitesDefaultTest : public HprofTest {
 protected:
  Profile Stream(const std::string& options) {
    LoopbackReceiver receiver;
    const std::string net = "net=127.0.0.1:" + std::to_string(receiver.port());
    JavaProcess jvm(jdk(), Command(options + "," + net, "hproftest.ServerLoad", {"8"}),
                    dir().path());
    EXPECT_TRUE(receiver.accept_one(60)) << "HPROF did not connect\n" << jvm.wait().describe();
    const std::string text = receiver.read_to_eof(jvm);
    const RunResult run = jvm.wait();
    EXPECT_TRUE(run.exited(0)) << run.describe();
    Profile p = ParseProfile(text);
    EXPECT_WELL_FORMED(p, run);
    return p;
  }
};

TEST_P(NetSitesDefaultTest, HeapSitesStreamsSampledCountsByDefault) {
  const Profile p = Stream("heap=sites");
  ASSERT_EQ(p.sites.size(), 1u);
  EXPECT_TRUE(p.sites[0].estimated) << "net= heap=sites samples unless sample=0";
}

TEST_P(NetSitesDefaultTest, SampleZeroStreamsExactCounts) {
  const Profile p = Stream("heap=sites,sample=0");
  ExpectRecordSite(p, 8, true);
}

INSTANTIATE_FOR_JDKS(ServerLoadTest);
INSTANTIATE_FOR_JDKS(NetSitesDefaultTest);

}  // namespace
}  // namespace hproftest
