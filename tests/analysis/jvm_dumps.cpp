// SPDX-License-Identifier: Apache-2.0
#include "jvm_dumps.h"

#include <unistd.h>

#include <filesystem>
#include <map>

#include "child_process.h"

namespace analysis_test {

namespace {

std::string jdk_home(int feature) {
  return feature == 17 ? ANALYSIS_JDK17 : ANALYSIS_JDK25;
}

// One directory per producer, rewritten by each run: each producer's dumps are made and read by
// one test (one process), so parallel test processes never share them.
std::string work_dir() {
  std::string dir = std::string(ANALYSIS_WORK_DIR) + "/dumps";
  std::filesystem::create_directories(dir);
  return dir;
}

// Runs a JDK tool to completion; "" on success, else a message with its output.
std::string run_tool(const std::vector<std::string>& argv, const std::string& out_path) {
  testsupport::ChildSpec spec;
  spec.argv = argv;
  spec.stdout_path = out_path;
  spec.stderr_path = out_path + ".err";
  spec.stdin_pipe = false;
  spec.timeout = std::chrono::seconds(120);
  testsupport::ChildProcess tool(spec);
  const auto& status = tool.wait();
  if (status.exit_code == 0) return "";
  return tool.command() + " failed: " + testsupport::Tail(tool.stdout_so_far(), 400) +
         testsupport::Tail(tool.stderr_so_far(), 400);
}

// Waits until the program's stdout contains `word` (the program prints it when it is idle).
bool wait_for(testsupport::ChildProcess& p, const std::string& word) {
  while (p.stdout_so_far().find(word) == std::string::npos) {
    if (!p.running()) return false;
    testsupport::ChildProcess::pause();
  }
  return true;
}

// serial: -XX:+UseSerialGC (compacting: no filler objects), else the default collector; only the
// serial run grows the leak and dumps again.
JvmDumps make_jcmd_dumps(int feature, bool serial = true) {
  JvmDumps d;
  const std::string home = jdk_home(feature);
  d.present = std::filesystem::exists(home + "/bin/jcmd");
  if (!d.present) return d;
  const std::string dir = work_dir() + "/jdk" + std::to_string(feature) + (serial ? "" : "-g1");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  testsupport::ChildSpec spec;
  spec.argv = {home + "/bin/java", "-Xmx256m", "-cp", ANALYSIS_CLASSES_DIR, "AnalysisHeapProgram"};
  if (serial) spec.argv.insert(spec.argv.begin() + 2, "-XX:+UseSerialGC");
  spec.stdout_path = dir + "/program.out";
  spec.stderr_path = dir + "/program.err";
  spec.timeout = std::chrono::seconds(180);
  testsupport::ChildProcess program(spec);
  if (!wait_for(program, "ready")) {
    d.error = "program did not start: " + testsupport::Tail(program.stderr_so_far(), 400);
    return d;
  }
  const std::string jcmd = home + "/bin/jcmd", pid = std::to_string(program.pid());
  d.before = dir + "/before.hprof";
  d.after = serial ? dir + "/after.hprof" : "";
  d.histogram = dir + "/histogram.txt";
  d.error = run_tool({jcmd, pid, "GC.heap_dump", d.before}, dir + "/jcmd1.out");
  if (d.error.empty()) d.error = run_tool({jcmd, pid, "GC.class_histogram"}, d.histogram);
  if (d.error.empty() && serial) {
    program.write_stdin("grow\n");
    if (!wait_for(program, "grown")) d.error = "program did not grow";
  }
  if (d.error.empty() && serial)
    d.error = run_tool({jcmd, pid, "GC.heap_dump", d.after}, dir + "/jcmd2.out");
  program.close_stdin();
  program.wait();
  return d;
}

// format: "b" (java.hprof) or "a" (java.hprof.txt); feature: the JDK; tag: names the
// directory of the test that makes and reads it.
HprofDump make_hprof_dump(const std::string& format = "b", int feature = 17,
                          const std::string& tag = "") {
  HprofDump d;
  const std::string dir = work_dir() + "/hprof-" + format + tag;
  const std::string jdk = jdk_home(feature);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  d.path = dir + (format == "b" ? "/java.hprof" : "/java.hprof.txt");
  testsupport::ChildSpec spec;
  spec.argv = {jdk + "/bin/java",
               "-Xmx256m",
               "-agentpath:" + std::string(ANALYSIS_HPROF_LIB) + "=heap=dump,format=" + format +
                   ",file=" + d.path,
               "-cp",
               ANALYSIS_CLASSES_DIR,
               "AnalysisHeapProgram"};
  spec.set_env = {{"LD_LIBRARY_PATH", std::filesystem::path(ANALYSIS_HPROF_LIB).parent_path()}};
  spec.stdout_path = dir + "/program.out";
  spec.stderr_path = dir + "/program.err";
  spec.stdin_pipe = false;  // end of input at once: the program exits and HPROF dumps
  spec.timeout = std::chrono::seconds(300);
  testsupport::ChildProcess program(spec);
  const auto& status = program.wait();
  if (status.exit_code != 0 || !std::filesystem::exists(d.path))
    d.error = program.command() + " failed: " + testsupport::Tail(program.stderr_so_far(), 600);
  return d;
}

}  // namespace

const JvmDumps& jcmd_dumps(int feature) {
  static std::map<int, JvmDumps> made;
  auto it = made.find(feature);
  if (it == made.end()) it = made.emplace(feature, make_jcmd_dumps(feature)).first;
  return it->second;
}

const JvmDumps& jcmd_g1_dumps(int feature) {
  static std::map<int, JvmDumps> made;
  auto it = made.find(feature);
  if (it == made.end()) it = made.emplace(feature, make_jcmd_dumps(feature, false)).first;
  return it->second;
}

const HprofDump& hprof_dump() {
  static const HprofDump d = make_hprof_dump();
  return d;
}

const HprofDump& hprof_text_dump() {
  static const HprofDump d = make_hprof_dump("a");
  return d;
}

const HprofDump& hprof_text_dump(int feature) {
  static std::map<int, HprofDump> made;
  auto it = made.find(feature);
  if (it == made.end())
    it = made.emplace(feature, make_hprof_dump("a", feature, "-counts-" + std::to_string(feature)))
             .first;
  return it->second;
}

}  // namespace analysis_test
