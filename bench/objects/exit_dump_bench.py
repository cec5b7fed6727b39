# SPDX-License-Identifier: Apache-2.0
"""The exit heap dump of an agent of the HPROF lineage beside `jcmd <pid> GC.heap_dump` on the same
program (benchobjects.HeldObjects, N live nodes), interleaved: each round runs, per JDK, jcmd, the
lineage agent without and with per-object requests, and jcmd again (the A/A row). The agent is
tests/jvmpi/agents/lineage_agent.c (mode=dump: every event disabled at JVM_SHUT_DOWN, then a
level-2 HEAP_DUMP read as such an agent reads it; fetch=1: RequestEvent(OBJECT_ALLOC) for every
object of the dump, as the agent does for objects it has not seen; with class requests also
RequestEvent(OBJECT_DUMP) of each instance's class, as such agents do to place a superclass).
Times: jcmd's own "Heap dump
file created [... in T secs]" (the VM operation, without jcmd's start-up) and the agent's wall
time around RequestEvent(HEAP_DUMP), its handler included. Two floor rows time a JVMTI agent that
only tags every object (bench/objects/tag_floor_agent.c: IterateThroughHeap, FollowReferences),
which a dump whose object IDs are tags cannot undercut; with --before, the lineage agent on an
older build's runtime too. Prints a Markdown table of medians, a row per way."""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time


def jcmd_dump(jdk, classes, size, tmp, timeout):
    java = os.path.join(jdk, "bin/java")
    p = subprocess.Popen([java, "-Xmx3g", "-cp", classes, "benchobjects.HeldObjects", str(size),
                          "wait"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline()
        if not line.startswith("held"):
            sys.stderr.write(f"HeldObjects said {line!r}\n")
            return None
        path = os.path.join(tmp, "jcmd.hprof")
        out = subprocess.run([os.path.join(jdk, "bin/jcmd"), str(p.pid), "GC.heap_dump", path],
                             capture_output=True, text=True, timeout=timeout).stdout
        if os.path.exists(path):
            os.unlink(path)
        m = re.search(r"Heap dump file created \[(\d+) bytes in ([0-9.]+) secs\]", out)
        if not m:
            sys.stderr.write(f"jcmd said:\n{out[-2000:]}\n")
            return None
        return {"s": float(m.group(2)), "bytes": int(m.group(1))}
    finally:
        try:
            p.stdin.write("\n")
            p.stdin.close()
        except BrokenPipeError:
            pass
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def agent_dump(jdk, lib, agent, classes, size, fetch, tmp, timeout, classdump=False):
    log = os.path.join(tmp, "lineage.log")
    cmd = [os.path.join(jdk, "bin/java"),
           f"-agentpath:{lib}={agent}:log={log},mode=dump,fetch={1 if fetch else 0},"
           f"classdump={1 if classdump else 0}", "-Xmx3g",
           "-cp", classes, "benchobjects.HeldObjects", str(size)]
    try:
        subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    with open(log) as f:
        text = f.read()
    m = re.search(r"^DUMP\t(.*)$", text, re.M)
    if not m:
        sys.stderr.write(f"no DUMP line from {' '.join(cmd)}:\n{text[-2000:]}\n")
        return None
    fields = dict(w.split("=", 1) for w in m.group(1).split("\t"))
    if fields["rc"] != "0" or fields["unknown"] != "0" or fields["complete"] != "1" or \
            fields["fetch_failed"] != "0" or fields["class_failed"] != "0":
        sys.stderr.write(f"dump incomplete: {m.group(0)}\n")
        return None
    if fields["class_mismatched"] != "0":
        # Answers that differ from the dump's own record of the class (timed all the same).
        sys.stderr.write(f"class answers unlike the dump's records: {m.group(0)}\n")
    return {"s": float(fields["ms"]) / 1e3, "records": int(fields["records"]),
            "fetched": int(fields["fetched"])}


def floor_walk(jdk, floor_lib, classes, size, walk, timeout):
    cmd = [os.path.join(jdk, "bin/java"), f"-agentpath:{floor_lib}=walk={walk}", "-Xmx3g", "-cp",
           classes, "benchobjects.HeldObjects", str(size)]
    try:
        err = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout).stderr
    except subprocess.TimeoutExpired:
        return None
    m = re.search(r"^TAGFLOOR walk=\w+ ms=([0-9.]+) objects=(\d+)", err, re.M)
    if not m:
        sys.stderr.write(f"no TAGFLOOR line from {' '.join(cmd)}:\n{err[-2000:]}\n")
        return None
    return {"s": float(m.group(1)) / 1e3, "objects": int(m.group(2))}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--jdks", required=True, help="comma-separated JAVA_HOMEs")
    ap.add_argument("--sizes", default="1000000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--before", help="an older build directory: its runtime's dump as a row too")
    a = ap.parse_args()
    if a.runs < 1:
        ap.error("--runs must be at least 1")
    classes = os.path.join(a.build, "bench/objects/classes")
    lib = os.path.abspath(os.path.join(a.build, "src/jvmpi/libjvmpi.so"))
    agent = os.path.abspath(os.path.join(a.build, "tests/jvmpi/libjvmpitest_lineage.so"))
    floor_lib = os.path.abspath(os.path.join(a.build, "bench/objects/libjvmpibench_tagfloor.so"))
    jdks = [j for j in a.jdks.split(",") if os.path.exists(os.path.join(j, "bin/java"))]
    try:
        sizes = [int(s) for s in a.sizes.split(",")]
    except ValueError:
        ap.error(f"--sizes must be comma-separated object counts, not {a.sizes!r}")
    if any(s < 1 for s in sizes):
        ap.error("--sizes must be positive")
    configs = [("jcmd", lambda j, s, t: jcmd_dump(j, classes, s, t, a.timeout)),
               ("agent", lambda j, s, t: agent_dump(j, lib, agent, classes, s, False, t,
                                                    a.timeout)),
               ("agent+fetch", lambda j, s, t: agent_dump(j, lib, agent, classes, s, True, t,
                                                          a.timeout)),
               ("agent+fetch+class requests",
                lambda j, s, t: agent_dump(j, lib, agent, classes, s, True, t, a.timeout,
                                           classdump=True)),
               ("jcmd again", lambda j, s, t: jcmd_dump(j, classes, s, t, a.timeout)),
               ("floor: IterateThroughHeap, tag only",
                lambda j, s, t: floor_walk(j, floor_lib, classes, s, "iterate", a.timeout)),
               ("floor: FollowReferences, tag only",
                lambda j, s, t: floor_walk(j, floor_lib, classes, s, "follow", a.timeout))]
    if a.before:
        before_lib = os.path.abspath(os.path.join(a.before, "src/jvmpi/libjvmpi.so"))
        configs.insert(3, ("agent+fetch, older build",
                           lambda j, s, t: agent_dump(j, before_lib, agent, classes, s, True, t,
                                                      a.timeout)))
        configs.insert(5, ("agent+fetch+class requests, older build",
                           lambda j, s, t: agent_dump(j, before_lib, agent, classes, s, True, t,
                                                      a.timeout, classdump=True)))
    results = {}
    with tempfile.TemporaryDirectory(prefix="exit-dump-bench-") as tmp:
        for r in range(a.runs):
            for jdk in jdks:
                for size in sizes:
                    for name, fn in configs:
                        got = fn(jdk, size, tmp)
                        sys.stderr.write(f"round {r + 1} {os.path.basename(jdk)} {size} {name}: "
                                         f"{got}\n")
                        if got:
                            results.setdefault((jdk, size, name), []).append(got)
    print(f"Exit heap dump, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, median of "
          f"{a.runs} interleaved runs; ratio = median / jcmd GC.heap_dump's median on the same "
          f"JDK (the 'jcmd again' row is the A/A); objects/s = the live objects the floor agent "
          f"tagged (FollowReferences) / seconds; {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.2f}\n")
    print("| JDK | heap objects | way | s | objects/s | ratio to jcmd | OBJECT_ALLOC requests |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for jdk in jdks:
        for size in sizes:
            med = {}
            for name, _ in configs:
                rows = results.get((jdk, size, name))
                med[name] = statistics.median(x["s"] for x in rows) if rows else None
            follow = results.get((jdk, size, "floor: FollowReferences, tag only"))
            live = min(x["objects"] for x in follow) if follow else None
            for name, _ in configs:
                v = med[name]
                rows = results.get((jdk, size, name)) or []
                fetched = [x["fetched"] for x in rows if "fetched" in x]
                secs = "failed" if v is None else f"{v:.2f}"
                rate = "-" if v is None or live is None else f"{live / v:,.0f}"
                ratio = "-" if v is None or med["jcmd"] is None else f"{v / med['jcmd']:.2f}"
                print(f"| {os.path.basename(jdk)} | {size:,} | {name} | {secs} | {rate} | {ratio} | "
                      f"{min(fetched) if fetched else '-'} |")


if __name__ == "__main__":
    main()
