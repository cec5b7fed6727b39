// SPDX-License-Identifier: Apache-2.0
// Conformance agents of JVMPI's era attached through libjvmpi.so to a running JVM that was started
// without any agent (jcmd PID JVMTI.agent_load libjvmpi.so '"<agent>:<options>"'), and stopped
// again (options `stop`). An agent that starts late must still hear of every class and thread that
// existed before it: the start-up batch before JVM_INIT_DONE, and RequestEvent for any of them.
#include <algorithm>
#include <set>
#include <sstream>

#include "jvmpi_test.h"

namespace jvmpitest {
namespace {

class JvmpiAttach : public JvmpiTest {
 protected:
  JvmOptions Target() const {
    JvmOptions o;
    o.with_agentpath = false;
    o.main_class = "jvmpitest.StartupProgram";
    o.args = {"wait"};
    // JDK 21+ warns about agents loaded into a running VM unless the VM allows them up front.
    if (jdk().feature >= 21) o.vm_args.push_back("-XX:+EnableDynamicAgentLoading");
    o.timeout = std::chrono::seconds(170);
    return o;
  }

  // jcmd PID ARGS..., run to its end; its stdout and stderr.
  std::string Jcmd(pid_t pid, const std::vector<std::string>& args, int* exit_code) const {
    testsupport::ChildSpec spec;
    spec.argv = {jdk().home + "/bin/jcmd", std::to_string(pid)};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.stdout_path = Stem() + ".jcmd.out";
    spec.stderr_path = Stem() + ".jcmd.err";
    spec.stdin_pipe = false;
    spec.timeout = std::chrono::seconds(120);
    testsupport::ChildProcess jcmd(spec);
    const testsupport::ChildStatus& status = jcmd.wait();
    *exit_code = status.timed_out ? -1 : status.exit_code;
    return ReadFile(spec.stdout_path) + ReadFile(spec.stderr_path);
  }

  // Loads libjvmpi.so with `options` (jcmd reads a=b as its own argument unless quoted).
  bool AgentLoad(pid_t pid, const std::string& options, std::string* out) const {
    int code = -1;
    *out = Jcmd(pid, {"JVMTI.agent_load", JvmpiLibrary(), "\"" + options + "\""}, &code);
    return code == 0 && out->find("return code: 0") != std::string::npos;
  }
};

// The instance classes the VM lists as loaded (jcmd VM.class_hierarchy: "|--name/loader"), without
// hidden classes (named with their address) and without the attach's own.
std::set<std::string> LoadedClasses(const std::string& hierarchy) {
  std::set<std::string> names;
  std::istringstream in(hierarchy);
  for (std::string line; std::getline(in, line);) {
    const size_t start = line.find_first_not_of("|- ");
    const size_t slash = line.find('/', start);
    if (start == std::string::npos || slash == std::string::npos) continue;
    const std::string name = line.substr(start, slash - start);
    if (line.find("/0x", start) == slash) continue;  // a hidden class
    if (name.find('.') == std::string::npos) continue;
    names.insert(name);
  }
  return names;
}

TEST_P(JvmpiAttach, ClassesLoadedBeforeTheAttachAreAnnouncedAndRequestable) {
  JvmProcess jvm(jdk(), Target(), Stem());
  ASSERT_TRUE(jvm.WaitForStdout("READY", std::chrono::seconds(60)));
  int code = -1;
  const std::set<std::string> before =
      LoadedClasses(Jcmd(jvm.pid(), {"VM.class_hierarchy"}, &code));
  ASSERT_EQ(code, 0);
  ASSERT_GT(before.size(), 300u);
  std::string out;
  ASSERT_TRUE(AgentLoad(jvm.pid(), AgentLibrary("classes") + ":log=" + LogPath(), &out)) << out;
  ASSERT_TRUE(AgentLoad(jvm.pid(), "stop", &out)) << out;
  jvm.CloseStdin();
  const JvmResult r = jvm.Wait();
  ASSERT_TRUE(r.exited(0)) << r.Describe();

  const std::vector<Line> log = Log();
  std::set<std::string> announced;
  size_t init_done_at = 0, shut_down_at = 0;
  for (const Line& l : log) {
    if (l.tag == "CL" && l.get("requested") == "0" && l.get("init_done") == "0") {
      announced.insert(l.get("name"));
    }
    if (l.tag == "INIT_DONE") init_done_at = l.index;
    if (l.tag == "SHUT_DOWN") shut_down_at = l.index;
  }
  ASSERT_GT(init_done_at, 0u) << "no JVM_INIT_DONE\n" << r.Describe();
  EXPECT_GT(shut_down_at, init_done_at) << "no JVM_SHUT_DOWN at the stop\n" << r.Describe();
  // The batch holds the prepared classes; a class loaded but not yet linked (the JDK's classes
  // restored from the CDS archive that nothing used yet) gets CLASS_LOAD when the VM links it, as
  // at start-up: linking it for the agent would change when its linkage errors surface. So: the
  // program's classes and the core classes it used are in the batch, and the batch holds most of
  // what the VM lists as loaded (a small program leaves about 80 of 450-550 unlinked).
  for (const char* name : {"java.lang.Object", "java.lang.String", "java.lang.Thread",
                           "jvmpitest.StartupProgram", "jvmpitest.Facts"}) {
    EXPECT_EQ(announced.count(name), 1u) << name;
  }
  size_t found = 0;
  for (const std::string& name : before) found += announced.count(name);
  EXPECT_GE(found * 10, before.size() * 7)
      << found << " of " << before.size() << " loaded classes announced before JVM_INIT_DONE";
  // RequestEvent(CLASS_LOAD) of a class from before the attach (the agent asks for
  // java.lang.String at JVM_INIT_DONE) is answered on the requesting thread.
  const auto requested = Select(log, "CLASS", {{"name", "java.lang.String"}, {"requested", "1"}});
  ASSERT_EQ(requested.size(), 1u) << r.Describe();
  EXPECT_EQ(requested[0].get("during_request"), "1");
}

TEST_P(JvmpiAttach, ThreadsRunningBeforeTheAttachAreAnnounced) {
  JvmProcess jvm(jdk(), Target(), Stem());
  ASSERT_TRUE(jvm.WaitForStdout("READY", std::chrono::seconds(60)));
  std::string out;
  ASSERT_TRUE(AgentLoad(jvm.pid(), AgentLibrary("threads") + ":log=" + LogPath(), &out)) << out;
  ASSERT_TRUE(AgentLoad(jvm.pid(), "stop", &out)) << out;
  // A second session of the same library in the same VM hears of the threads again.
  const std::string second_log = Stem() + ".second.log";
  ASSERT_TRUE(AgentLoad(jvm.pid(), AgentLibrary("threads") + ":log=" + second_log, &out)) << out;
  ASSERT_TRUE(AgentLoad(jvm.pid(), "stop", &out)) << out;
  jvm.CloseStdin();
  const JvmResult r = jvm.Wait();
  ASSERT_TRUE(r.exited(0)) << r.Describe();
  for (const std::string& path : {LogPath(), second_log}) {
    const std::vector<Line> log = ReadLog(path);
    // Before JVM_INIT_DONE. (The agent's own flag for it is a static of the library, which
    // HotSpot keeps loaded: in the second session it still says 1, so the order is read here.)
    size_t init_done_at = log.size();
    for (const Line& l : log) {
      if (l.tag == "INIT_DONE") init_done_at = std::min(init_done_at, l.index);
    }
    std::string started;  // the raw lines: thread names have spaces
    for (const Line& l : Select(log, "TS")) {
      if (l.index > init_done_at) continue;
      started += l.raw + "\n";
      // The runtime found the thread's JNIEnv: GetThreadObject answers with the thread's ID.
      EXPECT_EQ(l.get("get_thread_object"), l.get("id")) << l.raw;
    }
    for (const char* name : {"main", "Reference Handler", "Finalizer", "Signal Dispatcher"}) {
      EXPECT_NE(started.find(std::string("TS\tname=") + name + "\t"), std::string::npos)
          << name << " in " << path << "\n"
          << started;
    }
    EXPECT_EQ(Select(log, "SHUT_DOWN").size(), 1u) << path;
  }
}

JVMPI_TEST_SUITE(JvmpiAttach);

}  // namespace
}  // namespace jvmpitest
