// SPDX-License-Identifier: Apache-2.0
// Real dumps of AnalysisHeapProgram, whose heap has planted structure: the analyzer reports the
// planted facts exactly. jcmd dumps (JDK 17 and 25) are also checked against jcmd's class
// histogram of the same moment and diffed against a second dump taken after the leak grew.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis.h"
#include "child_process.h"
#include "heap_index.h"
#include "jvm_dumps.h"
#include "summary_check.h"

using analysis::HeapDump;

namespace {

// AnalysisHeapProgram's constants.
constexpr uint64_t kLeaks = 5000, kGrow = 1000, kDuplicates = 300, kRing = 10;

// Shallow sizes as HotSpot lays the objects out (compressed class pointers and oops).
constexpr uint64_t kLeakSize = 24;      // header 12 + payload ref 4 + long 8
constexpr uint64_t kNodeSize = 32;      // HashMap$Node: 12 + hash 4 + key, value, next 3 x 4
constexpr uint64_t kIntegerSize = 16;   // 12 + 4
constexpr uint64_t kPayloadSize = 80;   // byte[64]: 16 + 64
constexpr uint64_t kTableSize = 32784;  // HashMap$Node[8192]: 16 + 8192 x 4
constexpr uint64_t kHashMapSize = 48;   // 12 + 8 fields of 4 bytes, aligned
constexpr uint64_t kRingNodeSize = 24;  // 12 + next 4 + index 4, aligned

const analysis::ClassStats* find_class(const std::vector<analysis::ClassStats>& h,
                                       const std::string& name) {
  for (const auto& c : h)
    if (c.name == name) return &c;
  return nullptr;
}

std::string vias(const analysis::RootPath& p) {
  std::string out;
  for (const auto& s : p) out += s.via + " / ";
  return out;
}

// The facts every producer's dump shows.
// A text dump (format=a) has references and sizes but no values (`has_values` false).
void check_planted_structure(const HeapDump& d, bool exact_sizes, bool has_values = true) {
  auto h = d.class_histogram();
  const auto* leak = find_class(h, "AnalysisHeapProgram$Leak");
  ASSERT_NE(leak, nullptr);
  EXPECT_EQ(leak->instances, kLeaks);
  EXPECT_EQ(leak->shallow_bytes, kLeaks * kLeakSize);
  const auto* ring = find_class(h, "AnalysisHeapProgram$RingNode");
  ASSERT_NE(ring, nullptr);
  EXPECT_EQ(ring->instances, kRing);
  EXPECT_EQ(ring->retained_bytes, kRing * kRingNodeSize) << "the ring counts once, from its head";

  // The leak: one HashMap retains every entry, key, value and payload.
  auto maps = d.instances_of("java.util.HashMap", 1);
  ASSERT_EQ(maps.size(), 1u);
  const uint64_t entries = kLeaks * (kNodeSize + kIntegerSize + kLeakSize + kPayloadSize);
  if (exact_sizes) {
    EXPECT_EQ(maps[0].retained_bytes, kHashMapSize + kTableSize + entries);
  } else {
    EXPECT_GT(maps[0].retained_bytes, entries);
  }
  auto leaks = d.instances_of("AnalysisHeapProgram$Leak", 1);
  ASSERT_EQ(leaks.size(), 1u);
  EXPECT_EQ(leaks[0].retained_bytes, kLeakSize + kPayloadSize);
  auto paths = d.paths_to(leaks[0].id, 1);
  ASSERT_EQ(paths.size(), 1u);
  const std::string route = vias(paths[0]);
  EXPECT_NE(route.find("static LEAK_MAP / table / "), std::string::npos) << route;
  EXPECT_EQ(paths[0].back().via, "value") << route;
  EXPECT_EQ(paths[0].back().object.id, leaks[0].id);

  // The diamond: its top dominates the shared object and its int[1000].
  auto top = d.instances_of("AnalysisHeapProgram$DiamondTop", 1);
  auto shared = d.instances_of("AnalysisHeapProgram$DiamondShared", 1);
  auto sides = d.instances_of("AnalysisHeapProgram$DiamondSide", 2);
  ASSERT_EQ(top.size(), 1u);
  ASSERT_EQ(shared.size(), 1u);
  ASSERT_EQ(sides.size(), 2u);
  auto shared_idom = d.immediate_dominator(shared[0].id);
  ASSERT_TRUE(shared_idom.has_value());
  EXPECT_EQ(shared_idom->id, top[0].id);
  EXPECT_EQ(sides[0].retained_bytes, sides[0].shallow_bytes) << "a side alone retains nothing";
  EXPECT_EQ(top[0].retained_bytes, top[0].shallow_bytes + sides[0].shallow_bytes +
                                       sides[1].shallow_bytes + shared[0].retained_bytes);
  if (exact_sizes) {
    EXPECT_EQ(shared[0].retained_bytes, 16u + 4016u);
  }

  // Soft and weak references retain nothing through their referents.
  auto payload = d.instances_of("AnalysisHeapProgram$SoftPayload", 1);
  ASSERT_EQ(payload.size(), 1u);
  EXPECT_FALSE(d.immediate_dominator(payload[0].id).has_value()) << "only softly reachable";
  EXPECT_EQ(payload[0].retained_bytes, 16u + 200016u);
  EXPECT_TRUE(d.paths_to(payload[0].id, 1).empty()) << "no strong path";
  auto target = d.instances_of("AnalysisHeapProgram$WeakTarget", 1);
  ASSERT_EQ(target.size(), 1u);
  auto target_idom = d.immediate_dominator(target[0].id);
  ASSERT_TRUE(target_idom.has_value());
  EXPECT_EQ(target_idom->class_name, "class AnalysisHeapProgram")
      << "held by the program's static field; a class object is named for its class";
  EXPECT_GE(d.summary().weakly_reachable_objects, 2u);

  // The big array is the biggest single object and the leak suspect at 10%.
  auto big = d.instances_of("long[]", 1);
  ASSERT_EQ(big.size(), 1u);
  EXPECT_EQ(big[0].retained_bytes, 8'000'016u);
  auto suspects = d.suspects(0.10);
  ASSERT_FALSE(suspects.empty());
  EXPECT_EQ(suspects[0].accumulation_point.id, big[0].id);
  ASSERT_FALSE(suspects[0].path.empty());
  EXPECT_EQ(suspects[0].path.back().via, "static BIG");
  EXPECT_EQ(suspects[0].held_by, "static BIG of class AnalysisHeapProgram") << "the holder first";
  // Damage: none but the dangling references intact dumps have (see DumpSummary).
  const auto summary = d.summary();
  EXPECT_EQ(summary.unknown_class_objects, 0u);
  EXPECT_LE(summary.dangling_references, analysis::DumpSummary::kDanglingReferencesTolerated);
  EXPECT_EQ(summary.damage_warning, "");
  std::printf("dangling references: %llu, objects %llu\n",
              static_cast<unsigned long long>(summary.dangling_references),
              static_cast<unsigned long long>(summary.objects));

  // Duplicate strings: the planted copies plus the interned literal they were made from.
  auto strings = d.duplicate_strings(1, 2);
  if (!has_values) {
    EXPECT_TRUE(strings.top.empty()) << "a text dump has no string contents to compare";
    return;
  }
  ASSERT_EQ(strings.top.size(), 1u);
  EXPECT_EQ(strings.top[0].value, "planted-duplicate-value");
  EXPECT_EQ(strings.top[0].count, kDuplicates + 1);
  ASSERT_FALSE(strings.top[0].holders.empty());
  EXPECT_EQ(strings.top[0].holders[0].first, "java.lang.Object[]") << "the ArrayList's array";
  EXPECT_GE(strings.top[0].holders[0].second, kDuplicates);
}

// `jcmd GC.class_histogram` lines: "   4:          5000         120000  AnalysisHeapProgram$Leak".
std::map<std::string, std::pair<uint64_t, uint64_t>> read_histogram(const std::string& path) {
  std::map<std::string, std::pair<uint64_t, uint64_t>> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string rank, name;
    uint64_t count = 0, bytes = 0;
    if (fields >> rank >> count >> bytes >> name && rank.back() == ':') out[name] = {count, bytes};
  }
  return out;
}

// Runs jvmprof with stdout and stderr apart; `err` gets stderr.
std::string run_jvmprof(const std::string& args, int* status, std::string* err) {
  const std::string err_path = testing::TempDir() + "jvmprof-stderr-" + std::to_string(::getpid());
  std::string cmd = std::string(ANALYSIS_JVMPROF) + " " + args + " 2>" + err_path;
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  *status = WEXITSTATUS(pclose(p));
  std::ifstream in(err_path);
  err->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  std::filesystem::remove(err_path);
  return out;
}

std::string hex(uint64_t id) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(id));
  return buf;
}

// The byte offset of the INSTANCE DUMP sub-record of object `id` (8-byte ids) in `bytes`.
size_t instance_record(const std::vector<char>& bytes, uint64_t id) {
  char pattern[9] = {0x21};
  for (int i = 0; i < 8; ++i) pattern[1 + i] = static_cast<char>(id >> (56 - 8 * i));
  auto it = std::search(bytes.begin(), bytes.end(), pattern, pattern + 9);
  return it == bytes.end() ? std::string::npos : static_cast<size_t>(it - bytes.begin());
}

std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// What a user reads, on the jcmd dump, from the command line (text and JSON agreeing): class
// objects named, damage reported, chains grouped, suspects led by their holder, one id form,
// unreachable strings said, a cut-off file named, and where the index goes.
void check_what_users_read(const analysis_test::JvmDumps& dumps, const HeapDump& d) {
  int status = 0;
  std::string err;
  const std::string work = dumps.before + ".cli";
  std::filesystem::remove_all(work);
  std::filesystem::create_directories(work);

  // Damage: intact, no warning; the summary says so in text and JSON.
  auto summary =
      nlohmann::json::parse(run_jvmprof("summary --json " + dumps.before, &status, &err));
  EXPECT_EQ(status, 0);
  EXPECT_EQ(summary["dangling_references"].get<uint64_t>(), d.summary().dangling_references);
  EXPECT_EQ(summary["unknown_class_objects"].get<uint64_t>(), 0u);
  EXPECT_TRUE(summary["damage_warning"].is_null());
  EXPECT_EQ(err, "");
  std::string text = run_jvmprof("summary " + dumps.before, &status, &err);
  EXPECT_NE(text.find("damage:      " + std::to_string(d.summary().dangling_references) +
                      " references to objects not in the dump"),
            std::string::npos)
      << text;

  // A flipped byte in a Leak's class id: one object of a class the dump never defined, a
  // warning naming its record's offset, exit 0.
  auto bytes = read_bytes(dumps.before);
  const uint64_t leak = d.instances_of("AnalysisHeapProgram$Leak", 1).at(0).id;
  const size_t record = instance_record(bytes, leak);
  ASSERT_NE(record, std::string::npos);
  bytes[record + 1 + 8 + 4 + 7] ^= 0x5A;
  const std::string flipped = work + "/flipped.hprof";
  write_bytes(flipped, bytes);
  auto damaged =
      nlohmann::json::parse(run_jvmprof("summary --json --no-index " + flipped, &status, &err));
  EXPECT_EQ(status, 0);
  EXPECT_EQ(damaged["unknown_class_objects"].get<uint64_t>(), 1u);
  EXPECT_EQ(damaged["first_unknown_class_offset"].get<uint64_t>(), record);
  EXPECT_NE(damaged["damage_warning"].get<std::string>().find("at byte " + std::to_string(record)),
            std::string::npos);
  EXPECT_NE(err.find("warning: damaged dump? "), std::string::npos) << err;
  EXPECT_NE(err.find("at byte " + std::to_string(record)), std::string::npos) << err;

  // Cut off halfway: the error says where the file ends.
  const size_t cut = bytes.size() / 2;
  write_bytes(work + "/cut.hprof", std::vector<char>(bytes.begin(), bytes.begin() + cut));
  run_jvmprof("summary --no-index " + work + "/cut.hprof", &status, &err);
  EXPECT_EQ(status, 1);
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find("the file ends at byte " + std::to_string(cut) + " (truncated?)"),
            std::string::npos)
      << err;

  // The index elsewhere, announced with its size before it is built.
  run_jvmprof("summary --index-dir " + work + " " + dumps.before, &status, &err);
  EXPECT_EQ(status, 0);
  const std::string index = work + "/before.hprof.jvmprof-index";
  EXPECT_NE(err.find("jvmprof summary: writing the index " + index + " (about "), std::string::npos)
      << err;
  ASSERT_TRUE(std::filesystem::exists(index));
  const double ratio = static_cast<double>(std::filesystem::file_size(index)) /
                       static_cast<double>(std::filesystem::file_size(dumps.before));
  std::printf("index / dump: %.3f\n", ratio);
  EXPECT_LE(std::filesystem::file_size(index),
            analysis::detail::estimated_index_bytes(std::filesystem::file_size(dumps.before)));

  // Class objects by their class; chains of single-child dominators grouped: the leak's map
  // carries its table, which is no entry of its own (with --flat it is).
  const auto map = d.instances_of("java.util.HashMap", 1).at(0);
  auto grouped = nlohmann::json::parse(
      run_jvmprof("dominators --json --top 60 " + dumps.before, &status, &err));
  auto flat = nlohmann::json::parse(
      run_jvmprof("dominators --json --flat --top 60 " + dumps.before, &status, &err));
  std::string table;
  bool class_named = false;
  for (const auto& o : grouped["objects"]) {
    class_named |= o["class"] == "class AnalysisHeapProgram";
    if (o["id"] != hex(map.id)) continue;
    ASSERT_EQ(o["chain"].size(), 1u) << o.dump();
    EXPECT_EQ(o["chain"][0]["class"], "java.util.HashMap$Node[]");
    table = o["chain"][0]["id"];
  }
  EXPECT_TRUE(class_named);
  ASSERT_FALSE(table.empty()) << "the leak's map heads its chain";
  bool table_grouped = false, table_flat = false;
  for (const auto& o : grouped["objects"]) table_grouped |= o["id"] == table;
  for (const auto& o : flat["objects"]) table_flat |= o["id"] == table;
  EXPECT_FALSE(table_grouped);
  EXPECT_TRUE(table_flat);
  text = run_jvmprof("dominators --top 60 " + dumps.before, &status, &err);
  EXPECT_NE(text.find("-> java.util.HashMap$Node[] " + table), std::string::npos) << text;

  // Suspects: the holder first, in text and JSON alike.
  auto suspects =
      nlohmann::json::parse(run_jvmprof("suspects --json " + dumps.before, &status, &err));
  ASSERT_FALSE(suspects["suspects"].empty());
  EXPECT_EQ(suspects["suspects"][0]["held_by"], "static BIG of class AnalysisHeapProgram");
  text = run_jvmprof("suspects " + dumps.before, &status, &err);
  EXPECT_EQ(text.rfind("suspect 1: static BIG of class AnalysisHeapProgram holds ", 0), 0u) << text;

  // One id form: hexadecimal, with or without 0x; a "decimal" id is read as hex and said so.
  auto with = nlohmann::json::parse(
      run_jvmprof("path --json " + dumps.before + " " + hex(leak), &status, &err));
  auto without = nlohmann::json::parse(
      run_jvmprof("path --json " + dumps.before + " " + hex(leak).substr(2), &status, &err));
  EXPECT_EQ(with["object"], without["object"]);
  run_jvmprof("path " + dumps.before + " 12345", &status, &err);
  EXPECT_EQ(status, 1);
  EXPECT_NE(err.find("no object 0x12345"), std::string::npos) << err;
  EXPECT_NE(err.find("read as hexadecimal"), std::string::npos) << err;

  // Strings: how many are unreachable is said.
  auto strings =
      nlohmann::json::parse(run_jvmprof("strings --json " + dumps.before, &status, &err));
  EXPECT_TRUE(strings.contains("unreachable_strings"));
  text = run_jvmprof("strings " + dumps.before, &status, &err);
  EXPECT_NE(text.find(strings["unreachable_strings"].dump() + " of them unreachable"),
            std::string::npos)
      << text;
  std::filesystem::remove_all(work);
}

// The command line on a real dump: JSON that agrees with the library, and one-line errors.
void check_command_line(const analysis_test::JvmDumps& dumps) {
  auto run = [](const std::string& args, int* status) {
    std::string cmd = std::string(ANALYSIS_JVMPROF) + " " + args + " 2>&1";
    std::string out;
    FILE* p = popen(cmd.c_str(), "r");
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    *status = WEXITSTATUS(pclose(p));
    return out;
  };
  int status = 0;
  auto summary = nlohmann::json::parse(run("summary --json --top 5 " + dumps.before, &status));
  EXPECT_EQ(status, 0);
  auto d = HeapDump::open(dumps.before);
  EXPECT_EQ(summary["objects"].get<uint64_t>(), d->summary().objects);
  EXPECT_EQ(summary["histogram"].size(), 5u);
  EXPECT_EQ(summary["histogram"][0]["class"], "long[]");
  for (const char* sub : {"dominators", "strings", "suspects"}) {
    auto j = nlohmann::json::parse(run(std::string(sub) + " --json " + dumps.before, &status));
    EXPECT_EQ(status, 0) << sub;
    EXPECT_EQ(j["dump"], dumps.before) << sub;
  }
  auto leak = d->instances_of("AnalysisHeapProgram$Leak", 1).at(0);
  char id[32];
  std::snprintf(id, sizeof id, "0x%llx", static_cast<unsigned long long>(leak.id));
  auto path = nlohmann::json::parse(run("path --json " + dumps.before + " " + id, &status));
  EXPECT_EQ(status, 0);
  EXPECT_EQ(path["paths"][0].back()["via"], "value");
  auto diff =
      nlohmann::json::parse(run("diff --json " + dumps.before + " " + dumps.after, &status));
  EXPECT_EQ(status, 0);
  EXPECT_GT(diff["changed_classes"].get<int>(), 0);
  std::string text = run("summary " + dumps.before, &status);
  EXPECT_NE(text.find("AnalysisHeapProgram$Leak"), std::string::npos);
  // Usage errors exit 2, analysis errors 1; each is one line.
  std::string bad = run("summary --top 0 " + dumps.before, &status);
  EXPECT_EQ(status, 2);
  EXPECT_EQ(std::count(bad.begin(), bad.end(), '\n'), 1) << bad;
  bad = run("summary " + std::string(ANALYSIS_CLASSES_DIR) + "/AnalysisHeapProgram.class", &status);
  EXPECT_EQ(status, 1);
  EXPECT_EQ(std::count(bad.begin(), bad.end(), '\n'), 1) << bad;
  EXPECT_NE(bad.find("not an HPROF"), std::string::npos) << bad;
  bad = run("path " + dumps.before + " 0x1", &status);
  EXPECT_EQ(status, 1);
  EXPECT_NE(bad.find("no object 0x1"), std::string::npos) << bad;
  check_what_users_read(dumps, *d);
}

// Retained sizes from VisualVM's heap library for every instance of classes that span the
// planted structure and the JDK's own maps: each must equal ours.
void check_against_visualvm(const std::string& java, const std::string& dump, const HeapDump& d) {
  if (std::string(ANALYSIS_VISUALVM_CLASSES).empty()) {
    std::printf("[ SKIPPED  ] VisualVM cross-check: Debian's visualvm is not installed\n");
    return;
  }
  const std::vector<std::string> classes = {"java.util.HashMap",
                                            "java.util.ArrayList",
                                            "java.util.concurrent.ConcurrentHashMap",
                                            "AnalysisHeapProgram$DiamondTop",
                                            "AnalysisHeapProgram$DiamondSide",
                                            "AnalysisHeapProgram$RingNode",
                                            "AnalysisHeapProgram$SoftPayload",
                                            "long[]"};
  testsupport::ChildSpec spec;
  spec.argv = {java, "-cp", std::string(ANALYSIS_VISUALVM_CLASSES) + ":" + ANALYSIS_VISUALVM_JAR,
               "VisualVmRetained", dump};
  spec.argv.insert(spec.argv.end(), classes.begin(), classes.end());
  spec.stdout_path = dump + ".visualvm.txt";
  spec.stderr_path = dump + ".visualvm.err";
  spec.stdin_pipe = false;
  spec.timeout = std::chrono::seconds(300);
  testsupport::ChildProcess reader(spec);
  ASSERT_EQ(reader.wait().exit_code, 0) << testsupport::Tail(reader.stderr_so_far(), 800);
  // Two known differences, both of semantics (docs/heap-analysis.md):
  //  - an object reachable only through a soft/weak reference: VisualVM leaves it out of its
  //    dominator tree (retained 0); we hang it off the GC roots (it retains what it alone holds);
  //  - class objects: like MAT we treat them as heap objects with references (instance -> class,
  //    class -> loader, protection domain, statics); VisualVM keeps them out of the tree. A few
  //    JDK objects whose retained sets contain or are shared with class objects differ.
  std::istringstream lines(reader.stdout_so_far());
  int compared = 0, equal = 0;
  std::string differences;
  for (std::string name, id; lines >> name >> id;) {
    uint64_t shallow = 0, retained = 0;
    lines >> shallow >> retained;
    ASSERT_NE(id, "missing") << name;
    const uint64_t object_id = std::stoull(id, nullptr, 16);
    auto ours = d.object(object_id);
    ASSERT_TRUE(ours.has_value()) << name << " " << id;
    EXPECT_EQ(ours->shallow_bytes, shallow) << name << " 0x" << id;
    ++compared;
    if (name == "AnalysisHeapProgram$SoftPayload") {
      EXPECT_EQ(retained, 0u) << "VisualVM: not in its dominator tree";
      EXPECT_FALSE(d.immediate_dominator(object_id).has_value());
      EXPECT_EQ(ours->retained_bytes, 16u + 200016u);
      continue;
    }
    if (ours->retained_bytes == retained) {
      ++equal;
      continue;
    }
    differences += name + " 0x" + id + ": ours " + std::to_string(ours->retained_bytes) +
                   ", VisualVM " + std::to_string(retained) + "\n";
    EXPECT_EQ(name.rfind("AnalysisHeapProgram", 0), std::string::npos)
        << "a planted object differs: " << name << " 0x" << id;
    EXPECT_NE(name, "long[]");
  }
  EXPECT_GT(compared, 300);
  EXPECT_GE(equal * 100, (compared - 1) * 98) << differences;
  std::printf("VisualVM cross-check: %d objects, %d with equal retained sizes; differing:\n%s",
              compared, equal, differences.c_str());
  char leak_map[40];  // the planted leak's map agrees
  std::snprintf(leak_map, sizeof leak_map, "0x%llx:",
                static_cast<unsigned long long>(d.instances_of("java.util.HashMap", 1).at(0).id));
  EXPECT_EQ(differences.find(leak_map), std::string::npos) << differences;
}

class JcmdDump : public testing::TestWithParam<int> {};

TEST_P(JcmdDump, PlantedFactsHistogramAndDiff) {
  const auto& dumps = analysis_test::jcmd_dumps(GetParam());
  if (!dumps.present) GTEST_SKIP() << "JDK " << GetParam() << " is not installed";
  ASSERT_EQ(dumps.error, "");
  auto d = HeapDump::open(dumps.before);
  EXPECT_FALSE(d->summary().index_reused);
  EXPECT_EQ(d->summary().id_size, 8u);
  check_planted_structure(*d, true);

  // Every class of the program: jcmd's counts and bytes (the VM's own sizes) match exactly.
  auto jcmd = read_histogram(dumps.histogram);
  auto ours = d->class_histogram();
  int compared = 0;
  for (const auto& [name, counts] : jcmd) {
    if (name.rfind("AnalysisHeapProgram", 0) != 0) continue;
    const auto* c = find_class(ours, name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_EQ(c->instances, counts.first) << name;
    EXPECT_EQ(c->shallow_bytes, counts.second) << name;
    ++compared;
  }
  EXPECT_EQ(compared, 7) << "Leak, DiamondTop, DiamondSide, DiamondShared, RingNode, "
                            "SoftPayload, WeakTarget";
  const auto* longs = find_class(ours, "long[]");
  ASSERT_NE(longs, nullptr);
  EXPECT_EQ(longs->instances, jcmd.at("[J").first);
  EXPECT_EQ(longs->shallow_bytes, jcmd.at("[J").second);

  // The same answers from the saved index.
  auto reopened = HeapDump::open(dumps.before);
  EXPECT_TRUE(reopened->summary().index_reused);
  check_planted_structure(*reopened, true);
  // The reopened summary and histogram (the index's saved summary) equal walking the index.
  analysis_test::expect_saved_summary_equals_walked(dumps.before);

  // After one "grow": exactly GROW more leaks, entries and keys.
  auto after = HeapDump::open(dumps.after);
  auto diff = analysis::diff_classes(*d, *after);
  std::map<std::string, analysis::ClassDiff> by_name;
  for (const auto& c : diff) by_name[c.name] = c;
  ASSERT_TRUE(by_name.count("AnalysisHeapProgram$Leak"));
  const auto& leak = by_name["AnalysisHeapProgram$Leak"];
  EXPECT_EQ(leak.instances_after - leak.instances_before, static_cast<int64_t>(kGrow));
  EXPECT_EQ(leak.shallow_after - leak.shallow_before, static_cast<int64_t>(kGrow * kLeakSize));
  EXPECT_EQ(by_name["java.util.HashMap$Node"].instances_after -
                by_name["java.util.HashMap$Node"].instances_before,
            static_cast<int64_t>(kGrow));

  check_against_visualvm(
      std::string(GetParam() == 17 ? ANALYSIS_JDK17 : ANALYSIS_JDK25) + "/bin/java", dumps.before,
      *d);
  if (GetParam() == 17) check_command_line(dumps);
}

// The program under G1 on JDK 25, whose dead space is filled with filler arrays the dumper
// writes as int[]: they get their own row, int[] and the row together are exactly jcmd's int[]
// and filler arrays ([Ljdk.internal.vm.FillerElement;) of the same moment.
TEST(JcmdG1Dump, FillerArraysAreApartFromIntArrays) {
  const auto& dumps = analysis_test::jcmd_g1_dumps(25);
  if (!dumps.present) GTEST_SKIP() << "JDK 25 is not installed";
  ASSERT_EQ(dumps.error, "");
  auto d = HeapDump::open(dumps.before);
  check_planted_structure(*d, true);
  auto jcmd = read_histogram(dumps.histogram);
  const auto h = d->class_histogram();
  const auto* ints = find_class(h, "int[]");
  ASSERT_NE(ints, nullptr);
  const auto* filler = find_class(h, analysis::detail::kFillerRow);
  const uint64_t jcmd_fillers = jcmd.count("[Ljdk.internal.vm.FillerElement;")
                                    ? jcmd.at("[Ljdk.internal.vm.FillerElement;").first
                                    : 0;
  const auto s = d->summary();
  std::printf("int[]: ours %llu + %llu at the filler layout; jcmd %llu int[] + %llu fillers\n",
              static_cast<unsigned long long>(ints->instances),
              static_cast<unsigned long long>(s.filler_objects),
              static_cast<unsigned long long>(jcmd.at("[I").first),
              static_cast<unsigned long long>(jcmd_fillers));
  EXPECT_EQ(ints->instances + s.filler_objects, jcmd.at("[I").first + jcmd_fillers);
  EXPECT_GE(s.filler_objects, jcmd_fillers);
  if (s.filler_objects > 0) {
    ASSERT_NE(filler, nullptr);
    EXPECT_EQ(filler->instances, s.filler_objects);
    EXPECT_EQ(filler->shallow_bytes, s.filler_bytes);
  }
  EXPECT_EQ(s.damage_warning, "");
}

INSTANTIATE_TEST_SUITE_P(Jdk, JcmdDump, testing::Values(17, 25),
                         [](const auto& info) { return "jdk" + std::to_string(info.param); });

// Our HPROF's dump: object arrays are cut after their last non-null element, so the HashMap's
// table is smaller than the VM's; everything else is as planted.
void check_object_view(const std::unique_ptr<HeapDump>& d);

TEST(HprofDump, PlantedFacts) {
  const auto& dump = analysis_test::hprof_dump();
  ASSERT_EQ(dump.error, "");
  auto d = HeapDump::open(dump.path);
  check_planted_structure(*d, false);
  check_object_view(d);  // here: each dump is made and read by one test (ctest -j runs them apart)
  analysis_test::expect_saved_summary_equals_walked(dump.path);
}

// The object view on the binary dump: WeakTarget's primitive field holds the planted 7; it is
// referred to by the program's class (static STRONG_TARGET) and, weakly, by a WeakReference.
void check_object_view(const std::unique_ptr<HeapDump>& d) {
  auto target = d->instances_of("AnalysisHeapProgram$WeakTarget", 1);
  ASSERT_EQ(target.size(), 1u);
  auto detail = d->object_detail(target[0].id);
  ASSERT_TRUE(detail.has_value());
  EXPECT_EQ(detail->kind, analysis::ObjectDetail::Kind::kInstance);
  ASSERT_EQ(detail->fields.size(), 1u);
  EXPECT_EQ(detail->fields[0].name, "value");
  EXPECT_EQ(detail->fields[0].type, "long");
  EXPECT_EQ(detail->fields[0].value, "7");
  EXPECT_EQ(detail->fields[0].declared_by, "AnalysisHeapProgram$WeakTarget");

  auto page = d->referrers(target[0].id, 0, 100);
  bool by_static = false, by_weak = false;
  for (const auto& r : page.referrers) {
    by_static |=
        r.via == "static STRONG_TARGET" && r.object.class_name == "class AnalysisHeapProgram";
    by_weak |= r.weak && r.object.class_name == "java.lang.ref.WeakReference";
  }
  EXPECT_TRUE(by_static);
  EXPECT_TRUE(by_weak);
  EXPECT_EQ(page.total, page.referrers.size());

  // The big long[1000000]: elements paged, zeros as planted; its referrer is the static BIG.
  auto big = d->instances_of("long[]", 1);
  ASSERT_EQ(big.size(), 1u);
  auto array = d->object_detail(big[0].id, 999'998, 10);
  ASSERT_TRUE(array.has_value());
  EXPECT_EQ(array->length, 1'000'000u);
  ASSERT_EQ(array->elements.size(), 2u);
  EXPECT_EQ(array->elements[1].name, "[999999]");
  EXPECT_EQ(array->elements[1].value, "0");
  auto big_refs = d->referrers(big[0].id, 0, 10);
  ASSERT_EQ(big_refs.total, 1u);
  EXPECT_EQ(big_refs.referrers[0].via, "static BIG");

  // The program's class object: its statics, LEAK_MAP a link to the one HashMap.
  auto klass = d->object_detail(big_refs.referrers[0].object.id);
  ASSERT_TRUE(klass.has_value());
  EXPECT_EQ(klass->kind, analysis::ObjectDetail::Kind::kClass);
  EXPECT_EQ(klass->class_name, "AnalysisHeapProgram");
  auto maps = d->instances_of("java.util.HashMap", 1);
  ASSERT_EQ(maps.size(), 1u);
  bool leak_map = false;
  for (const auto& s : klass->statics)
    leak_map |= s.name == "LEAK_MAP" && s.target_info && s.target_info->id == maps[0].id;
  EXPECT_TRUE(leak_map);

  // A duplicated string's example opens as a String whose value array is in the dump.
  auto strings = d->duplicate_strings(1, 1);
  ASSERT_EQ(strings.top.size(), 1u);
  auto copy = d->object_detail(strings.top[0].example_id);
  ASSERT_TRUE(copy.has_value());
  EXPECT_EQ(copy->object.class_name, "java.lang.String");
  bool value = false;
  for (const auto& f : copy->fields)
    value |= f.name == "value" && f.target_info && f.target_info->class_name == "byte[]";
  EXPECT_TRUE(value);
}

// HPROF's text dump of the same program (format=a): converted, it shows the same planted
// structure — counts, sizes, dominators, paths, soft and weak references — without values.
TEST(HprofTextDump, PlantedFacts) {
  const auto& dump = analysis_test::hprof_text_dump();
  ASSERT_EQ(dump.error, "");
  analysis::OpenOptions no_files;
  no_files.use_index_file = false;
  auto d = HeapDump::open(dump.path, no_files);
  EXPECT_TRUE(d->summary().text_dump);
  check_planted_structure(*d, false, false);
  EXPECT_FALSE(std::filesystem::exists(dump.path + ".jvmprof-heap.hprof"))
      << "without index files, the conversion is scratch space";

  // A ring node: its one field is a link to the next node, whose referrer it is.
  auto ring = d->instances_of("AnalysisHeapProgram$RingNode", 1);
  ASSERT_EQ(ring.size(), 1u);
  auto node = d->object_detail(ring[0].id);
  ASSERT_TRUE(node.has_value());
  ASSERT_EQ(node->fields.size(), 1u) << "text dumps list references only";
  EXPECT_EQ(node->fields[0].name, "next");
  ASSERT_TRUE(node->fields[0].target_info.has_value());
  EXPECT_EQ(node->fields[0].target_info->class_name, "AnalysisHeapProgram$RingNode");
  auto refs = d->referrers(node->fields[0].target, 0, 10);
  bool found = false;
  for (const auto& r : refs.referrers) found |= r.object.id == ring[0].id && r.via == "next";
  EXPECT_TRUE(found);

  // Saved beside the text when index files are wanted, and reused.
  auto saved = HeapDump::open(dump.path);
  EXPECT_TRUE(std::filesystem::exists(dump.path + ".jvmprof-heap.hprof"));
  auto again = HeapDump::open(dump.path);
  EXPECT_TRUE(again->summary().index_reused);
  EXPECT_EQ(again->class_histogram().size(), d->class_histogram().size());
}

// Instances per class as the text itself says: OBJ and ARR lines of its newest complete HEAP DUMP
// section, by class name (`class=NAME@id`, `elem type=NAME@id`); `classes` gets its CLS records.
std::map<std::string, uint64_t> text_counts(const std::string& path, uint64_t& classes) {
  std::ifstream in(path);
  std::map<std::string, uint64_t> section, newest;
  uint64_t section_classes = 0;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("HEAP DUMP BEGIN", 0) == 0) {
      inside = true;
      section.clear();
      section_classes = 0;
    } else if (inside && line == "HEAP DUMP END") {
      inside = false;
      newest = section;
      classes = section_classes;
    } else if (inside && line.rfind("CLS ", 0) == 0) {
      ++section_classes;
    } else if (inside && (line.rfind("OBJ ", 0) == 0 || line.rfind("ARR ", 0) == 0)) {
      const std::string key = line[0] == 'O' ? "class=" : "elem type=";
      const size_t at = line.find(key);
      if (at == std::string::npos || line.back() != ')') continue;
      std::string name = line.substr(at + key.size(), line.size() - 1 - at - key.size());
      const size_t amp = name.rfind('@');
      if (amp != std::string::npos) name.resize(amp);
      ++section[name];
    }
  }
  return newest;
}

// The binary dump our converter makes from a text dump, opened by VisualVM's heap library: every
// class has as many instances there as the text lists, and the planted ones as many as planted.
class HprofTextDumpVisualVm : public testing::TestWithParam<int> {};

TEST_P(HprofTextDumpVisualVm, InstanceCountsPerClassMatchTheText) {
  const int feature = GetParam();
  const std::string jdk = feature == 17 ? ANALYSIS_JDK17 : ANALYSIS_JDK25;
  if (!std::filesystem::exists(jdk + "/bin/java")) {
    std::printf("[ SKIPPED  ] JDK %d is not installed at %s\n", feature, jdk.c_str());
    return;
  }
  if (std::string(ANALYSIS_VISUALVM_CLASSES).empty()) {
    std::printf("[ SKIPPED  ] Debian's visualvm is not installed\n");
    return;
  }
  const auto& dump = analysis_test::hprof_text_dump(feature);
  ASSERT_EQ(dump.error, "");
  auto d = HeapDump::open(dump.path);  // converts beside the text
  const std::string converted = dump.path + ".jvmprof-heap.hprof";
  ASSERT_TRUE(std::filesystem::exists(converted));
  uint64_t class_records = 0;
  const auto text = text_counts(dump.path, class_records);
  ASSERT_FALSE(text.empty());

  testsupport::ChildSpec spec;
  spec.argv = {jdk + "/bin/java", "-cp",
               std::string(ANALYSIS_VISUALVM_CLASSES) + ":" + ANALYSIS_VISUALVM_JAR,
               "VisualVmCounts", converted};
  spec.stdout_path = converted + ".visualvm-counts.txt";
  spec.stderr_path = converted + ".visualvm-counts.err";
  spec.stdin_pipe = false;
  spec.timeout = std::chrono::seconds(300);
  testsupport::ChildProcess reader(spec);
  ASSERT_EQ(reader.wait().exit_code, 0) << testsupport::Tail(reader.stderr_so_far(), 800);
  std::map<std::string, uint64_t> visualvm;
  std::istringstream lines(reader.stdout_so_far());
  for (std::string line; std::getline(lines, line);) {
    const size_t space = line.find(' ');
    ASSERT_NE(space, std::string::npos) << line;
    visualvm[line.substr(space + 1)] += std::stoull(line.substr(0, space));
  }
  uint64_t objects = 0;
  for (const auto& [name, count] : text) {
    EXPECT_EQ(visualvm[name], count) << name;
    objects += count;
  }
  for (const auto& [name, count] : visualvm)
    EXPECT_TRUE(count == 0 || text.count(name))
        << "VisualVM has " << count << " " << name << " the text does not list";
  EXPECT_GT(objects, 5000u);
  // Planted (tests/analysis/java/AnalysisHeapProgram.java).
  const std::map<std::string, uint64_t> planted = {
      {"AnalysisHeapProgram$Leak", 5000},       {"AnalysisHeapProgram$RingNode", 10},
      {"AnalysisHeapProgram$DiamondTop", 1},    {"AnalysisHeapProgram$DiamondSide", 2},
      {"AnalysisHeapProgram$DiamondShared", 1}, {"AnalysisHeapProgram$WeakTarget", 1}};
  for (const auto& [name, count] : planted) {
    EXPECT_EQ(visualvm[name], count) << name;
    EXPECT_EQ(text.count(name) ? text.at(name) : 0, count) << name;
  }
  // And our own reading of the same binary agrees; we count class objects (the CLS records) as
  // instances of java.lang.Class too (docs/heap-analysis.md), VisualVM does not.
  for (const auto& c : d->class_histogram()) {
    if (!text.count(c.name)) continue;
    const uint64_t expected = text.at(c.name) + (c.name == "java.lang.Class" ? class_records : 0);
    EXPECT_EQ(c.instances, expected) << c.name;
  }
  std::printf("VisualVM on the converted text dump (JDK %d): %zu classes, %llu objects agree\n",
              feature, text.size(), static_cast<unsigned long long>(objects));
}

INSTANTIATE_TEST_SUITE_P(Jdk, HprofTextDumpVisualVm, testing::Values(17, 25),
                         [](const testing::TestParamInfo<int>& info) {
                           return "Jdk" + std::to_string(info.param);
                         });

}  // namespace
