#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Exact heap=sites with 1, 8 and 32 allocating threads, and on javac: CPU per allocation.

Workloads: hproftest.ServerLoad (java/hprof-tests) with SPIN=0, so its workers do nothing but
allocate Records (RECORDS per request) and take a shared lock once per request; and javac (JDK
17's jdk.compiler) compiling a generated tree (bench/hprof/gen_sources.py). Each runs without an
agent and with -agentlib:hprof=heap=sites (exact: every allocation) under each build given (the
current one, and optionally a baseline build to compare with), all interleaved round by round.
CPU = user + system of the java process. For ServerLoad the table gives HPROF's added CPU per
allocation (agent CPU - no-agent CPU at the same thread count, over the Record allocations) and
its ratio to the 1-thread cost of the same build; for javac, the median CPU and its ratio to no
agent and to the baseline build.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from timed_run import run_timed_usage  # noqa: E402

THREADS = (1, 8, 32)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--baseline", default="",
                    help="another build directory (its lib/libhprof.so) to compare with")
    ap.add_argument("--jdk", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=96000, help="ServerLoad requests (x32)")
    ap.add_argument("--records", type=int, default=16, help="Records per request")
    ap.add_argument("--javac-classes", type=int, default=25,
                    help="classes per package of javac's tree (4 packages); 0: no javac rows")
    a = ap.parse_args()
    if a.rounds < 1 or a.iterations < 32 or a.iterations % 32 or a.records < 1:
        ap.error("--rounds >= 1, --iterations a positive multiple of 32, --records >= 1")
    a.build = os.path.abspath(a.build)  # the runs' working directory is a temporary one
    a.baseline = os.path.abspath(a.baseline) if a.baseline else ""
    builds = [("this build", a.build)] + ([("baseline", a.baseline)] if a.baseline else [])
    classes = os.path.join(a.build, "java", "hprof-test-classes")
    for need in [os.path.join(b, "lib", "libhprof.so") for _, b in builds] + [
            os.path.join(classes, "hproftest", "ServerLoad.class")]:
        if not os.path.exists(need):
            ap.error(f"{need} does not exist (build first)")
    java = os.path.join(a.jdk, "bin", "java")
    work = tempfile.mkdtemp(prefix="alloc-scaling-")
    javac_files = []
    if a.javac_classes > 0:
        root = os.path.join(work, "src")
        subprocess.run([sys.executable, os.path.join(os.path.dirname(HERE), "hprof",
                                                     "gen_sources.py"), root, "4",
                        str(a.javac_classes)], check=True)
        javac_files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs
                             if f.endswith(".java"))

    def run(build, hprof, workload):
        env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(build, "lib"))
        for k in ("_JAVA_HPROF_OPTIONS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS"):
            env.pop(k, None)
        cmd = [java]
        if hprof:
            cmd.append(f"-agentlib:hprof={hprof},file={os.path.join(work, 'java.hprof.txt')}")
        if workload == "javac":
            out = os.path.join(work, "classes")
            subprocess.run(["rm", "-rf", out])
            os.makedirs(out)
            cmd += ["-m", "jdk.compiler/com.sun.tools.javac.Main", "-nowarn", "-proc:none",
                    "-d", out] + javac_files
        else:
            cmd += ["-cp", classes,
                    "hproftest.ServerLoad", str(workload), str(a.iterations), "0",
                    str(a.records)]
        got = run_timed_usage(cmd, work, 900, env=env)
        if got is None or got[3] != 0:
            return None
        return got[1] + got[2]

    workloads = list(THREADS) + (["javac"] if javac_files else [])
    cpu = {}
    for r in range(a.rounds):
        for w in workloads:
            for name, b in builds:
                for hprof in (None, "heap=sites"):
                    if hprof is None and name != "this build":
                        continue  # no agent: one baseline per workload is enough
                    key = (w, name if hprof else "no agent")
                    c = run(b, hprof, w)
                    if c is not None:
                        cpu.setdefault(key, []).append(c)
                    print(f"round {r + 1} {key}: {c}", file=sys.stderr, flush=True)
            # The A/A row: no agent again.
            c = run(a.build, None, w)
            if c is not None:
                cpu.setdefault((w, "no agent, repeated"), []).append(c)

    def med(key):
        v = cpu.get(key)
        return statistics.median(v) if v else None

    allocs = a.iterations * a.records
    print(f"CPU s = user + system of the java process, median of {a.rounds} interleaved rounds; "
          f"ServerLoad: {a.iterations} requests x {a.records} Records = {allocs} allocations "
          f"shared by the threads, no CPU work (SPIN=0); {os.cpu_count()} CPUs.\n")
    print("| workload | configuration | CPU s (median) | added CPU per allocation (ns) | "
          "vs 1 thread | runs (CPU s) |")
    print("|---|---|---:|---:|---:|---|")
    one = {}
    for w in workloads:
        base = med((w, "no agent"))
        for label in ["no agent", "no agent, repeated"] + [n for n, _ in builds]:
            m = med((w, label))
            runs = ", ".join(f"{x:.2f}" for x in cpu.get((w, label), []))
            per, rel = "", ""
            if w != "javac" and m is not None and base is not None and label in dict(builds):
                ns = (m - base) / allocs * 1e9
                per = f"{ns:.0f}"
                if w == 1:
                    one[label] = ns
                elif one.get(label):
                    rel = f"{ns / one[label]:.2f}x"
            if w == "javac" and m is not None and base:
                rel = f"{m / base:.2f}x of no agent"
                if label == "this build" and med(("javac", "baseline")):
                    rel += f", {m / med(('javac', 'baseline')):.2f}x of baseline"
            name = "javac" if w == "javac" else f"ServerLoad, {w} thread{'s' if w > 1 else ''}"
            mtxt = f"{m:.2f}" if m is not None else "-"
            hp = "" if label.startswith("no agent") else " heap=sites"
            print(f"| {name} | {label}{hp} | {mtxt} | {per} | {rel} | {runs} |")
    subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
