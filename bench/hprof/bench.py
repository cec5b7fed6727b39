#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""HPROF overhead benchmark: javac (JDK 17's jdk.compiler, run as a plain Java program) compiling a
large source tree with and without libhprof.so in each mode; every configuration runs N times,
interleaved (round 1 of every configuration, then round 2, ...), so that slow drift of a shared
machine hits all configurations alike. The table gives the median wall time (the headline) and its
ratio to the run without an agent, and next to it the median CPU time (user + system of the java
process, all its threads) and its ratio.

Run through bench/run-hprof-bench.sh. Source tree: java.util of JDK 17's src.zip when that is
installed, else a generated tree (gen_sources.py). cpu=times instruments every method and is
measured on a smaller generated tree against its own no-agent baseline. --only SUBSTR[,SUBSTR...]
runs only the configurations whose name contains one of the substrings, plus the no-agent baseline
of each tree they use.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from timed_run import run_timed_usage  # noqa: E402


def workload(work, jdk, packages, classes, name):
    """Returns (javac arguments, description) for a source tree under work/name."""
    src_zip = os.path.join(jdk, "lib", "src.zip")
    root = os.path.join(work, name)
    if name == "main" and os.path.isfile(src_zip):
        with zipfile.ZipFile(src_zip) as z:
            members = [m for m in z.namelist()
                       if m.startswith("java.base/java/util/") and m.endswith(".java")]
            z.extractall(root, members)
        files = [os.path.join(root, m) for m in members]
        return (["--patch-module", "java.base=" + os.path.join(root, "java.base"),
                 "-XDignore.symbol.file"] + files,
                f"java.util of {src_zip} ({len(files)} files)")
    subprocess.run([sys.executable, os.path.join(HERE, "gen_sources.py"), root, str(packages),
                    str(classes)], check=True)
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs
                   if f.endswith(".java"))
    lines = sum(1 for f in files for _ in open(f))
    why = ("small tree for cpu=times" if name == "small" else "JDK 17 src.zip not installed")
    return files, f"generated tree, {len(files)} classes, {lines} lines ({why})"


def run_once(java, lib_dir, hprof, javac_args, work, timeout, counts=None):
    """One javac run; returns (wall seconds or None if killed, CPU seconds (user + system of the
    child) or None, heap dump seconds or None, ok). `counts`, if given, receives "samples" (the
    CPU SAMPLES total HPROF wrote), "stacks" (stacks the runtime's CPU-time sampler took), and
    "user" and "system" (the CPU seconds apart)."""
    out = os.path.join(work, "classes")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    prof = os.path.join(work, "prof")
    shutil.rmtree(prof, ignore_errors=True)
    os.makedirs(prof)
    cmd = [java]
    if hprof == "-":
        pass  # no agent, though not the baseline
    elif hprof is not None and hprof.startswith("-agentpath:"):
        cmd.append(hprof)  # a comparison agent, not HPROF
    elif hprof is not None:
        cmd.append("-agentlib:hprof=" + hprof + ",file=" + os.path.join(prof, "java.hprof.txt"))
    cmd += ["-m", "jdk.compiler/com.sun.tools.javac.Main", "-nowarn", "-proc:none", "-d", out]
    cmd += javac_args
    # The runtime's CPU-time sampler prints its counters at exit (one stderr line).
    env = dict(os.environ, LD_LIBRARY_PATH=lib_dir, JVMPI_SAMPLER_STATS="1")
    for k in ("_JAVA_HPROF_OPTIONS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"):
        env.pop(k, None)
    dump = {}
    tail = []

    def watch(stream):
        # "Dumping Java heap ..." then " done.": time between them is the heap dump's.
        buf = b""
        while True:
            c = stream.read(1)
            if not c:
                return
            tail.append(c)
            if len(tail) > 4096:
                del tail[:2048]
            buf = (buf + c)[-64:]
            if buf.endswith(b"Dumping Java heap ..."):
                dump["start"] = time.monotonic()
            elif buf.endswith(b" done.") and "start" in dump and "end" not in dump:
                dump["end"] = time.monotonic()

    result = run_timed_usage(cmd, work, timeout, env=env, read_stderr=watch)
    if result is None:
        return None, None, None, False
    wall, user, system, rc = result
    cpu = user + system
    d = dump["end"] - dump["start"] if "end" in dump else None
    if counts is not None:
        counts["user"], counts["system"] = user, system
        m = re.search(rb"jvmpi: cpu sampler: .*?signals=(\d+) taken=(\d+)", b"".join(tail))
        if m:
            counts["signals"] = int(m.group(1))
            counts["stacks"] = int(m.group(2))
        try:
            with open(os.path.join(prof, "java.hprof.txt"), errors="replace") as f:
                m = re.search(r"CPU SAMPLES BEGIN \(total = (\d+)", f.read())
            if m:
                counts["samples"] = int(m.group(1))
        except OSError:
            pass
    return wall, cpu, d, rc == 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--jdk", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--packages", type=int, default=6)
    ap.add_argument("--classes", type=int, default=25)
    ap.add_argument("--times-classes", type=int, default=8)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--work", default=None)
    ap.add_argument("--compare-build", default=None, metavar="DIR",
                    help="also run every chosen HPROF configuration with DIR/lib's libhprof.so "
                         "and libjvmpi.so (e.g. a build of the commit before a change), "
                         "interleaved with the rest, as rows named '... [compare build]'")
    ap.add_argument("--only", default=None, metavar="SUBSTR[,SUBSTR...]",
                    help="run only the configurations whose name contains one of these "
                         "substrings (the no-agent baseline of each tree in use always runs)")
    args = ap.parse_args()

    java = os.path.join(args.jdk, "bin", "java")
    lib_dir = os.path.join(args.build, "lib")
    for f in ("libhprof.so", "libjvmpi.so"):
        if not os.path.isfile(os.path.join(lib_dir, f)):
            sys.exit(f"{lib_dir}/{f} is missing: build the hprof target first")
    build = os.path.abspath(args.build)
    floor = "-agentpath:" + os.path.join(build, "bench", "heap", "libjvmpibench_jvmti_floor.so")
    all_configs = [
        ("no agent", None, "main"),
        # The same run again, as a configuration of its own: its ratio to the baseline shows how
        # far two identical configurations drift apart on this machine in this run.
        ("no agent, repeated", "-", "main"),
        ("cpu=samples, 10 ms", "cpu=samples,interval=10", "main"),
        ("cpu=samples, 1 ms", "cpu=samples,interval=1", "main"),
        # Continuous profiling: the same sampling with period deltas written every 10 s (a javac
        # run may see only the last one, at exit) and every second.
        ("cpu=samples, 10 ms, period=10", "cpu=samples,interval=10,period=10", "main"),
        ("cpu=samples, 10 ms, period=1", "cpu=samples,interval=10,period=1", "main"),
        # JDK 8's way (suspend, ThreadHasRun, GetCallTrace), beside the CPU-time sampler above.
        ("cpu=samples sampler=suspend, 10 ms", "cpu=samples,sampler=suspend,interval=10", "main"),
        ("cpu=samples sampler=suspend, 1 ms", "cpu=samples,sampler=suspend,interval=1", "main"),
        # cpu=samples taken apart: the runtime with an agent that ignores cpu=samples' events,
        # then HPROF with a sampler that never wakes (interval of 11.6 days).
        ("cpu=samples part: runtime, events ignored", "-agentpath:" + os.path.join(
            build, "lib", "libjvmpi.so") + "=" + os.path.join(
            build, "bench", "hprof", "libjvmpibench_ignoring.so"), "main"),
        ("cpu=samples part: HPROF, no sample taken", "cpu=samples,interval=1000000000", "main"),
        ("heap=sites", "heap=sites", "main"),
        ("heap=sites sample=512k", "heap=sites,sample=512k", "main"),
        # The least any exact allocation-site profiler on JVMTI does per allocation (an event, a
        # tag, a depth-4 stack trace): the floor heap=sites is measured against.
        ("JVMTI floor of heap=sites", floor, "main"),
        # The floor taken apart: the event alone, the event and a tag (what exact live counts
        # need, to learn of each death), the event and a trace.
        ("JVMTI floor part: event only", floor + "=none", "main"),
        ("JVMTI floor part: event + tag", floor + "=tag", "main"),
        ("JVMTI floor part: event + trace", floor + "=trace", "main"),
        ("monitor=y", "monitor=y", "main"),
        ("heap=dump", "heap=dump", "main"),
        ("no agent (small tree)", None, "small"),
        ("cpu=times (small tree)", "cpu=times", "small"),
    ]
    if args.only:
        wanted = [w.strip() for w in args.only.split(",") if w.strip()]
        chosen = [c for c in all_configs if any(w in c[0] for w in wanted)]
        if not chosen:
            sys.exit(f"--only {args.only}: no configuration matches; names: "
                     + "; ".join(c[0] for c in all_configs))
        trees = {c[2] for c in chosen}
        # The no-agent baseline of every tree in use always runs.
        configs = [c for c in all_configs
                   if c in chosen or (c[1] is None and c[2] in trees)]
    else:
        configs = all_configs
    if args.compare_build:
        other = os.path.join(os.path.abspath(args.compare_build), "lib")
        for f in ("libhprof.so", "libjvmpi.so"):
            if not os.path.isfile(os.path.join(other, f)):
                sys.exit(f"--compare-build: {other}/{f} is missing")
        twins = []
        for c in configs:
            twins.append(c)
            if c[1] not in (None, "-") and not c[1].startswith("-agentpath:"):
                twins.append((c[0] + " [compare build]", c[1], c[2], other))
        configs = twins
    trees = {c[2] for c in configs}

    work = args.work or tempfile.mkdtemp(prefix="hprof-bench-")
    try:
        run_all(args, java, lib_dir, configs, trees, work)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


def log(s):
    print(s, file=sys.stderr, flush=True)


def run_all(args, java, lib_dir, configs, trees, work):
    """Runs the configurations round-robin and prints the table."""
    tree_args, tree_desc = {}, {}
    if "main" in trees:
        tree_args["main"], tree_desc["main"] = workload(work, args.jdk, args.packages,
                                                        args.classes, "main")
    if "small" in trees:
        tree_args["small"], tree_desc["small"] = workload(work, args.jdk, 1, args.times_classes,
                                                          "small")
    if trees == {"main", "small"}:
        what = f"{tree_desc['main']}; cpu=times on {tree_desc['small']}"
    elif "main" in trees:
        what = tree_desc["main"]
    else:
        what = tree_desc["small"]
    log(f"workload: {what}; {args.runs} rounds, each running every configuration once: "
        + ", ".join(c[0] for c in configs))

    def loadavg():
        try:
            return open("/proc/loadavg").read().split()[0]
        except OSError:
            return "?"

    load_start = loadavg()
    res = {c[0]: {"walls": [], "cpus": [], "users": [], "systems": [], "dumps": [], "notes": [],
                  "dead": False, "samples_rate": [], "stacks_rate": [],
                  "per_signal": []}
           for c in configs}
    for r in range(args.runs):
        log(f"round {r + 1}/{args.runs} (load average {loadavg()}):")
        for name, hprof, tree, *other_lib in configs:
            st = res[name]
            if st["dead"]:
                continue  # killed in an earlier round: do not spend the cap again
            counts = {}
            wall, cpu, dump, ok = run_once(java, other_lib[0] if other_lib else lib_dir, hprof,
                                           tree_args[tree], work, args.timeout, counts)
            if wall is None:
                st["dead"] = True
                st["notes"].append(f"run {r + 1} killed after {args.timeout:.0f} s; "
                                   "later rounds skipped")
                log(f"  {name}: killed after {args.timeout:.0f} s")
                continue
            if not ok:
                st["notes"].append(f"run {r + 1}: javac failed")
            st["walls"].append(wall)
            st["cpus"].append(cpu)
            st["users"].append(counts["user"])
            st["systems"].append(counts["system"])
            if cpu and "samples" in counts:
                st["samples_rate"].append(counts["samples"] / cpu)
            if cpu and "stacks" in counts:
                st["stacks_rate"].append(counts["stacks"] / cpu)
            if counts.get("signals"):
                st["per_signal"].append(counts["stacks"] / counts["signals"])
            if dump is not None:
                st["dumps"].append(dump)
            log(f"  {name}: {wall:.2f} s wall, {cpu:.2f} s CPU"
                + (f" (heap dump {dump:.2f} s)" if dump else "")
                + ("" if ok else " (javac failed)"))

    base, base_cpu = {}, {}
    for name, hprof, tree, *_ in configs:
        if hprof is None and res[name]["walls"]:
            base[tree] = statistics.median(res[name]["walls"])
            base_cpu[tree] = statistics.median(res[name]["cpus"])
    print(f"Workload: javac ({args.jdk}, jdk.compiler) compiling {what}. Median of "
          f"{args.runs} runs, interleaved (each round runs every configuration once, in table "
          f"order); ratio = median / median of the no-agent run on the same tree; CPU = user + "
          f"system time of the java process (all threads). {os.cpu_count()} CPUs; 1-minute load "
          f"average {load_start} at the start, {loadavg()} at the end (other jobs share the "
          f"machine).\n")
    print("| configuration | hprof options | median wall (s) | ratio | CPU s (median) | CPU ratio "
          "| user / system s (median) | runs: wall / CPU (s) | notes |")
    print("|---|---|---:|---:|---:|---:|---:|---|---|")
    floor_cpus = res.get("JVMTI floor of heap=sites", {}).get("cpus")
    for name, hprof, tree, *_ in configs:
        st = res[name]
        walls, cpus = st["walls"], st["cpus"]
        b, bc = base.get(tree), base_cpu.get(tree)
        extra = list(st["notes"])
        if st["samples_rate"]:
            extra.append(f"CPU samples per CPU-second: {statistics.median(st['samples_rate']):.0f}")
        if st["stacks_rate"]:
            extra.append("stacks taken by the CPU-time sampler per CPU-second: "
                         f"{statistics.median(st['stacks_rate']):.0f}")
        if st["per_signal"]:
            extra.append("samples taken per signal: "
                         f"{statistics.median(st['per_signal']):.3f} (runs: "
                         f"{', '.join(f'{r:.3f}' for r in st['per_signal'])})")
        if name.startswith("heap=sites") and "sample=" not in name and floor_cpus and st["cpus"]:
            # Against the floor of the same run: the ratio of the medians, and the median of the
            # per-round ratios (each round's runs are minutes apart at most).
            per_round = [c / f for c, f in zip(st["cpus"], floor_cpus)]
            extra.append(f"CPU vs JVMTI floor: {statistics.median(st['cpus']) / statistics.median(floor_cpus):.3f}x "
                         f"(per round: {', '.join(f'{r:.2f}' for r in per_round)}; median "
                         f"{statistics.median(per_round):.3f}x)")
        # Per round beside the medians: the A/A row against the baseline (how far two identical
        # configurations drift apart in this run), a compare-build row against its own build.
        pair = None
        if hprof == "-" and name in res and any(c[1] is None and c[2] == tree for c in configs):
            pair = ("A/A vs no agent", next(n for n, h, t, *_ in configs if h is None and t == tree))
        elif name.endswith(" [compare build]") and name[:-len(" [compare build]")] in res:
            pair = ("this build vs compare build", name[:-len(" [compare build]")])
        if pair and st["cpus"] and res[pair[1]]["cpus"]:
            ratios = ([c / o for c, o in zip(st["cpus"], res[pair[1]]["cpus"])] if pair[0][0] == "A"
                      else [o / c for c, o in zip(st["cpus"], res[pair[1]]["cpus"])])
            extra.append(f"CPU, {pair[0]}, per round: {', '.join(f'{r:.2f}' for r in ratios)} "
                         f"(median {statistics.median(ratios):.3f}x)")
        if st["dumps"]:
            extra.append(f"heap dump itself: median {statistics.median(st['dumps']):.2f} s")
        if walls:
            med, cmed = statistics.median(walls), statistics.median(cpus)
            ratio = f"{med / b:.3f}x" if b else "-"
            cratio = f"{cmed / bc:.3f}x" if bc else "-"
            runs = ", ".join(f"{w:.2f} / {c:.2f}" for w, c in zip(walls, cpus))
            us = (f"{statistics.median(st['users']):.2f} / "
                  f"{statistics.median(st['systems']):.2f}")
            print(f"| {name} | {hprof or '-'} | {med:.2f} | {ratio} | {cmed:.2f} | {cratio} | "
                  f"{us} | {runs} | {'; '.join(extra)} |")
        else:
            ratio = f"> {args.timeout / b:.0f}x" if st["dead"] and b else "-"
            print(f"| {name} | {hprof or '-'} | - | {ratio} | - | - | - | - | {'; '.join(extra)} |")


if __name__ == "__main__":
    main()
