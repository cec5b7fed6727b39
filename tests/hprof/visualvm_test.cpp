// SPDX-License-Identifier: Apache-2.0
// HPROF's binary heap dumps opened by a reader we did not write: VisualVM's heap library (Debian's
// visualvm package), driven by tests/support/visualvm/VisualVmCounts.java. Its per-class instance
// counts are compared with the JVM's own class histogram (`jcmd GC.class_histogram`) taken while
// the program holds a quiescent heap of planted objects, just before the dump.
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "hprof_format.h"
#include "hprof_test.h"
#include "hprof_test_config.h"

namespace hproftest {
namespace {

// Class name as HPROF writes it: "int[]", "java.lang.String[]" (jcmd prints "[I", "[Ljava...;").
std::string HistogramName(std::string name) {
  int dims = 0;
  while (!name.empty() && name[0] == '[') {
    ++dims;
    name.erase(0, 1);
  }
  if (dims > 0) {
    static const std::map<std::string, std::string> primitives = {
        {"Z", "boolean"}, {"B", "byte"}, {"C", "char"},  {"S", "short"},
        {"I", "int"},     {"J", "long"}, {"F", "float"}, {"D", "double"}};
    if (auto it = primitives.find(name); it != primitives.end()) {
      name = it->second;
    } else if (name.size() > 2 && name.front() == 'L' && name.back() == ';') {
      name = name.substr(1, name.size() - 2);
    }
  }
  for (char& c : name)
    if (c == '/') c = '.';
  for (int i = 0; i < dims; ++i) name += "[]";
  return name;
}

using Counts = std::map<std::string, long>;

// Runs a command, returning its stdout ("" and a failure if it did not exit 0).
std::string Capture(const std::string& command) {
  std::string out;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[65536];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  const int status = pclose(pipe);
  EXPECT_EQ(status, 0) << command << "\n" << out;
  return out;
}

Counts JcmdHistogram(const Jdk& jdk, pid_t pid) {
  const std::string text =
      Capture(jdk.home + "/bin/jcmd " + std::to_string(pid) + " GC.class_histogram");
  Counts counts;
  static const std::regex row(R"(^\s*\d+:\s+(\d+)\s+\d+\s+(\S+))");
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, row)) counts[HistogramName(m[2])] += std::stol(m[1]);
  }
  EXPECT_GT(counts.size(), 100u) << "jcmd printed no histogram:\n" << text;
  return counts;
}

// VisualVM's counts for a dump; fails the test (with VisualVM's error) if it cannot open it or
// read its heap summary (--total: the line is skipped, reading the record is the check).
Counts VisualVmCountsOf(const std::string& dump) {
  std::filesystem::remove_all(dump + ".hwcache");  // VisualVM's index of an earlier file
  const std::string out =
      Capture(std::string(HPROF_TEST_JDK17_HOME) + "/bin/java -cp " + HPROF_TEST_VISUALVM_JAR +
              ":" + HPROF_TEST_VISUALVM_CLASSES + " VisualVmCounts --total " + dump);
  Counts counts;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    const size_t space = line.find(' ');
    if (space == std::string::npos || line.compare(0, 6, "TOTAL ") == 0) continue;
    try {
      counts[line.substr(space + 1)] += std::stol(line.substr(0, space));
    } catch (const std::exception&) {
      ADD_FAILURE() << "VisualVM could not read " << dump << ":\n" << out.substr(0, 3000);
      return {};
    }
  }
  EXPECT_FALSE(counts.empty()) << "VisualVM read no class from " << dump << ":\n" << out;
  return counts;
}

long Sum(const Counts& counts) {
  long total = 0;
  for (const auto& [name, n] : counts)
    if (name != "java.lang.Class") total += n;
  return total;
}

// The classes whose counts differ most, for failure messages.
std::string LargestDifferences(const Counts& jcmd, const Counts& visualvm) {
  std::vector<std::pair<long, std::string>> rows;
  auto count = [](const Counts& c, const std::string& name) {
    auto it = c.find(name);
    return it == c.end() ? 0L : it->second;
  };
  for (const Counts* side : {&jcmd, &visualvm}) {
    for (const auto& [name, n] : *side) {
      const long d = count(visualvm, name) - count(jcmd, name);
      if (d != 0 && (side == &jcmd || !jcmd.count(name))) rows.emplace_back(d, name);
    }
  }
  std::sort(rows.begin(), rows.end(),
            [](const auto& x, const auto& y) { return std::labs(x.first) > std::labs(y.first); });
  std::ostringstream out;
  for (size_t i = 0; i < rows.size() && i < 15; ++i)
    out << "  " << rows[i].second << ": jcmd " << count(jcmd, rows[i].second) << ", VisualVM "
        << count(visualvm, rows[i].second) << "\n";
  return out.str();
}

// The planted classes must agree exactly; the heap as a whole closely. The whole can differ a
// little: the histogram counts everything live after its full GC, including objects only the VM
// itself holds (which a JVMTI heap walk does not reach), and the dump comes a moment later, after
// jcmd's own attach work. VisualVM counts class objects apart from instances, so java.lang.Class
// is left out of the totals.
void ExpectSameHeap(const Counts& jcmd, const Counts& visualvm, int threads) {
  for (const char* planted : {"hproftest.PlantedHeap$Leaf", "hproftest.PlantedHeap$Node"}) {
    ASSERT_TRUE(jcmd.count(planted)) << planted << " not in jcmd's histogram";
    EXPECT_EQ(visualvm.count(planted) ? visualvm.at(planted) : -1, jcmd.at(planted)) << planted;
  }
  EXPECT_EQ(jcmd.at("hproftest.PlantedHeap$Leaf"), 1500);
  EXPECT_EQ(jcmd.at("hproftest.PlantedHeap$Node"), 300);
  if (threads > 0) {
    ASSERT_TRUE(visualvm.count("java.lang.Thread"));
    EXPECT_GE(visualvm.at("java.lang.Thread"), threads);
    EXPECT_LE(visualvm.at("java.lang.Thread"), jcmd.at("java.lang.Thread"));
  }
  const long a = Sum(jcmd), b = Sum(visualvm);
  EXPECT_NEAR(static_cast<double>(b), static_cast<double>(a), 0.05 * static_cast<double>(a))
      << "instances: jcmd " << a << ", VisualVM " << b << "\n"
      << LargestDifferences(jcmd, visualvm);
}

class VisualVmTest : public HprofTest {
 protected:
  // Starts PlantedHeap under HPROF, takes the histogram once it is READY, and returns the JVM.
  std::unique_ptr<JavaProcess> Start(const std::string& options, int threads, Counts* histogram) {
    auto jvm = std::make_unique<JavaProcess>(
        jdk(), Command(options, "hproftest.PlantedHeap", {std::to_string(threads)}), dir().path());
    if (!jvm->wait_for_stdout("READY")) {
      ADD_FAILURE() << jvm->wait().describe();
      return nullptr;
    }
    *histogram = JcmdHistogram(jdk(), jvm->pid());
    return jvm;
  }

  void DumpAtExit(const std::string& options, int threads) {
    Counts histogram;
    auto jvm = Start(options, threads, &histogram);
    ASSERT_NE(jvm, nullptr);
    jvm->write_stdin("go\n");
    const RunResult run = jvm->wait();
    ASSERT_TRUE(run.exited(0)) << run.describe();
    ExpectSameHeap(histogram, VisualVmCountsOf(path("java.hprof")), threads);
  }
};

TEST_P(VisualVmTest, HeapDumpAtExitOpens) {
  DumpAtExit("heap=dump,format=b", 0);
}

TEST_P(VisualVmTest, HeapAllAtExitOpens) {
  DumpAtExit("heap=all,format=b", 0);
}

TEST_P(VisualVmTest, DumpOfAThousandThreadsOpens) {
  DumpAtExit("heap=dump,format=b", 1000);
}

// The dump HPROF writes on SIGQUIT, while the program runs, opens by itself (a copy of the file
// as it stood then), and the file with both dumps opens after the exit.
TEST_P(VisualVmTest, SigquitDumpOpens) {
  Counts histogram;
  auto jvm = Start("heap=dump,format=b", 0, &histogram);
  ASSERT_NE(jvm, nullptr);
  jvm->signal(SIGQUIT);
  ASSERT_TRUE(jvm->wait_until([&] {
    return jvm->stderr_so_far().find("Dumping Java heap ... done.") != std::string::npos;
  })) << jvm->wait().describe();
  ASSERT_TRUE(jvm->running()) << "the program ended: the dump was not mid-run";
  std::filesystem::copy_file(path("java.hprof"), path("sigquit.hprof"));
  ExpectSameHeap(histogram, VisualVmCountsOf(path("sigquit.hprof")), 0);
  jvm->write_stdin("go\n");
  const RunResult run = jvm->wait();
  ASSERT_TRUE(run.exited(0)) << run.describe();
  ExpectSameHeap(histogram, VisualVmCountsOf(path("java.hprof")), 0);
}

// Three SIGQUITs, then the exit: each dump (streamed by the runtime, written as it comes) opens
// by itself with the histogram's counts, the file ends with four complete dumps, and the planted
// objects keep their IDs from one dump to the next.
TEST_P(VisualVmTest, ThreeSigquitsThenExitEachDumpOpensWithStableIds) {
  Counts histogram;
  auto jvm = Start("heap=dump,format=b", 0, &histogram);
  ASSERT_NE(jvm, nullptr);
  auto dumps_done = [&] {
    const std::string err = jvm->stderr_so_far();
    size_t n = 0;
    for (size_t at = err.find("Dumping Java heap ... done."); at != std::string::npos;
         at = err.find("Dumping Java heap ... done.", at + 1)) {
      ++n;
    }
    return n;
  };
  for (size_t i = 1; i <= 3; ++i) {
    jvm->signal(SIGQUIT);
    ASSERT_TRUE(jvm->wait_until([&] { return dumps_done() >= i; })) << jvm->wait().describe();
    ASSERT_TRUE(jvm->running()) << "the program ended: dump " << i << " was not mid-run";
    const std::string copy = path("sigquit" + std::to_string(i) + ".hprof");
    std::filesystem::copy_file(path("java.hprof"), copy);
    ExpectSameHeap(histogram, VisualVmCountsOf(copy), 0);
  }
  jvm->write_stdin("go\n");
  const RunResult run = jvm->wait();
  ASSERT_TRUE(run.exited(0)) << run.describe();
  ExpectSameHeap(histogram, VisualVmCountsOf(path("java.hprof")), 0);

  const hprof::Profile profile = hprof::read_file(path("java.hprof"));
  ASSERT_EQ(profile.heap_dumps.size(), 4u);
  std::vector<std::set<hprof::Id>> leaves;
  for (const hprof::HeapDump& dump : profile.heap_dumps) {
    EXPECT_TRUE(dump.complete);
    std::set<hprof::Id> ids;
    for (const hprof::InstanceDump& i : dump.instances) {
      if (profile.class_name(i.class_id) == "hproftest.PlantedHeap$Leaf") ids.insert(i.object_id);
    }
    EXPECT_EQ(ids.size(), 1500u);
    leaves.push_back(std::move(ids));
  }
  for (size_t d = 1; d < leaves.size(); ++d) {
    EXPECT_EQ(leaves[d], leaves[0]) << "dump " << d + 1 << " names the planted objects differently";
  }
}

// A format=b stream over net= whose front end stalled while 20000 threads started and ended: it
// carries HPROF's DROPPED notes (UTF8 records under the reserved name id, all bits set) and, at
// exit, a heap dump. Saved as the front end received it, VisualVM's heap library opens it: the
// notes do not trouble an independent reader.
TEST_P(VisualVmTest, StalledNetStreamWithDropNotesOpens) {
  LoopbackReceiver receiver;
  JavaProcess jvm(
      jdk(),
      Command("heap=dump,format=b,netqueue=64k,net=127.0.0.1:" + std::to_string(receiver.port()),
              "hproftest.ThreadStorm", {"20000"}),
      dir().path());
  ASSERT_TRUE(receiver.accept_one(60)) << "HPROF did not connect\n" << jvm.wait().describe();
  // Nothing is read until the program has done its work.
  ASSERT_TRUE(jvm.wait_for_stdout("THREADSTORM DONE 20000 true")) << jvm.wait().describe();
  const std::string bytes = receiver.read_to_eof(jvm);
  const RunResult run = jvm.wait();
  ASSERT_TRUE(run.exited(0)) << run.describe();
  ASSERT_NE(run.err.find("hprof: net=: "), std::string::npos) << "nothing was dropped\n"
                                                              << run.describe();
  // The note's record: tag UTF8, time, length, the reserved 8-byte id, the text.
  const std::string note_id(8, '\xff');
  EXPECT_NE(bytes.find(note_id + "DROPPED: "), std::string::npos) << "no DROPPED note";
  const std::string file = path("net.hprof");
  FILE* out = std::fopen(file.c_str(), "wb");
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), out), bytes.size());
  std::fclose(out);
  const Counts counts = VisualVmCountsOf(file);
  EXPECT_GT(counts.count("java.lang.String") ? counts.at("java.lang.String") : 0, 1000)
      << "VisualVM did not read the heap dump";
}

// A format=b stream with period= whose collector went away and came back: the new connection
// repeats the header, every name, class, frame and trace, and adds IDENTITY, PERIOD and DROPPED
// notes; saved as the second collector received it (through the heap dump at exit), VisualVM's
// heap library opens it as a file of its own and counts the planted heap.
TEST_P(VisualVmTest, ReconnectedNetStreamOpens) {
  const int port = ClosedPort();
  auto first = std::make_unique<LoopbackReceiver>(port);
  Counts histogram;
  auto jvm =
      Start("heap=dump,format=b,period=1,net=127.0.0.1:" + std::to_string(port), 0, &histogram);
  ASSERT_NE(jvm, nullptr);
  ASSERT_TRUE(first->accept_one(60)) << "HPROF did not connect\n" << jvm->wait().describe();
  first.reset();  // the collector goes away; the agent says so and retries
  ASSERT_TRUE(jvm->wait_until([&] {
    return jvm->stderr_so_far().find("reconnecting") != std::string::npos;
  })) << jvm->wait().describe();
  LoopbackReceiver second(port);
  ASSERT_TRUE(second.accept_one(60)) << "HPROF did not reconnect\n" << jvm->wait().describe();
  jvm->write_stdin("go\n");
  const std::string bytes = second.read_to_eof(*jvm);
  const RunResult run = jvm->wait();
  ASSERT_TRUE(run.exited(0)) << run.describe();
  EXPECT_NE(bytes.find(" connection="), std::string::npos) << "no IDENTITY note of a reconnect";
  const std::string file = path("reconnected.hprof");
  FILE* out = std::fopen(file.c_str(), "wb");
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), out), bytes.size());
  std::fclose(out);
  ExpectSameHeap(histogram, VisualVmCountsOf(file), 0);
}

INSTANTIATE_FOR_JDKS(VisualVmTest);

}  // namespace
}  // namespace hproftest
