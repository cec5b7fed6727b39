// SPDX-License-Identifier: Apache-2.0
// format=b read back with the independent reader of src/formats (hprof_format.h), and net=:
// the same stream to a loopback receiver, its command protocol, and a closed port.
#include <arpa/inet.h>

#include <cstring>
#include <map>
#include <set>

#include "hprof_test.h"

#ifdef HPROF_TESTS_HAVE_FORMATS_READER
#include "hprof_format.h"
#endif

namespace hproftest {
namespace {

class BinaryTest : public HprofTest {
 protected:
  void SetUp() override {
    HprofTest::SetUp();
    if (IsSkipped()) return;
#ifndef HPROF_TESTS_HAVE_FORMATS_READER
    GTEST_SKIP() << "the binary-format reader (src/formats, CMake target hprof_formats) is not "
                    "built, so format=b output cannot be read back";
#endif
  }
};

#ifdef HPROF_TESTS_HAVE_FORMATS_READER

// Structural checks of a binary profile: what every record refers to is defined before it.
std::vector<std::string> BinaryProblems(const hprof::Profile& p) {
  std::vector<std::string> out;
  std::set<hprof::Id> frames;
  for (const auto& f : p.frames) {
    frames.insert(f.frame_id);
    if (p.strings.count(f.method_name_id) == 0) out.push_back("frame without a method name");
    // Class serial 0 only for the CPU sampler's frames of samples with no Java stack, whose name
    // says so ("<unknown Java frame>.unknown_java": docs/hprof-binary-format.md).
    const bool unattributable = f.class_serial == 0 && p.string(f.method_name_id).starts_with("<");
    if (!unattributable && p.find_class_by_serial(f.class_serial) == nullptr) {
      out.push_back("STACK FRAME of unknown class serial " + std::to_string(f.class_serial));
    }
  }
  std::set<uint32_t> traces;
  for (const auto& t : p.traces) {
    traces.insert(t.trace_serial);
    for (hprof::Id f : t.frame_ids) {
      if (frames.count(f) == 0)
        out.push_back("STACK TRACE " + std::to_string(t.trace_serial) + " uses an undefined frame");
    }
  }
  for (const auto& c : p.classes) {
    if (p.strings.count(c.name_id) == 0) out.push_back("LOAD CLASS without its name");
  }
  for (const auto& s : p.alloc_sites) {
    for (const auto& site : s.sites) {
      if (traces.count(site.trace_serial) == 0) {
        out.push_back("ALLOC SITES uses undefined trace " + std::to_string(site.trace_serial));
      }
      if (site.kind == 0 && p.find_class_by_serial(site.class_serial) == nullptr) {
        out.push_back("ALLOC SITES uses undefined class serial " +
                      std::to_string(site.class_serial));
      }
    }
  }
  for (const auto& c : p.cpu_samples) {
    uint64_t sum = 0;
    for (const auto& s : c.traces) {
      sum += s.samples;
      if (traces.count(s.trace_serial) == 0) {
        out.push_back("CPU SAMPLES uses undefined trace " + std::to_string(s.trace_serial));
      }
    }
    if (sum > c.total) out.push_back("CPU SAMPLES counts more than its total");
  }
  std::set<uint32_t> started;
  for (const auto& t : p.threads) started.insert(t.thread_serial);
  for (const auto& t : p.ended_threads) {
    if (started.count(t.thread_serial) == 0) {
      out.push_back("END THREAD of unstarted thread " + std::to_string(t.thread_serial));
    }
  }
  for (const auto& d : p.heap_dumps) {
    if (!d.complete) out.push_back("a heap dump without HEAP DUMP END");
  }
  return out;
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size() && i < 20; ++i) out += "  " + v[i] + "\n";
  return out;
}

// Reads a format=b file with the formats library's reader; a failure says why.
::testing::AssertionResult ReadsBack(const std::string& file, hprof::Profile* p) {
  try {
    *p = hprof::read_file(file);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "the reader rejects " << file << ": " << e.what();
  }
  return ::testing::AssertionSuccess();
}

std::string ThreadName(const hprof::Profile& p, const hprof::StartThread& t) {
  return std::string(p.string(t.name_id));
}

TEST_P(BinaryTest, AllocationSitesReadBack) {
  const RunResult run = Run("format=b,heap=sites", "hproftest.AllocSites", {"1000", "500"});
  ASSERT_TRUE(run.exited(0)) << run.describe();
  ASSERT_FALSE(FileExists(path("java.hprof.txt"))) << "format=b wrote java.hprof.txt";
  ASSERT_TRUE(FileExists(path("java.hprof"))) << run.describe();
  hprof::Profile p;
  ASSERT_TRUE(ReadsBack(path("java.hprof"), &p)) << run.describe();
  EXPECT_EQ(p.header.version, hprof::Version::k1_0_2);
  EXPECT_TRUE(p.header.id_size == 4 || p.header.id_size == 8) << p.header.id_size;
  const auto problems = BinaryProblems(p);
  EXPECT_TRUE(problems.empty()) << Join(problems);
  ASSERT_FALSE(p.control_settings.empty()) << "no CONTROL SETTINGS";
  EXPECT_EQ(p.control_settings[0].flags & hprof::kAllocTraces, hprof::kAllocTraces);
  EXPECT_EQ(p.control_settings[0].flags & hprof::kCpuSampling, 0u);
  EXPECT_EQ(p.control_settings[0].max_depth, 4u);
  bool main_thread = false;
  for (const auto& t : p.threads) main_thread |= ThreadName(p, t) == "main";
  EXPECT_TRUE(main_thread) << "no START THREAD for main";

  // The known answer of AllocSites, as in the text test.
  ASSERT_EQ(p.alloc_sites.size(), 1u);
  std::vector<hprof::AllocSite> payload;
  for (const auto& s : p.alloc_sites[0].sites) {
    const hprof::LoadClass* c = p.find_class_by_serial(s.class_serial);
    if (s.kind == 0 && c != nullptr && p.string(c->name_id) == "hproftest.AllocSites$Payload") {
      payload.push_back(s);
    }
  }
  ASSERT_EQ(payload.size(), 1u);
  EXPECT_EQ(payload[0].live_instances, 1000u);
  EXPECT_EQ(payload[0].allocated_instances, 1500u);
  EXPECT_EQ(payload[0].live_bytes, 32000u);
  EXPECT_EQ(payload[0].allocated_bytes, 48000u);
  // Its trace's top frame is AllocSites.allocate.
  const hprof::StackTrace* trace = nullptr;
  for (const auto& t : p.traces) {
    if (t.trace_serial == payload[0].trace_serial) trace = &t;
  }
  ASSERT_NE(trace, nullptr);
  ASSERT_FALSE(trace->frame_ids.empty());
  for (const auto& f : p.frames) {
    if (f.frame_id == trace->frame_ids[0]) {
      EXPECT_EQ(p.string(f.method_name_id), "allocate");
      const hprof::LoadClass* c = p.find_class_by_serial(f.class_serial);
      ASSERT_NE(c, nullptr);
      EXPECT_EQ(p.string(c->name_id), "hproftest.AllocSites");
    }
  }
}

TEST_P(BinaryTest, HeapDumpReadsBackWithFieldsAndStrings) {
  const RunResult run = Run("format=b,heap=dump", "hproftest.HeapGraph");
  ASSERT_TRUE(run.exited(0)) << run.describe();
  hprof::Profile p;
  ASSERT_TRUE(ReadsBack(path("java.hprof"), &p)) << run.describe();
  const auto problems = BinaryProblems(p);
  EXPECT_TRUE(problems.empty()) << Join(problems);
  ASSERT_EQ(p.heap_dumps.size(), 1u);
  const hprof::HeapDump& d = p.heap_dumps[0];
  EXPECT_TRUE(d.complete);
  EXPECT_GE(d.segments, 1u);
  // Instances of HeapGraph$Node and their fields.
  std::vector<const hprof::InstanceDump*> nodes;
  for (const auto& i : d.instances) {
    if (p.class_name(i.class_id) == "hproftest.HeapGraph$Node") nodes.push_back(&i);
  }
  ASSERT_EQ(nodes.size(), 3u) << "INSTANCE DUMPs of HeapGraph$Node";
  const hprof::InstanceDump* a = nullptr;
  for (const auto* n : nodes) {
    auto kids = hprof::field_value(p, d, *n, "kids");
    if (kids && kids->as_object() != 0) a = n;
  }
  ASSERT_NE(a, nullptr) << "no Node with kids";
  auto field = [&](const hprof::InstanceDump& i, const char* name) {
    auto v = hprof::field_value(p, d, i, name);
    return v ? v->as_object() : ~hprof::Id{0};
  };
  EXPECT_EQ(hprof::field_value(p, d, *a, "weight")->as_int(), 1);
  const hprof::InstanceDump* b = d.find_instance(field(*a, "left"));
  const hprof::InstanceDump* c = d.find_instance(field(*a, "right"));
  ASSERT_NE(b, nullptr);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(hprof::field_value(p, d, *b, "weight")->as_int(), 2);
  EXPECT_EQ(hprof::field_value(p, d, *c, "weight")->as_int(), 3);
  EXPECT_EQ(field(*b, "left"), c->object_id);
  EXPECT_EQ(field(*b, "right"), 0u);
  EXPECT_EQ(field(*c, "right"), a->object_id);
  EXPECT_EQ(hprof::decode_string(p, d, field(*a, "label")), "alpha");
  EXPECT_EQ(hprof::decode_string(p, d, field(*c, "label")), "gamma");
  const hprof::ObjArrayDump* kids = d.find_object_array(field(*a, "kids"));
  ASSERT_NE(kids, nullptr);
  ASSERT_GE(kids->elements.size(), 3u);
  EXPECT_EQ(kids->elements[0], b->object_id);
  EXPECT_EQ(kids->elements[1], 0u);
  EXPECT_EQ(kids->elements[2], c->object_id);
  // The class dump of Node declares the five instance fields.
  const hprof::ClassDump* node_class = d.find_class(a->class_id);
  ASSERT_NE(node_class, nullptr);
  std::set<std::string> names;
  for (const auto& f : node_class->fields) names.insert(std::string(p.string(f.name_id)));
  EXPECT_EQ(names, (std::set<std::string>{"left", "right", "label", "kids", "weight"}));
}

TEST_P(BinaryTest, CpuSamplesReadBack) {
  const RunResult run = Run("format=b,cpu=samples", "hproftest.CpuHog", {"500"});
  ASSERT_TRUE(run.exited(0)) << run.describe();
  hprof::Profile p;
  ASSERT_TRUE(ReadsBack(path("java.hprof"), &p)) << run.describe();
  const auto problems = BinaryProblems(p);
  EXPECT_TRUE(problems.empty()) << Join(problems);
  ASSERT_FALSE(p.control_settings.empty());
  EXPECT_EQ(p.control_settings[0].flags & hprof::kCpuSampling, hprof::kCpuSampling);
  ASSERT_EQ(p.cpu_samples.size(), 1u);
  ASSERT_FALSE(p.cpu_samples[0].traces.empty());
  // The most sampled trace's top frame is CpuHog.burn.
  hprof::CpuSample top = p.cpu_samples[0].traces[0];
  for (const auto& s : p.cpu_samples[0].traces) {
    if (s.samples > top.samples) top = s;
  }
  std::string method;
  for (const auto& t : p.traces) {
    if (t.trace_serial != top.trace_serial || t.frame_ids.empty()) continue;
    for (const auto& f : p.frames) {
      if (f.frame_id == t.frame_ids[0]) method = std::string(p.string(f.method_name_id));
    }
  }
  EXPECT_EQ(method, "burn");
}

#endif  // HPROF_TESTS_HAVE_FORMATS_READER

// ---- net= ----

class NetTest : public HprofTest {};

// The stream HPROF sends to net= is the profile it would write to the file.
TEST_P(NetTest, LoopbackReceiverGetsTheTextProfile) {
  LoopbackReceiver receiver;
  const std::string net = "net=127.0.0.1:" + std::to_string(receiver.port());
  JavaProcess jvm(jdk(), Command("heap=all,cpu=samples,monitor=y," + net, "hproftest.Trivial"),
                  dir().path());
  ASSERT_TRUE(receiver.accept_one(60)) << "HPROF did not connect\n" << jvm.wait().describe();
  const std::string text = receiver.read_to_eof(jvm);
  const RunResult run = jvm.wait();
  ASSERT_TRUE(run.exited(0)) << run.describe();
  EXPECT_FALSE(FileExists(path("java.hprof.txt"))) << "net= also wrote a file";
  const Profile p = ParseProfile(text);
  EXPECT_WELL_FORMED(p, run);
  for (const std::string s :
       {"HEAP DUMP", "SITES", "CPU SAMPLES", "MONITOR TIME", "MONITOR DUMP"}) {
    EXPECT_EQ(p.count(s), 1u) << s;
  }
}

// The front end's commands (u1 tag, u4 serial, u4 length, body) produce sections mid-run.
TEST_P(NetTest, CommandsProduceSectionsWhileTheProgramRuns) {
  LoopbackReceiver receiver;
  const std::string net = "net=127.0.0.1:" + std::to_string(receiver.port());
  JavaProcess jvm(jdk(), Command("heap=sites,cpu=samples," + net, "hproftest.Blocker"),
                  dir().path());
  ASSERT_TRUE(receiver.accept_one(60)) << "HPROF did not connect\n" << jvm.wait().describe();
  ASSERT_TRUE(jvm.wait_for_stdout("READY")) << jvm.wait().describe();
  auto command = [](uint8_t tag, const std::string& body) {
    std::string c(1, static_cast<char>(tag));
    const uint32_t serial = htonl(1), length = htonl(static_cast<uint32_t>(body.size()));
    c.append(reinterpret_cast<const char*>(&serial), 4);
    c.append(reinterpret_cast<const char*>(&length), 4);
    return c + body;
  };
  auto flags_and_cutoff = [](uint16_t flags, float cutoff) {
    std::string b;
    const uint16_t f = htons(flags);
    uint32_t bits;
    std::memcpy(&bits, &cutoff, 4);
    bits = htonl(bits);
    b.append(reinterpret_cast<const char*>(&f), 2);
    b.append(reinterpret_cast<const char*>(&bits), 4);
    return b;
  };
  auto wait_for = [&](const std::string& marker) {
    return jvm.wait_until(
        [&] { return receiver.read_available(20).find(marker) != std::string::npos; });
  };
  receiver.send(command(0x03, flags_and_cutoff(0, 0.0f)));  // ALLOC_SITES
  ASSERT_TRUE(wait_for("SITES END\n")) << "no SITES after ALLOC_SITES\n"
                                       << receiver.received().substr(0, 2000);
  receiver.send(command(0x07, flags_and_cutoff(0, 0.0f)));  // CPU_SAMPLES
  ASSERT_TRUE(wait_for("CPU SAMPLES END\n")) << "no CPU SAMPLES after CPU_SAMPLES";
  EXPECT_TRUE(jvm.running()) << "the program ended before the commands were answered";
  jvm.write_stdin("go\n");
  const std::string text = receiver.read_to_eof(jvm);
  const RunResult run = jvm.wait();
  ASSERT_TRUE(run.exited(0)) << run.describe();
  const Profile p = ParseProfile(text);
  EXPECT_WELL_FORMED(p, run);
  EXPECT_EQ(p.count("SITES"), 2u) << "one on command, one at exit";
  EXPECT_EQ(p.count("CPU SAMPLES"), 2u) << "one on command, one at exit";
}

// EXIT (0x05) ends the VM with status 0.
TEST_P(NetTest, ExitCommandEndsTheVm) {
  LoopbackReceiver receiver;
  const std::string net = "net=127.0.0.1:" + std::to_string(receiver.port());
  JavaProcess jvm(jdk(), Command("heap=sites," + net, "hproftest.Blocker"), dir().path());
  ASSERT_TRUE(receiver.accept_one(60)) << "HPROF did not connect\n" << jvm.wait().describe();
  ASSERT_TRUE(jvm.wait_for_stdout("READY")) << jvm.wait().describe();
  receiver.send(std::string("\x05\0\0\0\1\0\0\0\0", 9));
  receiver.read_to_eof(jvm);
  // stdin stays open: the profile's stream ends before the VM halts, and a closed stdin would let
  // the program read EOF and go on in that window.
  const RunResult run = jvm.wait(/*close_input=*/false);
  EXPECT_TRUE(run.exited(0)) << run.describe();
  EXPECT_EQ(run.out.find("GOT"), std::string::npos) << "the program went on";
}

TEST_P(NetTest, ClosedPortIsAStartupError) {
  const int port = ClosedPort();
  const RunResult run =
      Run("heap=sites,net=127.0.0.1:" + std::to_string(port), "hproftest.Trivial");
  EXPECT_TRUE(run.exited_nonzero()) << run.describe();
  EXPECT_EQ(run.out.find("RAN"), std::string::npos) << run.describe();
  const auto lines = LinesOutsideHelp(run.err, "");
  ASSERT_EQ(lines.size(), 1u) << "expected exactly one error line\n" << run.describe();
  EXPECT_NE(lines[0].find(std::to_string(port)), std::string::npos) << lines[0];
}

TEST_P(NetTest, FileAndNetTogetherAreRejected) {
  const RunResult run = Run("file=x.txt,net=127.0.0.1:1", "hproftest.Trivial");
  EXPECT_TRUE(run.exited_nonzero()) << run.describe();
  EXPECT_EQ(run.out.find("RAN"), std::string::npos) << run.describe();
}

#ifdef HPROF_TESTS_HAVE_FORMATS_READER
// format=b over net=: the receiver gets a binary profile the reader accepts.
TEST_P(NetTest, BinaryProfileOverTheSocket) {
  LoopbackReceiver receiver;
  const std::string net = "net=127.0.0.1:" + std::to_string(receiver.port());
  JavaProcess jvm(jdk(), Command("format=b,heap=sites,cpu=samples," + net, "hproftest.Trivial"),
                  dir().path());
  ASSERT_TRUE(receiver.accept_one(60)) << "HPROF did not connect\n" << jvm.wait().describe();
  const std::string bytes = receiver.read_to_eof(jvm);
  const RunResult run = jvm.wait();
  ASSERT_TRUE(run.exited(0)) << run.describe();
  ASSERT_EQ(bytes.rfind(std::string("JAVA PROFILE 1.0.2\0", 19), 0), 0u) << bytes.substr(0, 40);
  hprof::Profile p;
  try {
    p = hprof::read_memory(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  } catch (const std::exception& e) {
    FAIL() << "the reader rejects the stream: " << e.what();
  }
  const auto problems = BinaryProblems(p);
  EXPECT_TRUE(problems.empty()) << Join(problems);
  EXPECT_EQ(p.alloc_sites.size(), 1u);
  EXPECT_EQ(p.cpu_samples.size(), 1u);
}
#endif

INSTANTIATE_FOR_JDKS(BinaryTest);
INSTANTIATE_FOR_JDKS(NetTest);

}  // namespace
}  // namespace hproftest
