# SPDX-License-Identifier: Apache-2.0
"""RequestEvent(OBJECT_ALLOC / OBJECT_DUMP) per call at several heap sizes, this build beside a
second (older) build, interleaved: each round runs every (JDK, heap size, build) once. The agent
(request_agent.c) prints one REQUESTS line per run; this prints a Markdown table of medians."""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time


def run(java, lib, agent, classes, size, calls, timeout):
    cmd = [java, f"-agentpath:{lib}={agent}:calls={calls}", "-Xmx3g", "-Xss4m", "-cp", classes,
           "benchobjects.HeldObjects", str(size)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    m = re.search(r"^REQUESTS (.*)$", p.stderr, re.M)
    if not m:
        sys.stderr.write(f"no REQUESTS line from {' '.join(cmd)}:\n{p.stderr[-2000:]}\n")
        return None
    return {k: float(v) for k, v in (w.split("=") for w in m.group(1).split())}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--before-build", default="")
    ap.add_argument("--jdks", required=True, help="comma-separated JAVA_HOMEs")
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--before-calls", type=int, default=20)
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--aa", action="store_true", help="run this build twice (the A/A row)")
    a = ap.parse_args()
    builds = [("this build", a.build, a.calls)]
    if a.aa:
        builds.append(("this build again (A/A)", a.build, a.calls))
    if a.before_build:
        builds.append(("before (BEFORE_BUILD_DIR)", a.before_build, a.before_calls))
    classes = os.path.join(a.build, "bench/objects/classes")
    agent = os.path.abspath(os.path.join(a.build, "bench/objects/libjvmpibench_request.so"))
    jdks = [j for j in a.jdks.split(",") if os.path.exists(os.path.join(j, "bin/java"))]
    sizes = [int(s) for s in a.sizes.split(",")]
    results = {}
    for r in range(a.runs):
        for jdk in jdks:
            for size in sizes:
                for name, build, calls in builds:
                    lib = os.path.abspath(os.path.join(build, "src/jvmpi/libjvmpi.so"))
                    got = run(os.path.join(jdk, "bin/java"), lib, agent, classes, size, calls,
                              a.timeout)
                    sys.stderr.write(f"round {r + 1} {os.path.basename(jdk)} {size} {name}: {got}\n")
                    if got:
                        results.setdefault((jdk, size, name), []).append(got)
    print(f"RequestEvent per call, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"median of {a.runs} interleaved runs; wall = median call, CPU = mean thread CPU per "
          f"call; ok = answers naming the right object and class; {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.2f}\n")
    print("| JDK | heap objects | runtime | calls | OBJECT_ALLOC wall µs | CPU µs | OBJECT_DUMP wall µs "
          "| CPU µs | ok (alloc / dump) |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---|")
    for jdk in jdks:
        for size in sizes:
            for name, _, _ in builds:
                rows = results.get((jdk, size, name))
                if not rows:
                    print(f"| {os.path.basename(jdk)} | {size:,} | {name} | - | killed or failed | | | | |")
                    continue
                med = lambda k: statistics.median(x[k] for x in rows)
                print(f"| {os.path.basename(jdk)} | {size:,} | {name} | {int(med('calls'))} | "
                      f"{med('alloc_us'):.1f} | {med('alloc_cpu_us'):.1f} | {med('dump_us'):.1f} | "
                      f"{med('dump_cpu_us'):.1f} | {int(min(x['alloc_ok'] for x in rows))} / "
                      f"{int(min(x['dump_ok'] for x in rows))} |")


if __name__ == "__main__":
    main()
