// SPDX-License-Identifier: Apache-2.0
// cpu=samples attached to a running JVM (jcmd PID JVMTI.agent_load libhprof.so OPTIONS): a thread
// that started before the attach and spends most of its CPU in HotSpot's intrinsic stubs
// (hproftest.AttachedIntrinsics) gets one sample per interval of the CPU time the kernel counted
// for it (/proc/PID/task/TID/stat), and its samples name Java methods as they do when HPROF is
// loaded at start-up (IntrinsicSplitTest): the stack walker fails in a stub, and the sample is
// walked again from the stub's Java caller, which needs the thread's stack bounds. A thread that
// ran before the attach never noted them at its start; before the runtime read them from the VM,
// 60-90 % of such a thread's samples were unattributable.
#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>

#include "child_process.h"
#include "hprof_test.h"

namespace hproftest {
namespace {

constexpr int kIntervalMs = 10;

// The kernel thread named `name` (its comm, which HotSpot sets to the Java thread's name) in
// process `pid`, or 0.
pid_t FindTask(pid_t pid, const std::string& name) {
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  std::unique_ptr<DIR, int (*)(DIR*)> dir(opendir(tasks.c_str()), closedir);
  if (!dir) return 0;
  while (const dirent* e = readdir(dir.get())) {
    if (e->d_name[0] == '.') continue;
    std::string comm = ReadFile(tasks + "/" + e->d_name + "/comm");
    if (!comm.empty() && comm.back() == '\n') comm.pop_back();
    if (comm == name) return static_cast<pid_t>(std::stol(e->d_name));
  }
  return 0;
}

// The CPU time (user + system, s) the kernel counted for thread `tid` of `pid`, or -1.
double TaskCpuSeconds(pid_t pid, pid_t tid) {
  const std::string stat =
      ReadFile("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat");
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return -1;
  // After "pid (comm)": state is field 3, utime field 14, stime field 15.
  std::istringstream fields(stat.substr(paren + 2));
  std::string field;
  double utime = -1, stime = -1;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14) utime = std::stod(field);
    if (i == 15) stime = std::stod(field);
  }
  if (utime < 0 || stime < 0) return -1;
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

class AttachSamplingTest : public HprofTest {
 protected:
  // jcmd PID JVMTI.agent_load libhprof.so OPTIONS, run to its end; true when the agent loaded.
  bool AgentLoad(pid_t pid, const std::string& options, std::string* out) {
    testsupport::ChildSpec spec;
    // jcmd reads `a=b` as one of its own arguments: an option string with `=` goes in quotes.
    const std::string argument =
        options.find('=') != std::string::npos ? "\"" + options + "\"" : options;
    spec.argv = {jdk().home + "/bin/jcmd", std::to_string(pid), "JVMTI.agent_load",
                 LibDir() + "/libhprof.so", argument};
    spec.stdout_path = path("_jcmd_out.txt");
    spec.stderr_path = path("_jcmd_err.txt");
    spec.stdin_pipe = false;
    spec.timeout = std::chrono::seconds(120);
    spec.unset_env = {"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"};
    testsupport::ChildProcess jcmd(spec);
    const testsupport::ChildStatus& status = jcmd.wait();
    *out = ReadFile(spec.stdout_path) + ReadFile(spec.stderr_path);
    // jcmd prints the agent's Agent_OnAttach result as "return code: N".
    return !status.timed_out && status.exit_code == 0 &&
           out->find("return code: 0") != std::string::npos;
  }
};

TEST_P(AttachSamplingTest, ThreadRunningBeforeTheAttachIsSampledPerIntervalOfItsCpu) {
  JavaCommand command;
  command.main_class = "hproftest.AttachedIntrinsics";
  // JDK 21+ warns about agents loaded into a running VM unless the VM allows them up front.
  if (jdk().feature >= 21) command.vm_args.push_back("-XX:+EnableDynamicAgentLoading");
  command.timeout = std::chrono::seconds(400);
  JavaProcess jvm(jdk(), command, dir().path());
  ASSERT_TRUE(jvm.wait_for_stdout("RUNNING")) << jvm.wait().describe();
  const pid_t tid = FindTask(jvm.pid(), "Intrinsics");
  ASSERT_NE(tid, 0) << "no thread named Intrinsics in /proc/" << jvm.pid() << "/task";

  const double cpu_before_attach = TaskCpuSeconds(jvm.pid(), tid);
  std::string jcmd_out;
  ASSERT_TRUE(AgentLoad(jvm.pid(),
                        "cpu=samples,interval=" + std::to_string(kIntervalMs) +
                            ",thread=y,depth=16,cutoff=0,file=" + path("p.txt"),
                        &jcmd_out))
      << jcmd_out << jvm.stderr_so_far();
  // The sampler runs from before the attach command returns until after the stop command
  // returns: the CPU between these two readings was all sampled.
  const double cpu_attached = TaskCpuSeconds(jvm.pid(), tid);
  // 3 s of the thread's CPU (about 300 samples at 10 ms), however long the machine takes to give
  // it that: a count against the CPU the thread got, not a timed wait.
  ASSERT_TRUE(jvm.wait_until([&] { return TaskCpuSeconds(jvm.pid(), tid) >= cpu_attached + 3; }))
      << jvm.wait().describe();
  const double cpu_sampled = TaskCpuSeconds(jvm.pid(), tid) - cpu_attached;
  ASSERT_TRUE(AgentLoad(jvm.pid(), "stop", &jcmd_out)) << jcmd_out << jvm.stderr_so_far();
  const double cpu_at_most = TaskCpuSeconds(jvm.pid(), tid) - cpu_before_attach;
  jvm.write_stdin("quit\n");
  const RunResult run = jvm.wait();
  ASSERT_TRUE(run.exited(0)) << run.describe();
  ASSERT_NE(run.out.find("DONE"), std::string::npos) << run.describe();

  const Profile p = ReadProfile("p.txt");
  ASSERT_WELL_FORMED(p, run);
  ASSERT_EQ(p.cpu_samples.size(), 1u) << run.describe();
  const auto worker = p.thread_serial("Intrinsics");
  ASSERT_TRUE(worker.has_value()) << "the thread that ran before the attach was not described";
  uint64_t samples = 0, unattributable = 0;
  for (const CostRow& r : p.cpu_samples[0].rows) {
    const Trace* t = p.trace(r.trace);
    ASSERT_NE(t, nullptr);
    if (t->thread != worker) continue;
    samples += r.count;
    const std::string top = p.top_method(r.trace);
    if (top.rfind("<unknown Java frame>.", 0) == 0 || top.rfind("<in VM code>.", 0) == 0) {
      unattributable += r.count;
    }
  }
  const std::string counts = "Intrinsics: " + std::to_string(samples) + " samples (" +
                             std::to_string(unattributable) + " unattributable) for " +
                             std::to_string(cpu_sampled) + " s of CPU sampled throughout, " +
                             std::to_string(cpu_at_most) +
                             " s from before the attach to after "
                             "the stop\n";
  std::printf("%s", counts.c_str());  // the measured numbers, in the test's log
  // One sample per 10 ms of the thread's CPU. The CPU-time timer fires at the scheduler's tick
  // (4 ms at 250 Hz) and a signal that stands for several intervals counts as that many samples,
  // so the count follows CPU time to within one interval per arming; /proc's clock-tick counters
  // (10 ms each) add one interval at either reading. 10 % below the CPU sampled throughout (30 of
  // ~300 samples) is therefore loss, not rounding; 10 % above all the CPU from before the attach
  // to after the stop is counting twice. Machine load changes how long this takes, not the
  // counts: the timers follow the thread's CPU time, not the wall clock.
  const double interval_s = kIntervalMs / 1000.0;
  EXPECT_GE(static_cast<double>(samples), 0.9 * cpu_sampled / interval_s)
      << counts << run.describe();
  EXPECT_LE(static_cast<double>(samples), 1.1 * cpu_at_most / interval_s + 2) << counts;
  // As at start-up (IntrinsicSplitTest: at least 95 % of the signals walked), at most 5 % of the
  // thread's samples name no Java method. The stubs' samples are walked again from their Java
  // caller; what is left is time in the VM proper (its compiler's and collector's requests).
  EXPECT_LE(static_cast<double>(unattributable), 0.05 * static_cast<double>(samples))
      << counts << run.describe();
}

INSTANTIATE_FOR_JDKS(AttachSamplingTest);

}  // namespace
}  // namespace hproftest
