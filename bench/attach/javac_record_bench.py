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


def process_cpu_seconds(pid):
    """user + system CPU seconds of a running process (/proc/PID/stat), or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_once(java, classes, javac_args, iterations, record=None):
    """One javac loop; `record` (jvmprof, seconds, options, report) records it after the first
    compilation. Returns (CPU seconds of the whole run, (CPU seconds, wall seconds) of the JVM
    while `jvmprof record` ran, or None)."""
    jvm = subprocess.Popen([java, "-cp", classes, "attachbench.JavacLoop", str(iterations)]
                           + javac_args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           text=True)
    window = None
    try:
        first = jvm.stdout.readline()
        if not first.startswith("ITER 1"):
            sys.exit("javac did not run: %r" % first)
        if record is not None:
            jvmprof, seconds, options, report = record
            start = process_cpu_seconds(jvm.pid)
            began = time.monotonic()
            r = subprocess.run([jvmprof, "record", str(jvm.pid), "-d", str(seconds), "-o", report,
                                options], capture_output=True, text=True)
            end = process_cpu_seconds(jvm.pid)
            if r.returncode != 0 or jvm.poll() is not None or start is None or end is None:
                sys.exit("the recording did not end while javac ran (raise --iterations): %s%s"
                         % (r.stdout, r.stderr))
            window = (end - start, time.monotonic() - began)
        rest = jvm.stdout.read()
        if "DONE" not in rest:
            sys.exit("javac did not finish: %r" % rest[-200:])
    finally:
        jvm.stdout.close()
        _, status, usage = os.wait4(jvm.pid, 0)
        jvm.returncode = os.waitstatus_to_exitcode(status)
    if jvm.returncode != 0:
        sys.exit("javac loop exited %d" % jvm.returncode)
    return usage.ru_utime + usage.ru_stime, window


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
        window = statistics.median(w[0] for w in windows)
        print("recorded: median %.2f CPU s of the JVM while `jvmprof record` ran (%.1f s of wall "
              "time for -d %d: the attach and the stop besides); added CPU per recorded "
              "CPU-second (P - N medians over it) %.3f; A/A (N' - N) over it %.3f"
              % (window, statistics.median(w[1] for w in windows), a.duration,
                 (med["P"] - med["N"]) / window, (med["N'"] - med["N"]) / window))
        # The sampler runs for the -d seconds only; the CPU of those is estimated from the whole
        # window's CPU rate (javac's use of the CPU is even over a compilation).
        print("samples: median %d per recording, %.1f per CPU-second of the whole window, %.1f "
              "per CPU-second of the %d s profiled (estimated; every run: %s)"
              % (statistics.median(samples),
                 statistics.median(s / w[0] for s, w in zip(samples, windows)),
                 statistics.median(s / (w[0] * a.duration / w[1]) for s, w in zip(samples, windows)),
                 a.duration,
                 ", ".join("%d/%.1f CPU s/%.1f s" % (s, w[0], w[1])
                           for s, w in zip(samples, windows))))
        print("HPROF's counts beside each total: " + "; ".join(counts))
        print("every run's CPU s: " + "; ".join("%s %s" % (k, ["%.2f" % x for x in cpu[k]])
                                                for k in cpu))
        print("1-minute load average %.2f at the start, %.2f at the end; %.0f s in all"
              % (load, os.getloadavg()[0], time.time() - began))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
