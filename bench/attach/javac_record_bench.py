#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`jvmprof record PID -d SECONDS` on a running javac: the CPU it costs, and how many samples it
takes per CPU-second.

One JVM compiles a generated source tree ITERATIONS times with the JDK's compiler
(attachbench.JavacLoop, javac in the JVM; bench/hprof/gen_sources.py writes the tree). Three
configurations, one JVM at a time, in a rotating order per round:

  N   never attached
  P   `jvmprof record PID -d SECONDS -o F.txt cpu=samples,interval=MS` started once the first
      compilation has ended (attached mid-run, to a warm JVM that was started without an agent)
  N'  never attached again (A/A: what two identical runs differ by)

Each run does the same work, so the CPU time of the whole java process (user + system, every
thread, from wait4) is compared: P/N is the cost of the recording spread over the run; (P - N)
divided by the CPU the JVM used while it was recorded is the cost per recorded CPU-second. Samples
per CPU-second: the CPU SAMPLES total of P's report over the CPU the JVM used between the start
and the end of `jvmprof record` (at 10 ms, 100 if every thread's every 10 ms of CPU is sampled).
The window includes the attach and the stop, so the samples are also given per CPU-second of the
SECONDS profiled, estimated from the window's CPU rate. A run in which javac ends before the
recording does fails the bench (raise --iterations).

  python3 bench/attach/javac_record_bench.py --build build [--jdk HOME] [--rounds R]
      [--iterations N] [--duration S] [--interval MS] [--packages P] [--classes C]"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


# Threads of the JVM that no Java-level sampler can sample: HotSpot's compilers and collectors and
# its own service threads (not Java threads, or Java threads hidden from JVMTI), and the profiler's
# own ("JVMPI ...", "HPROF ..."), by their kernel names (15 characters at most).
NOT_SAMPLED = ("C1 CompilerThre", "C2 CompilerThre", "GC Thread#", "G1 ", "VM Thread",
               "VM Periodic Tas", "Sweeper thread", "Service Thread", "Monitor Deflati",
               "Notification Th", "JVMPI", "HPROF")


def thread_cpu(pid):
    """{(tid, name): user + system CPU seconds} of every thread of a running process (/proc)."""
    out = {}
    tick = os.sysconf("SC_CLK_TCK")
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return out
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                stat = f.read()
        except OSError:
            continue  # ended meanwhile
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat.rsplit(")", 1)[1].split()
        out[(int(tid), name)] = (int(fields[11]) + int(fields[12])) / tick
    return out


def cpu_between(before, after, sampled=None):
    """CPU seconds used between two thread_cpu() readings: all threads, or only the threads a
    Java sampler can sample (sampled=True) or cannot (sampled=False)."""
    total = 0.0
    for key, seconds in after.items():
        if sampled is not None and sampled == key[1].startswith(NOT_SAMPLED):
            continue
        total += seconds - before.get(key, 0.0)
    return total


def alive(pid):
    """Whether our child `pid` still runs, without reaping it (wait4 gets its rusage later)."""
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None


def run_once(java, classes, javac_args, iterations, record=None):
    """One javac loop; `record` (jvmprof, seconds, options, report) records it after the first
    compilation. Returns (CPU seconds of the whole run, the recording's readings or None): the
    readings are thread_cpu() at the start of `jvmprof record`, when it says it is profiling (the
    sampler runs), SECONDS later (the stop is due) and at its end, with the wall clock of each."""
    # The runtime's statistics line at the stop (JVMPI_SAMPLER_STATS=1, every run alike): the
    # CPU its sampled threads used while armed.
    err_path = os.path.join(os.path.dirname(record[3]) if record else tempfile.gettempdir(),
                            "jvm-stderr-%d.txt" % os.getpid())
    with open(err_path, "w") as err_file:
        jvm = subprocess.Popen([java, "-cp", classes, "attachbench.JavacLoop", str(iterations)]
                               + javac_args, stdout=subprocess.PIPE, stderr=err_file, text=True,
                               env=dict(os.environ, JVMPI_SAMPLER_STATS="1"))
    readings = None
    try:
        first = jvm.stdout.readline()
        if not first.startswith("ITER 1"):
            raise SystemExit("javac did not run: %r" % first)
        if record is not None:
            jvmprof, seconds, options, report = record
            readings = [(time.monotonic(), thread_cpu(jvm.pid))]
            r = subprocess.Popen([jvmprof, "record", str(jvm.pid), "-d", str(seconds), "-o",
                                  report, options], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            said = r.stderr.readline()
            if "profiling JVM" in said:
                readings.append((time.monotonic(), thread_cpu(jvm.pid)))
                due = time.monotonic() + seconds
                while time.monotonic() < due and alive(jvm.pid):
                    time.sleep(min(0.5, max(0.0, due - time.monotonic())))
                readings.append((time.monotonic(), thread_cpu(jvm.pid)))
            out, err = r.communicate()
            readings.append((time.monotonic(), thread_cpu(jvm.pid)))
            if r.returncode != 0 or len(readings) != 4 or not alive(jvm.pid):
                raise SystemExit("the recording did not end while javac ran (raise --iterations): "
                                 "%s%s%s" % (said, out, err))
        rest = jvm.stdout.read()
        if "DONE" not in rest:
            raise SystemExit("javac did not finish: %r" % rest[-200:])
    except BaseException:
        # The JVM is not left running (or waited for) when the run has already failed.
        if alive(jvm.pid):
            jvm.kill()
        raise
    finally:
        jvm.stdout.close()
        # Reaps the JVM (nothing else did: alive() does not) with its CPU time.
        _, status, usage = os.wait4(jvm.pid, 0)
        jvm.returncode = os.waitstatus_to_exitcode(status)
    with open(err_path) as f:
        armed = re.findall(r"cpu sampler: .*armed_cpu_ms=(\d+)", f.read())
    os.unlink(err_path)
    if jvm.returncode != 0:
        sys.exit("javac loop exited %d" % jvm.returncode)
    if readings is not None:
        readings.append(int(armed[-1]) / 1000.0 if armed else None)
    return usage.ru_utime + usage.ru_stime, readings


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="the build directory")
    ap.add_argument("--jdk", default="/usr/lib/jvm/java-17-openjdk-amd64")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=12,
                    help="compilations of the tree per run (the run must outlast the recording)")
    ap.add_argument("--duration", type=int, default=30, help="jvmprof record -d SECONDS")
    ap.add_argument("--interval", type=int, default=10, help="HPROF's interval= in ms")
    ap.add_argument("--packages", type=int, default=3)
    ap.add_argument("--classes", type=int, default=25, help="classes per package")
    a = ap.parse_args()
    if min(a.rounds, a.iterations, a.duration, a.interval, a.packages, a.classes) <= 0:
        ap.error("every count must be positive")
    if a.iterations < 2:
        ap.error("--iterations must be at least 2 (the recording starts after the first)")
    jvmprof = os.path.join(a.build, "src", "jvmprof", "jvmprof")
    classes = os.path.join(a.build, "bench", "attach", "classes")
    java = os.path.join(a.jdk, "bin", "java")
    for path in (jvmprof, os.path.join(classes, "attachbench", "JavacLoop.class"), java):
        if not os.path.exists(path):
            ap.error("not found: %s (build the targets jvmprof and bench_attach_java)" % path)
    work = tempfile.mkdtemp(prefix="jvmprof-javac-record-bench-")
    try:
        tree = os.path.join(work, "tree")
        subprocess.run([sys.executable, os.path.join(HERE, "..", "hprof", "gen_sources.py"), tree,
                        str(a.packages), str(a.classes)], check=True, stdout=subprocess.DEVNULL)
        files = sorted(os.path.join(d, f) for d, _, fs in os.walk(tree) for f in fs
                       if f.endswith(".java"))
        javac_args = ["-nowarn", "-proc:none", "-d", os.path.join(work, "out"),
                      "@" + os.path.join(work, "files.txt")]
        with open(os.path.join(work, "files.txt"), "w") as f:
            f.write("\n".join(files) + "\n")
        options = "cpu=samples,interval=%d" % a.interval
        load = os.getloadavg()[0]
        began = time.time()
        cpu = {"N": [], "P": [], "N'": []}
        windows, samples, counts = [], [], []
        order = list(cpu)
        for r in range(a.rounds):
            for k in order[r % 3:] + order[:r % 3]:
                report = os.path.join(work, "p%d.txt" % r)
                record = (jvmprof, a.duration, options, report) if k == "P" else None
                total, window = run_once(java, classes, javac_args, a.iterations, record)
                cpu[k].append(total)
                if k == "P":
                    with open(report) as f:
                        m = re.search(r"CPU SAMPLES BEGIN \(total = (\d+)(.*)\)", f.read())
                    if m is None:
                        sys.exit("round %d: the report has no CPU SAMPLES" % r)
                    windows.append(window)
                    samples.append(int(m.group(1)))
                    counts.append(m.group(2).strip(", "))
        med = {k: statistics.median(v) for k, v in cpu.items()}
        per_round = {k: statistics.median(x / n for x, n in zip(cpu[k], cpu["N"])) for k in cpu}
        print("javac loop: %d compilations of %d generated classes per run, %d rounds, JDK %s"
              % (a.iterations, len(files), a.rounds, a.jdk))
        print("| row | run | median CPU s (user+sys) | ratio of medians | median of per-round "
              "ratios |")
        print("|---|---|---|---|---|")
        names = {"N": "never attached",
                 "P": "`jvmprof record PID -d %d %s` after the first compilation"
                      % (a.duration, options),
                 "N'": "never attached (A/A)"}
        for k in ("N", "P", "N'"):
            print("| %s | %s | %.2f | %.3f | %.3f |" % (k, names[k], med[k], med[k] / med["N"],
                                                       per_round[k]))
        # Per recording: the whole `jvmprof record` window (attach, SECONDS profiled, stop), and
        # the profiled seconds alone (from its "profiling" line, when the sampler runs, to SECONDS
        # later) split into the threads a Java sampler samples and those it cannot (NOT_SAMPLED).
        rows = []
        for n, rd in zip(samples, windows):
            (t0, c0), (t1, c1), (t2, c2), (t3, c3), armed = rd
            rows.append({"samples": n, "window_cpu": cpu_between(c0, c3), "window_s": t3 - t0,
                         "armed_cpu": armed,
                         "attach_s": t1 - t0, "stop_s": t3 - t2,
                         "java_cpu": cpu_between(c1, c2, True),
                         "vm_cpu": cpu_between(c1, c2, False),
                         "java_window_cpu": cpu_between(c0, c3, True)})

        def median(key):
            return statistics.median(row[key] if isinstance(key, str) else key(row)
                                     for row in rows)
        window = median("window_cpu")
        print("recorded: median %.2f CPU s of the JVM while `jvmprof record` ran (%.1f s of wall "
              "time for -d %d: the attach %.1f s and the stop %.1f s besides); added CPU per "
              "recorded CPU-second (P - N medians over it) %.3f; A/A (N' - N) over it %.3f"
              % (window, median("window_s"), a.duration, median("attach_s"), median("stop_s"),
                 (med["P"] - med["N"]) / window, (med["N'"] - med["N"]) / window))
        print("profiled seconds: median %.2f CPU s in the Java threads, %.2f CPU s in the VM's "
              "compiler, collector and service threads (not sampled by any Java-level sampler)"
              % (median("java_cpu"), median("vm_cpu")))
        # At INTERVAL ms every sampled thread should give 1000/INTERVAL samples per CPU-second.
        # The sampler starts inside the attach and ends inside the stop, so the Java threads' CPU
        # of the profiled seconds is a little less than what was sampled (an upper estimate of
        # the rate) and that of the whole window more (a lower one).
        print("samples: median %d per recording; per CPU-second of the Java threads %.1f (profiled "
              "seconds) to %.1f (whole window), expected %.0f; per CPU-second of the whole JVM "
              "over the whole window %.1f (the figure before the split)"
              % (median("samples"), median(lambda w: w["samples"] / w["java_cpu"]),
                 median(lambda w: w["samples"] / w["java_window_cpu"]), 1000.0 / a.interval,
                 median(lambda w: w["samples"] / w["window_cpu"])))
        if all(w["armed_cpu"] for w in rows):
            # The runtime's own count of the CPU it sampled: the exact expectation.
            print("samples per CPU-second the runtime's timers were armed for (armed_cpu_ms of "
                  "JVMPI_SAMPLER_STATS): median %.1f of %.0f expected (every recording: %s)"
                  % (median(lambda w: w["samples"] / w["armed_cpu"]), 1000.0 / a.interval,
                     ", ".join("%d/%.2f s" % (w["samples"], w["armed_cpu"]) for w in rows)))
        print("every recording: " + "; ".join(
            "%d samples, Java %.2f / VM %.2f CPU s profiled, window %.2f CPU s in %.1f s"
            % (w["samples"], w["java_cpu"], w["vm_cpu"], w["window_cpu"], w["window_s"])
            for w in rows))
        print("HPROF's counts beside each total: " + "; ".join(counts))
        print("every run's CPU s: " + "; ".join("%s %s" % (k, ["%.2f" % x for x in cpu[k]])
                                                for k in cpu))
        print("1-minute load average %.2f at the start, %.2f at the end; %.0f s in all"
              % (load, os.getloadavg()[0], time.time() - began))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
