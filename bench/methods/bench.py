#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""METHOD_ENTRY/METHOD_EXIT cost: no agent, JVMPI through bytecode insertion (libjvmpi.so hosting
the counting agent libbench_count_methods_jvmpi.so), JVMTI's own MethodEntry/MethodExit (the
counting JVMTI agent libbench_count_methods_jvmti.so) and HPROF's cpu=times (which times every
entry and exit on the same JVMPI events; its cost is read against the JVMPI counting agent's), on
two workloads:

  callheavy  benchmethods.CallHeavy (small methods, collections, recursion), written for this
  javac      JDK 17's javac (java -m jdk.compiler/com.sun.tools.javac.Main) compiling a generated
             source tree (bench/hprof/gen_sources.py), a real program not written for this

Runs are interleaved: round 1 runs every (workload, configuration) once, then round 2, ..., so
slow drift of a shared machine hits all configurations alike. The table gives per workload the
median wall time (the headline) and CPU time (user + system of the java process, all threads),
their ratios to no agent, user and system CPU apart, the ratio to the JVMPI counting agent, the
entry/exit counts the agents print on stderr at exit and the method events per CPU-second. The
"no agent, repeated" row is the baseline run again as a configuration of its own (an A/A row).
Below the table, per round: each agent's CPU against the counting agent's of the same round, and
the A/A row's against no agent's.

With --compare-build DIR, HPROF's rows run a second time with the libraries of another build
(named "... [compare build]"), interleaved with the rest; per round the script then also prints
this build's HPROF CPU against the other's (a before/after of the same round).

Run through bench/run-method-bench.sh.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from timed_run import run_timed_usage  # noqa: E402
COUNTS = re.compile(rb"^(jvmpi|jvmti) entries (\d+) exits (\d+)$", re.M)
HPROF_EVENTS = re.compile(rb"^HPROF cpu=times: (\d+) method events, (\d+) thread CPU clock reads",
                          re.M)
COUNTING = "JVMPI METHOD_ENTRY/EXIT (libjvmpi, bytecode insertion)"
COMPARE = " [compare build]"


def log(s):
    print(s, file=sys.stderr, flush=True)


def run_once(cmd, cwd, timeout):
    """Runs cmd; returns (wall s, user s, system s, rc, stderr bytes), or None when killed at the
    timeout."""
    err = []
    result = run_timed_usage(cmd, cwd, timeout,
                             read_stderr=lambda stream: err.append(stream.read()))
    if result is None:
        return None
    wall, user, system, rc = result
    return wall, user, system, rc, err[0] if err else b""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--jdk", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=20, help="CallHeavy's rounds argument")
    ap.add_argument("--packages", type=int, default=3)
    ap.add_argument("--classes", type=int, default=20)
    ap.add_argument("--workloads", default="callheavy,javac")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--only", default=None, metavar="SUBSTR[,SUBSTR...]",
                    help="run only the configurations whose name contains one of these "
                         "substrings (no agent always runs)")
    ap.add_argument("--compare-build", default=None, metavar="DIR",
                    help="also run HPROF's configurations with DIR's lib/libhprof.so (and its "
                         "runtime), as rows named '... [compare build]'")
    args = ap.parse_args()

    build = os.path.abspath(args.build)
    java = os.path.join(args.jdk, "bin", "java")
    b = os.path.join(build, "bench", "methods")
    jvmpi = os.path.join(build, "src", "jvmpi", "libjvmpi.so")
    agent_jvmpi = os.path.join(b, "libbench_count_methods_jvmpi.so")
    agent_jvmti = os.path.join(b, "libbench_count_methods_jvmti.so")
    hprof = os.path.join(build, "lib", "libhprof.so")
    classes = os.path.join(b, "classes")
    for f in (jvmpi, agent_jvmpi, agent_jvmti, hprof, os.path.join(classes, "benchmethods",
                                                            "CallHeavy.class")):
        if not os.path.isfile(f):
            sys.exit(f"{f} is missing: build first (cmake --build {args.build})")
    wanted = [w.strip() for w in args.workloads.split(",") if w.strip()]
    for w in wanted:
        if w not in ("callheavy", "javac"):
            sys.exit(f"unknown workload {w!r} (callheavy, javac)")

    configs = [
        ("no agent", []),
        ("no agent, repeated", []),
        (COUNTING, [f"-agentpath:{jvmpi}={agent_jvmpi}"]),
        ("JVMTI MethodEntry/MethodExit", [f"-agentpath:{agent_jvmti}"]),
        # HPROF writes java.hprof.txt into the run's directory; its verbose line at exit gives the
        # events it timed.
        ("HPROF cpu=times", [f"-agentpath:{hprof}=cpu=times"]),
    ]
    if args.only:
        wanted_configs = [w.strip() for w in args.only.split(",") if w.strip()]
        configs = [c for i, c in enumerate(configs)
                   if i == 0 or any(w in c[0] for w in wanted_configs)]
        if len(configs) == 1:
            sys.exit(f"--only {args.only}: no configuration matches")
    if args.compare_build:
        other = os.path.join(os.path.abspath(args.compare_build), "lib", "libhprof.so")
        if not os.path.isfile(other):
            sys.exit(f"--compare-build: {other} is missing")
        configs += [(c + COMPARE, [a.replace(hprof, other) for a in agent])
                    for c, agent in configs if c.startswith("HPROF")]
    work = tempfile.mkdtemp(prefix="method-bench-")
    try:
        workloads = []  # (name, description, java arguments after the agent options)
        if "callheavy" in wanted:
            workloads.append(("CallHeavy", f"benchmethods.CallHeavy {args.rounds}",
                              ["-cp", classes, "benchmethods.CallHeavy", str(args.rounds)]))
        if "javac" in wanted:
            src = os.path.join(work, "src")
            subprocess.run([sys.executable, os.path.join(HERE, "..", "hprof", "gen_sources.py"),
                            src, str(args.packages), str(args.classes)], check=True)
            files = sorted(os.path.join(d, f) for d, _, fs in os.walk(src) for f in fs
                           if f.endswith(".java"))
            lines = sum(1 for f in files for _ in open(f))
            workloads.append(("javac", f"javac compiling a generated tree ({args.packages} x "
                              f"{args.classes} = {len(files)} classes, {lines} lines)",
                              ["-m", "jdk.compiler/com.sun.tools.javac.Main", "-nowarn",
                               "-proc:none", "-d", os.path.join(work, "out")] + files))
        run(args, java, work, workloads, configs)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(args, java, work, workloads, configs):
    def loadavg():
        try:
            return open("/proc/loadavg").read().split()[0]
        except OSError:
            return "?"

    log("workloads: " + "; ".join(d for _, d, _ in workloads)
        + f"; {args.runs} rounds, each running every workload and configuration once")
    load_start = loadavg()
    res = {(w, c): {"walls": [], "cpus": [], "users": [], "systems": [], "counts": [],
                    "events": [], "notes": [], "dead": False}
           for w, _, _ in workloads for c, _ in configs}
    for r in range(args.runs):
        log(f"round {r + 1}/{args.runs} (load average {loadavg()}):")
        for wname, _, wargs in workloads:
            for cname, agent in configs:
                st = res[(wname, cname)]
                if st["dead"]:
                    continue  # killed in an earlier round: do not spend the cap again
                shutil.rmtree(os.path.join(work, "out"), ignore_errors=True)
                os.makedirs(os.path.join(work, "out"))
                got = run_once([java] + agent + wargs, work, args.timeout)
                if got is None:
                    st["dead"] = True
                    st["notes"].append(f"run {r + 1} killed after {args.timeout:.0f} s; "
                                       "later rounds skipped")
                    log(f"  {wname}, {cname}: killed after {args.timeout:.0f} s")
                    continue
                wall, user, system, rc, err = got
                cpu = user + system
                m = COUNTS.findall(err)
                counts = (int(m[-1][1]), int(m[-1][2])) if m else None
                h = HPROF_EVENTS.findall(err)
                if h:
                    st["events"].append((int(h[-1][0]), int(h[-1][1])))
                elif counts:
                    st["events"].append((counts[0] + counts[1], None))
                if rc != 0:
                    st["notes"].append(f"run {r + 1}: exit code {rc}")
                    tail = err.decode(errors="replace").strip().splitlines()[-3:]
                    log(f"  {wname}, {cname}: exit code {rc}: " + " | ".join(tail))
                if agent and counts is None and not h:
                    st["notes"].append(f"run {r + 1}: no counts on stderr")
                st["walls"].append(wall)
                st["cpus"].append(cpu)
                st["users"].append(user)
                st["systems"].append(system)
                if counts:
                    st["counts"].append(counts)
                log(f"  {wname}, {cname}: {wall:.2f} s wall, {cpu:.2f} s CPU "
                    f"(user {user:.2f}, system {system:.2f})"
                    + (f", entries {counts[0]} exits {counts[1]}" if counts else "")
                    + (f", {h[-1][0].decode()} events timed, {h[-1][1].decode()} thread CPU "
                       "clock reads" if h else ""))

    print(f"Median of {args.runs} runs, interleaved (each round runs every workload and "
          f"configuration once, in table order); ratio = median / median of no agent on the same "
          f"workload; CPU = user + system time of the java process (all threads); entries / exits "
          f"= what the counting agent printed at exit (the range when runs differ). "
          f"{os.cpu_count()} CPUs; 1-minute load average {load_start} at the start, {loadavg()} "
          f"at the end.\n")
    for wname, desc, _ in workloads:
        print(f"Workload {wname}: {desc}\n")
        base = res[(wname, configs[0][0])]
        bw = statistics.median(base["walls"]) if base["walls"] else None
        bc = statistics.median(base["cpus"]) if base["cpus"] else None
        counting = res.get((wname, COUNTING))
        kw = statistics.median(counting["walls"]) if counting and counting["walls"] else None
        kc = statistics.median(counting["cpus"]) if counting and counting["cpus"] else None
        print("| configuration | median wall (s) | ratio | CPU s (median) | CPU ratio "
              "| user / system s (median) | wall / CPU vs counting agent "
              "| entries / exits reported | method events per CPU-second "
              "| runs: wall / CPU (s) | notes |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
        for cname, agent in configs:
            st = res[(wname, cname)]
            notes = "; ".join(st["notes"])
            if st["counts"]:
                ents = sorted(c[0] for c in st["counts"])
                exs = sorted(c[1] for c in st["counts"])
                rng = lambda v: f"{v[0]:,}" if v[0] == v[-1] else f"{v[0]:,}–{v[-1]:,}"
                counts = f"{rng(ents)} / {rng(exs)}"
            elif st["events"]:
                evs = sorted(e[0] for e in st["events"])
                reads = sorted(e[1] for e in st["events"] if e[1] is not None)
                counts = (f"{evs[len(evs) // 2]:,} events timed"
                          + (f", {reads[len(reads) // 2]:,} CPU clock reads" if reads else ""))
            else:
                counts = "-"
            if not st["walls"]:
                ratio = f"> {args.timeout / bw:.0f}x" if st["dead"] and bw else "-"
                print(f"| {cname} | - | {ratio} | - | - | - | - | {counts} | - | - | {notes} |")
                continue
            mw, mc = statistics.median(st["walls"]), statistics.median(st["cpus"])
            mu, ms = statistics.median(st["users"]), statistics.median(st["systems"])
            ratio = f"{mw / bw:.2f}x" if bw else "-"
            cratio = f"{mc / bc:.2f}x" if bc else "-"
            vs = f"{mw / kw:.2f}x / {mc / kc:.2f}x" if kw and kc and agent else "-"
            if st["events"]:
                evs = sorted(e[0] for e in st["events"])
                rate = f"{evs[len(evs) // 2] / mc / 1e6:.1f} M"
            else:
                rate = "-"
            runs = ", ".join(f"{w:.2f} / {c:.2f}" for w, c in zip(st["walls"], st["cpus"]))
            print(f"| {cname} | {mw:.2f} | {ratio} | {mc:.2f} | {cratio} | {mu:.2f} / {ms:.2f} "
                  f"| {vs} | {counts} | {rate} | {runs} | {notes} |")
        print()
        # Per round, each agent against the counting agent of the same round (and the A/A row
        # against no agent): on a loaded machine the spread of these says what the medians are worth.
        per_round = []
        for cname, agent in configs:
            st = res[(wname, cname)]
            ref = counting if agent and cname != COUNTING else (base if not agent and st is not base
                                                                 else None)
            if ref is None or not st["cpus"] or len(st["cpus"]) != len(ref["cpus"]):
                continue
            rs = [c / k for c, k in zip(st["cpus"], ref["cpus"]) if k > 0]
            ref_name = "counting agent" if agent else "no agent"
            per_round.append(f"{cname} / {ref_name}, CPU per round: "
                             + ", ".join(f"{r:.2f}x" for r in rs)
                             + f" (median {statistics.median(rs):.2f}x)")
        for cname, _ in configs:
            st, twin = res[(wname, cname)], res.get((wname, cname + COMPARE))
            if twin is None or not st["cpus"] or len(st["cpus"]) != len(twin["cpus"]):
                continue
            rs = [c / k for c, k in zip(st["cpus"], twin["cpus"]) if k > 0]
            per_round.append(f"{cname} / {cname + COMPARE}, CPU per round: "
                             + ", ".join(f"{r:.2f}x" for r in rs)
                             + f" (median {statistics.median(rs):.2f}x)")
        for line in per_round:
            print(f"- {line}")
        if per_round:
            print()


if __name__ == "__main__":
    main()
