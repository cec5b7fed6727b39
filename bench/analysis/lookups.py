#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Object-view lookups per second, before vs after, in one run on the same dump.

BenchHeap (bench.py's heap program) is dumped by `jcmd GC.heap_dump` (JDK 17); then
lookup_bench.cpp, which uses only the public analysis.h, runs twice: as built by CMake in --build
(analysis_lookup_bench: the working tree's library, RelWithDebInfo) and built here with the same
compiler and flags (-O2 -g -DNDEBUG) against src/analysis as of --before (a git revision; default
the commit before the id table). Both run on the same dump, interleaved:
after, before, after again (the A/A row). Each times object(id), object_detail(id) (one page)
and referrers(id) (one page of 100) over the same ids, for --seconds CPU-seconds per kind, and
reports calls per CPU-second (the work itself on a shared machine) and per wall-second.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import bench  # noqa: E402  (make_dump, run)


def build_driver(source_dir, out, cxx, jobs=2):
    """Builds lookup_bench.cpp against the analysis sources in source_dir/src/analysis with the
    flags of a RelWithDebInfo build (-O2 -g -DNDEBUG), through ccache when there is one, `jobs`
    files at a time."""
    analysis = os.path.join(source_dir, "src/analysis")
    srcs = sorted(os.path.join(analysis, f) for f in os.listdir(analysis) if f.endswith(".cpp"))
    srcs.append(os.path.join(HERE, "lookup_bench.cpp"))
    launcher = ["ccache"] if shutil.which("ccache") else []
    flags = ["-std=c++20", "-O2", "-g", "-DNDEBUG", "-I", analysis]
    objdir = out + ".o"
    os.makedirs(objdir, exist_ok=True)
    objs, running = [], []
    for src in srcs:
        obj = os.path.join(objdir, os.path.basename(src) + ".o")
        objs.append(obj)
        running.append(subprocess.Popen(["nice", "-n", "5", *launcher, cxx, *flags, "-c", src, "-o", obj]))
        if len(running) >= jobs:
            if running.pop(0).wait() != 0:
                sys.exit(f"compiling for {out} failed")
    for p in running:
        if p.wait() != 0:
            sys.exit(f"compiling for {out} failed")
    subprocess.run([cxx, *objs, "-lz", "-pthread", "-o", out], check=True)


def parse(out):
    rows = {}
    for m in re.finditer(r"^(\w+) calls (\d+) found (\d+) cpu_s ([0-9.]+) wall_s ([0-9.]+) "
                         r"per_cpu_s ([0-9.]+) per_s ([0-9.]+)$", out, re.M):
        rows[m.group(1)] = {"calls": int(m.group(2)), "found": int(m.group(3)),
                            "per_cpu_s": float(m.group(6)), "per_s": float(m.group(7))}
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=5, help="millions of objects in the dump (default 5)")
    ap.add_argument("--before", default="b1feb12", help="git revision of the 'before' library (default b1feb12)")
    ap.add_argument("--build", default=os.path.join(REPO, "build"), help="build directory (default build/)")
    ap.add_argument("--seconds", type=float, default=3.0, help="CPU-seconds per request kind (default 3)")
    ap.add_argument("--ids", type=int, default=2000, help="distinct object ids looked up (default 2000)")
    ap.add_argument("--java-home", default="/usr/lib/jvm/java-17-openjdk-amd64")
    ap.add_argument("--cxx", default="g++")
    ap.add_argument("--keep", action="store_true", help="keep the dump")
    args = ap.parse_args()
    if args.size <= 0 or args.seconds <= 0 or args.ids <= 0:
        ap.error("--size, --seconds and --ids must be positive")
    classes = os.path.join(args.build, "bench/analysis/classes")
    java = os.path.join(args.java_home, "bin/java")
    jcmd = os.path.join(args.java_home, "bin/jcmd")
    for f in (os.path.join(classes, "BenchHeap.class"), java):
        if not os.path.exists(f):
            sys.exit(f"missing {f} (build first: cmake --build {args.build} --target analysis_bench_java)")
    if subprocess.run(["git", "-C", REPO, "rev-parse", "--verify", "-q", args.before + "^{commit}"],
                      stdout=subprocess.DEVNULL).returncode != 0:
        ap.error(f"--before {args.before}: not a git revision")
    work = os.path.join(args.build, "bench/analysis/lookups")
    os.makedirs(work, exist_ok=True)
    before_src = os.path.join(work, "before-src")
    subprocess.run(["rm", "-rf", before_src], check=True)
    os.makedirs(before_src)
    archive = subprocess.run(["git", "-C", REPO, "archive", args.before, "src/analysis"],
                             check=True, stdout=subprocess.PIPE).stdout
    subprocess.run(["tar", "-x", "-C", before_src], input=archive, check=True)
    drivers = {"before": os.path.join(work, "lookup-before"),
               "after": os.path.join(args.build, "bench/analysis/analysis_lookup_bench")}
    if not os.path.exists(drivers["after"]):
        sys.exit(f"missing {drivers['after']} (cmake --build {args.build} --target analysis_lookup_bench)")
    build_driver(before_src, drivers["before"], args.cxx)

    dump = os.path.join(work, f"heap-{args.size}m.hprof")
    bench.make_dump(java, jcmd, classes, args.size, dump, max(2, args.size // 5 + 2))
    size_mb = os.path.getsize(dump) / 1e6
    load = os.getloadavg()
    print(f"# object-view lookups — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}, {os.cpu_count()} CPUs")
    print(f"# dump {size_mb:.0f} MB (BenchHeap {args.size}M, jcmd, {args.java_home}); before = {args.before}, "
          f"after = this build; {args.seconds} CPU-s per kind, {args.ids} ids")
    results = []
    for name in ("after", "before", "after"):
        r = bench.run([drivers[name], dump, str(args.seconds), str(args.ids)])
        rows = parse(r["out"])
        opened = re.search(r"open_s ([0-9.]+) objects (\d+)", r["out"])
        first_ref = re.search(r"first_referrers_s ([0-9.]+)", r["out"])
        results.append((name, rows, float(opened.group(1)), int(opened.group(2)),
                        float(first_ref.group(1)), r["maxrss_mb"], r["anon_mb"]))
        print(f"{name}: open {opened.group(1)} s, first referrers {first_ref.group(1)} s, "
              f"peak RSS {r['maxrss_mb']:.0f} MB, peak anon {r['anon_mb']:.0f} MB; " +
              "; ".join(f"{k} {v['per_cpu_s']:.1f}/CPU-s {v['per_s']:.1f}/s ({v['calls']} calls, "
                        f"{v['found']} found)" for k, v in rows.items()))
    objects = results[0][3]
    after, before, again = results[0][1], results[1][1], results[2][1]
    print(f"\n{objects / 1e6:.2f} M objects, {size_mb:.0f} MB dump; calls per CPU-second "
          f"(per wall-second in brackets):\n")
    print("| request | before | after | after / before | A/A (after again / after) |")
    print("|---|---|---|---|---|")
    for kind in ("object", "object_detail", "referrers"):
        b, a, a2 = before[kind], after[kind], again[kind]
        print(f"| {kind} | {b['per_cpu_s']:.1f} ({b['per_s']:.1f}) | {a['per_cpu_s']:.1f} ({a['per_s']:.1f}) | "
              f"**{a['per_cpu_s'] / b['per_cpu_s']:.0f}x** | {a2['per_cpu_s'] / a['per_cpu_s']:.3f} |")
    if not args.keep:
        os.remove(dump)


if __name__ == "__main__":
    main()
