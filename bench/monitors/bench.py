# SPDX-License-Identifier: Apache-2.0
"""HPROF's monitor=y on a contended multi-threaded workload (benchmonitors.ContendedLocks), beside
no agent, interleaved: each round runs every configuration once (no agent twice: the A/A row).
With --before-build, HPROF's rows run again with that build's libhprof.so (before/after).
Prints a Markdown table: median elapsed time of the threaded part and its ratio to no agent."""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time


def run(java, vm_args, classes, args, timeout):
    cmd = [java, *vm_args, "-cp", classes, "benchmonitors.ContendedLocks", *args]
    with tempfile.TemporaryDirectory() as d:
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=d)
        except subprocess.TimeoutExpired:
            return None
    m = re.search(r"elapsed_ms=(\d+)", p.stdout)
    if p.returncode != 0 or not m:
        sys.stderr.write(f"failed: {' '.join(cmd)}\n{p.stderr[-2000:]}\n")
        return None
    return int(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--before-build", default="")
    ap.add_argument("--jdk", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", default="32")
    ap.add_argument("--locks", default="4")
    ap.add_argument("--iterations", default="20000")
    ap.add_argument("--timeout", type=int, default=600)
    a = ap.parse_args()
    java = os.path.join(a.jdk, "bin/java")
    classes = os.path.abspath(os.path.join(a.build, "bench/monitors/classes"))
    modes = ["monitor=y", "cpu=samples,monitor=y", "heap=sites,sample=512k,monitor=y",
             "heap=sites,monitor=y"]
    configs = [("no agent", []), ("no agent, repeated (A/A)", [])]
    for build, label in [(a.build, ""), (a.before_build, " (before)")]:
        if not build:
            continue
        lib = os.path.abspath(os.path.join(build, "lib"))
        for mode in modes:
            configs.append((f"HPROF {mode}{label}",
                            [f"-agentpath:{lib}/libhprof.so={mode},file=java.hprof.txt"]))
    args = [a.threads, a.locks, a.iterations]
    times = {}
    for r in range(a.runs):
        for name, vm_args in configs:
            t = run(java, vm_args, classes, args, a.timeout)
            sys.stderr.write(f"round {r + 1} {name}: {t} ms\n")
            if t is not None:
                times.setdefault(name, []).append(t)
    base = statistics.median(times["no agent"]) if times.get("no agent") else None
    print(f"ContendedLocks {' '.join(args)} (threads, locks, iterations per thread) on "
          f"{os.path.basename(a.jdk)}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
          f"median of {a.runs} interleaved runs; {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.2f} at the end\n")
    print("| configuration | median elapsed (ms) | time ratio to no agent | runs (ms) |")
    print("|---|---:|---:|---|")
    for name, _ in configs:
        v = times.get(name)
        if not v:
            print(f"| {name} | failed | | |")
            continue
        med = statistics.median(v)
        ratio = f"{med / base:.2f}x" if base else "-"
        print(f"| {name} | {med:.0f} | {ratio} | {', '.join(str(x) for x in v)} |")


if __name__ == "__main__":
    main()
