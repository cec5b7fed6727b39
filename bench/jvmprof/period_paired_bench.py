#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The agent's cost of `period=10,net=` against `cpu=samples` to a file, with both JVMs running
at the same time, so that what the machine does to one it does to the other.

Run one after the other, the same fixed amount of work (bench/jvmprof/FixedWork.java) takes
from run to run a CPU time that varies by several percent even on a quiet machine (the virtual
CPUs' speed is not constant), which hides a 1 % difference however many rounds are run.
Here each round runs two pairs, each pair's two JVMs side by side on the machine's CPUs:

  N | P    cpu=samples,interval=MS to a file   beside   cpu=samples,interval=MS,period=S,net=...
  N | N'   cpu=samples,interval=MS to a file   beside   the same again (A/A: what pairing leaves)

(the pair order alternates by round). Per pair, the ratio of the two processes' CPU seconds
(user + system, all threads, wait4); the table gives the median and range over the rounds of
P/N and N'/N, the samples HPROF took per CPU-second in each (so a cheaper row that sampled less
shows as such) and the CPU of HPROF's stream threads (`HPROF net`, `HPROF period`, `HPROF
listener`, from /proc/PID/task/*/schedstat). P streams into a `jvmprof serve` started here.

  python3 bench/jvmprof/period_paired_bench.py --build build --jdk /usr/lib/jvm/java-17-openjdk-amd64
      [--workload fixed|javac] [--rounds R] [--fixed-rounds N] [--packages P --classes C]
      [--interval MS] [--period S]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import period_net_bench as pnb  # noqa: E402  (its runs, serve and thread readers)


def run_pair(args, serve, files, slots, kinds):
    """Runs the two kinds ("file" or "period") at once, each in its own scratch slot."""
    out = [None, None]

    def one(i):
        if kinds[i] == "period":
            out[i] = pnb.run_net(args, serve, files, slots[i])
        else:
            out[i] = pnb.run_file(args, files, slots[i])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r, kind in zip(out, kinds):
        if r is None or not r["ok"]:
            raise SystemExit("the workload failed under " + kind)
    return out


def stream_cpu(r):
    return sum(v for k, v in r["stream"].items() if k in pnb.STREAM_THREADS)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="the build directory (lib/, src/jvmprof/)")
    ap.add_argument("--jdk", required=True, help="a JDK 17 or later")
    ap.add_argument("--workload", choices=("fixed", "javac"), default="fixed",
                    help="bench/jvmprof/FixedWork.java (default) or javac (JDK 17's "
                         "jdk.compiler on a generated tree, whose JIT choices spread its CPU "
                         "from run to run far more than the machine does)")
    ap.add_argument("--packages", type=pnb.positive_int, default=4, help="javac: packages")
    ap.add_argument("--classes", type=pnb.positive_int, default=25,
                    help="javac: classes per package")
    ap.add_argument("--rounds", type=pnb.positive_int, default=6)
    ap.add_argument("--fixed-rounds", type=pnb.positive_int, default=120000,
                    help="FixedWork's rounds per thread (default 120000: about 35 CPU-s, "
                         "three periods at period=10 with two JVMs on two CPUs)")
    ap.add_argument("--interval", type=pnb.positive_int, default=10, help="sampling interval, ms")
    ap.add_argument("--period", type=pnb.positive_int, default=10, help="period=, seconds")
    ap.add_argument("--timeout", type=pnb.positive_int, default=900, help="per run, seconds")
    args = ap.parse_args()
    args.build, args.jdk = os.path.abspath(args.build), os.path.abspath(args.jdk)
    args.steady = False
    jvmprof = os.path.join(args.build, "src", "jvmprof", "jvmprof")
    for need in (jvmprof, os.path.join(args.build, "lib", "libhprof.so"),
                 os.path.join(args.jdk, "bin", "java")):
        if not os.path.exists(need):
            ap.error("not found: " + need)

    work = tempfile.mkdtemp(prefix="period-paired-bench-")
    args.fixed_classes = os.path.join(work, "fixed-work")
    subprocess.run([os.path.join(args.jdk, "bin", "javac"), "-d", args.fixed_classes,
                    os.path.join(HERE, "FixedWork.java")], check=True)
    files = []
    if args.workload == "javac":
        tree = os.path.join(work, "src")
        subprocess.run([sys.executable, os.path.join(os.path.dirname(HERE), "hprof",
                                                     "gen_sources.py"),
                        tree, str(args.packages), str(args.classes)], check=True)
        files = sorted(os.path.join(d, f) for d, _, fs in os.walk(tree) for f in fs
                       if f.endswith(".java"))
    slots = [os.path.join(work, "a"), os.path.join(work, "b")]
    for s in slots:
        os.makedirs(s)
    serve = pnb.Serve(jvmprof, work)
    rows = {"P": [], "A/A": []}
    try:
        pnb.log("%s; %d rounds of two pairs; load %s" % (
            "FixedWork, %d rounds per thread" % args.fixed_rounds if args.workload == "fixed"
            else "javac on %d generated classes" % len(files), args.rounds,
            open("/proc/loadavg").read().split()[0]))
        for rnd in range(args.rounds):
            pairs = [("P", ("file", "period")), ("A/A", ("file", "file"))]
            if rnd % 2:
                pairs.reverse()
            for name, kinds in pairs:
                # Which slot (and so which thread starts first) alternates with the round.
                flip = rnd % 2 == 1
                order = tuple(reversed(kinds)) if flip else kinds
                got = run_pair(args, serve, files, slots, order)
                base, other = (got[1], got[0]) if flip else (got[0], got[1])
                rows[name].append((base, other))
                pnb.log("round %d %-3s N %6.2f CPU-s (%s samples)  %s %6.2f CPU-s (%s samples)  "
                        "ratio %.4f  stream threads %.4f s" % (
                            rnd + 1, name, base["cpu"], base["samples"],
                            "P " if name == "P" else "N'", other["cpu"], other["samples"],
                            other["cpu"] / base["cpu"], stream_cpu(other)))
    finally:
        serve.stop()
        shutil.rmtree(work, ignore_errors=True)

    print("| pair | ratio of CPU s to N beside it (median) | min-max | rounds | N CPU s "
          "(median) | samples per CPU-second, N / other | stream threads' CPU s (median) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, label in (("P", "P: cpu=samples,period=%d,net= beside N" % args.period),
                        ("A/A", "N': cpu=samples beside N (A/A)")):
        ratios = [o["cpu"] / b["cpu"] for b, o in rows[name]]
        per_b = [b["samples"] / b["cpu"] for b, _ in rows[name] if b["samples"]]
        per_o = [o["samples"] / o["cpu"] for _, o in rows[name] if o["samples"]]
        print("| %s | %.4fx | %.4f-%.4f | %d | %.2f | %s / %s | %.4f |" % (
            label, statistics.median(ratios), min(ratios), max(ratios), len(ratios),
            statistics.median(b["cpu"] for b, _ in rows[name]),
            "%.1f" % statistics.median(per_b) if per_b else "-",
            "%.1f" % statistics.median(per_o) if per_o else "-",
            statistics.median(stream_cpu(o) for _, o in rows[name])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
