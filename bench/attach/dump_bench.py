#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Time of `jvmprof dump PID -o F.hprof` against `jcmd PID GC.heap_dump F.hprof` on the same idle
JVM (attachbench.HeapHolder holding N small objects), measured side by side: each round runs
jcmd, jvmprof and jcmd again in a rotating order, so the rows share the machine's load. Prints
the median wall time of each and the ratios jvmprof/jcmd (B/A) and jcmd/jcmd (A'/A, the noise).
With --gz both write gzip (jcmd's -gz=1, what jvmprof dump passes for .hprof.gz).

  python3 bench/attach/dump_bench.py --build build [--objects N] [--rounds R] [--gz]"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="the build directory")
    ap.add_argument("--jdk", default="/usr/lib/jvm/java-17-openjdk-amd64")
    ap.add_argument("--objects", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--gz", action="store_true")
    a = ap.parse_args()
    if a.objects <= 0 or a.rounds <= 0:
        ap.error("--objects and --rounds must be positive")
    jvmprof = os.path.join(a.build, "src", "jvmprof", "jvmprof")
    classes = os.path.join(a.build, "bench", "attach", "classes")
    for path in (jvmprof, classes, os.path.join(a.jdk, "bin", "jcmd")):
        if not os.path.exists(path):
            ap.error("not found: %s (build the targets jvmprof and bench_attach_java)" % path)
    work = tempfile.mkdtemp(prefix="jvmprof-dump-bench-")
    jvm = subprocess.Popen([os.path.join(a.jdk, "bin", "java"), "-Xmx2g", "-cp", classes,
                            "attachbench.HeapHolder", str(a.objects)],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        line = jvm.stdout.readline()
        if not line.startswith("ready"):
            sys.exit("the JVM did not start: " + line)
        suffix = ".hprof.gz" if a.gz else ".hprof"
        gz = ["-gz=1"] if a.gz else []
        commands = {
            "A": lambda out: [os.path.join(a.jdk, "bin", "jcmd"), str(jvm.pid), "GC.heap_dump",
                              *gz, out],
            "B": lambda out: [jvmprof, "dump", str(jvm.pid), "-o", out],
            "A'": lambda out: [os.path.join(a.jdk, "bin", "jcmd"), str(jvm.pid), "GC.heap_dump",
                               *gz, out],
        }
        times = {k: [] for k in commands}
        sizes = {}
        order = list(commands)
        # One untimed dump each first: the attach listener started, the classes jcmd loads loaded.
        for k in order:
            out = os.path.join(work, "warm" + suffix)
            subprocess.run(commands[k](out), check=True, capture_output=True)
            os.remove(out)
        for r in range(a.rounds):
            for k in order[r % 3:] + order[:r % 3]:
                out = os.path.join(work, "dump" + suffix)
                start = time.monotonic()
                subprocess.run(commands[k](out), check=True, capture_output=True)
                times[k].append(time.monotonic() - start)
                sizes[k] = os.path.getsize(out)
                os.remove(out)
        med = {k: statistics.median(v) for k, v in times.items()}
        print("dump of %d objects (%s), %d rounds, median wall time:" %
              (a.objects, "gzip" if a.gz else "plain", a.rounds))
        print("| row | what | median s | size bytes |")
        print("|---|---|---|---|")
        names = {"A": "jcmd GC.heap_dump", "B": "jvmprof dump", "A'": "jcmd GC.heap_dump again"}
        for k in order:
            print("| %s | %s | %.3f | %d |" % (k, names[k], med[k], sizes[k]))
        print("B/A = %.2f   A'/A = %.2f" % (med["B"] / med["A"], med["A'"] / med["A"]))
    finally:
        jvm.stdin.close()
        jvm.wait(timeout=60)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
