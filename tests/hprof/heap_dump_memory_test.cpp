// SPDX-License-Identifier: Apache-2.0
// A heap dump does not need memory in proportion to the heap: HPROF takes it through the
// runtime's streamed dump and writes it chunk by chunk. Measured on the JVM under test: its peak
// resident set (VmHWM, reset through /proc/<pid>/clear_refs just before) while a SIGQUIT dump of
// a ~512 MiB heap is written, against its resident set before. The one-buffer HEAP_DUMP event
// (HPROF_HEAP_DUMP_PATH=one-buffer) is measured the same way, to show the measurement sees a
// whole dump held in memory.
#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "hprof_test.h"

namespace hproftest {
namespace {

constexpr long kHeapMib = 512;

long StatusKb(pid_t pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.compare(0, key.size() + 1, key + ":") == 0) {
      return std::stol(line.substr(key.size() + 1));
    }
  }
  return -1;
}

class HeapDumpMemoryTest : public HprofTest {
 protected:
  // The JVM's peak RSS growth (KiB) while one SIGQUIT heap dump is written.
  long DumpGrowthKb(const std::string& path_env) {
    JavaCommand command = Command("heap=dump,format=b", "hproftest.BigHeap",
                                  {std::to_string(kHeapMib)}, {"-Xmx1g", "-Xms1g"});
    if (!path_env.empty()) command.env.emplace_back("HPROF_HEAP_DUMP_PATH", path_env);
    command.timeout = std::chrono::seconds(170);
    JavaProcess jvm(jdk(), command, dir().path());
    if (!jvm.wait_for_stdout("READY")) {
      ADD_FAILURE() << jvm.wait().describe();
      return -1;
    }
    std::ofstream("/proc/" + std::to_string(jvm.pid()) + "/clear_refs") << "5";
    const long before = StatusKb(jvm.pid(), "VmRSS");
    jvm.signal(SIGQUIT);
    const bool done = jvm.wait_until([&] {
      return jvm.stderr_so_far().find("Dumping Java heap ... done.") != std::string::npos;
    });
    const long peak = StatusKb(jvm.pid(), "VmHWM");
    jvm.write_stdin("go\n");
    const RunResult run = jvm.wait();
    if (!done) {
      ADD_FAILURE() << "no dump after SIGQUIT\n" << run.describe();
      return -1;
    }
    EXPECT_GT(before, kHeapMib * 1024) << "the heap is not resident";
    std::filesystem::remove(path("java.hprof"));
    return peak - before;
  }
};

TEST_P(HeapDumpMemoryTest, StreamedDumpOfA512MiBHeapNeedsLittleMemory) {
  const long streamed = DumpGrowthKb("");
  const long one_buffer = DumpGrowthKb("one-buffer");
  // Bound: the target, 64 MiB + 5 % of the heap (tags of 100,000 objects, one 4 MiB
  // chunk, the writer's segment, HPROF's tables).
  EXPECT_LT(streamed, (64 + kHeapMib / 20) * 1024) << "streamed dump: peak RSS growth KiB";
  EXPECT_GT(one_buffer, kHeapMib * 1024) << "the one-buffer dump should hold the whole dump";
  std::printf("peak RSS growth during the dump: streamed %ld MiB, one buffer %ld MiB\n",
              streamed / 1024, one_buffer / 1024);
}

INSTANTIATE_FOR_JDKS(HeapDumpMemoryTest);

}  // namespace
}  // namespace hproftest
