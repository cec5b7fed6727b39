#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Attach benchmarks on warm JVMs (attachbench.Worker), measured side by side:

1. Time to profile: a warm JVM whose thread "burner" runs all the time; each round times
   `jvmprof attach PID cpu=samples,file=F` from its start until it returns (it returns once HPROF
   samples: the sampler is armed, so the first sample follows within one interval, 10 ms), then
   (untimed) `jvmprof stop PID`, and checks that the report holds CPU samples. This is the part
   of `jvmprof record` before its first sample.
2. Throughput after stop: three warm JVMs: N and N' never attached, P profiled and stopped
   first (a cpu=times session, whose instrumentation of every loaded class must be undone, then
   cpu=samples,heap=sites,monitor=y, each under load). Each round asks each JVM in a rotating
   order for MS ms of work ("run MS", one JVM working at a time); the table gives the median
   units of work, P/N (the target: within 2 %) and N'/N (the noise). A second table gives the
   units per CPU-second of the whole process (every thread, the collector's and the JIT's too):
   on a shared machine a JVM gets a varying share of the CPUs in its MS ms of wall time, while
   the work one CPU-second does varies much less, and a cost left behind (more collections, worse
   code) still shows in it. Last, each JVM's committed heap and its collections during the
   rounds: what no scheduling noise changes (a heap a forced collection shrank shows here).

  python3 bench/attach/record_bench.py --build build [--jdk HOME] [--rounds R] [--run-ms MS]
      [--sessions 'OPTIONS;OPTIONS...'] [--skip-attach-time]"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def start_worker(java, classes, extra=()):
    jvm = subprocess.Popen([java, *extra, "-Xmx256m", "-cp", classes, "attachbench.Worker"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
    line = jvm.stdout.readline()
    if not line.startswith("ready"):
        sys.exit("the JVM did not start: %r" % line)
    return jvm


def ask_line(jvm, command, prefix):
    jvm.stdin.write(command + "\n")
    jvm.stdin.flush()
    line = jvm.stdout.readline()
    if not line.startswith(prefix):
        sys.exit("unexpected answer to %r: %r" % (command, line))
    return line.split()


def ask(jvm, command, prefix):
    words = ask_line(jvm, command, prefix)
    return words[1] if len(words) > 1 else words[0]


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("%s failed: %s%s" % (" ".join(cmd), r.stdout, r.stderr))


def time_to_profile(jvmprof, java, classes, extra, rounds, work):
    jvm = start_worker(java, classes, extra)
    try:
        ask(jvm, "burn", "burning")
        times = []
        for r in range(rounds + 1):  # round 0 is untimed: the attach listener starts
            report = os.path.join(work, "t%d.txt" % r)
            start = time.monotonic()
            run([jvmprof, "attach", str(jvm.pid), "cpu=samples,file=" + report])
            elapsed = time.monotonic() - start
            run([jvmprof, "stop", str(jvm.pid)])
            with open(report) as f:
                text = f.read()
            if "CPU SAMPLES BEGIN" not in text or "attachbench.Worker" not in text:
                sys.exit("round %d: the report has no samples of the burner" % r)
            if r > 0:
                times.append(elapsed)
        return times
    finally:
        jvm.stdin.close()
        jvm.wait(timeout=60)


def throughput(jvmprof, java, classes, extra, rounds, run_ms, work, sessions):
    jvms = {k: start_worker(java, classes, extra) for k in ("N", "P", "N'")}
    try:
        p = jvms["P"]
        for options in sessions:
            report = os.path.join(work, "p.txt")
            run([jvmprof, "attach", str(p.pid), options + ",file=" + report])
            ask(p, "run %d" % run_ms, "UNITS")
            run([jvmprof, "stop", str(p.pid)])
        # One untimed run each after P's sessions: P recompiles what its instrumentation changed.
        for k in jvms:
            ask(jvms[k], "run %d" % run_ms, "UNITS")
        stats_before = {k: ask_line(jvms[k], "stats", "STATS") for k in jvms}
        units = {k: [] for k in jvms}
        per_cpu_s = {k: [] for k in jvms}
        order = list(jvms)
        for r in range(rounds):
            for k in order[r % 3:] + order[:r % 3]:
                words = ask_line(jvms[k], "run %d" % run_ms, "UNITS")
                units[k].append(int(words[1]))
                per_cpu_s[k].append(int(words[1]) / (int(words[2]) / 1e9))
        heaps = {}
        for k in jvms:
            after = ask_line(jvms[k], "stats", "STATS")
            heaps[k] = (int(stats_before[k][1]) >> 20, int(after[1]) >> 20,
                        int(after[2]) - int(stats_before[k][2]),
                        int(after[3]) - int(stats_before[k][3]))
        return units, per_cpu_s, heaps
    finally:
        for jvm in jvms.values():
            jvm.stdin.close()
            jvm.wait(timeout=60)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="the build directory")
    ap.add_argument("--jdk", default="/usr/lib/jvm/java-17-openjdk-amd64")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--run-ms", type=int, default=2000)
    ap.add_argument("--sessions", default="cpu=times;cpu=samples,heap=sites,monitor=y",
                    help="P's profiling sessions before the throughput rounds, one after the "
                         "other, ';'-separated HPROF options (to find which one costs after stop)")
    ap.add_argument("--skip-attach-time", action="store_true",
                    help="only the throughput part")
    a = ap.parse_args()
    if a.rounds <= 0 or a.run_ms <= 0:
        ap.error("--rounds and --run-ms must be positive")
    sessions = [s for s in a.sessions.split(";") if s]
    if not sessions or any("file=" in s or "net=" in s for s in sessions):
        ap.error("--sessions takes HPROF options without file= or net= (the bench adds file=)")
    jvmprof = os.path.join(a.build, "src", "jvmprof", "jvmprof")
    classes = os.path.join(a.build, "bench", "attach", "classes")
    java = os.path.join(a.jdk, "bin", "java")
    for path in (jvmprof, classes, java):
        if not os.path.exists(path):
            ap.error("not found: %s (build the targets jvmprof and bench_attach_java)" % path)
    # JDK 21+ warns about agents loaded into a running VM unless allowed up front.
    extra = ["-XX:+IgnoreUnrecognizedVMOptions", "-XX:+EnableDynamicAgentLoading"]
    work = tempfile.mkdtemp(prefix="jvmprof-record-bench-")
    try:
        load = os.getloadavg()[0]
        if not a.skip_attach_time:
            times = time_to_profile(jvmprof, java, classes, extra, a.rounds, work)
            print("time from `jvmprof attach` to profiling running (%d rounds): median %.3f s, "
                  "max %.3f s" % (len(times), statistics.median(times), max(times)))
        units, per_cpu_s, heaps = throughput(jvmprof, java, classes, extra, a.rounds, a.run_ms,
                                             work, sessions)
        names = {"N": "never attached", "P": "profiled (" + ", then ".join(sessions) + "), stopped",
                 "N'": "never attached (A/A)"}
        for title, values in (("median units of work in %d ms" % a.run_ms, units),
                              ("median units of work per CPU-second of the process", per_cpu_s)):
            med = {k: statistics.median(v) for k, v in values.items()}
            # Per round too: the three runs of one round are adjacent in time, so the machine's
            # load drifts less between them than between medians over all rounds.
            per_round = {k: statistics.median(x / n for x, n in zip(values[k], values["N"]))
                         for k in values}
            print("throughput, %d rounds of %d ms per JVM, %s:" % (a.rounds, a.run_ms, title))
            print("| row | JVM | median | ratio of medians | median of per-round ratios |")
            print("|---|---|---|---|---|")
            for k in ("N", "P", "N'"):
                print("| %s | %s | %d | %.3f | %.3f |" % (k, names[k], med[k], med[k] / med["N"],
                                                          per_round[k]))
        print("| row | committed heap before the rounds, MiB | after | collections in the rounds "
              "| their ms |")
        print("|---|---|---|---|---|")
        for k in ("N", "P", "N'"):
            print("| %s | %d | %d | %d | %d |" % ((k,) + heaps[k]))
        print("every run's units: " + "; ".join("%s %s" % (k, units[k]) for k in units))
        print("1-minute load average %.2f at the start, %.2f at the end" %
              (load, os.getloadavg()[0]))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
