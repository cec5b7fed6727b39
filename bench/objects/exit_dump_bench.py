# SPDX-License-Identifier: Apache-2.0
"""The exit heap dump of an agent of the HPROF lineage beside `jcmd <pid> GC.heap_dump` on the same
program (benchobjects.HeldObjects, N live nodes), interleaved: each round runs, per JDK, jcmd, the
lineage agent without and with per-object requests, and jcmd again (the A/A row). The agent is
tests/jvmpi/agents/lineage_agent.c (mode=dump: every event disabled at JVM_SHUT_DOWN, then a
level-2 HEAP_DUMP read as such an agent reads it; fetch=1: RequestEvent(OBJECT_ALLOC) for every
object of the dump, as the agent does for objects it has not seen). Times: jcmd's own "Heap dump
file created [... in T secs]" (the VM operation, without jcmd's start-up) and the agent's wall
time around RequestEvent(HEAP_DUMP), its handler included. Prints a Markdown table of medians."""
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


def agent_dump(jdk, lib, agent, classes, size, fetch, tmp, timeout):
    log = os.path.join(tmp, "lineage.log")
    cmd = [os.path.join(jdk, "bin/java"),
           f"-agentpath:{lib}={agent}:log={log},mode=dump,fetch={1 if fetch else 0}", "-Xmx3g",
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
            fields["fetch_failed"] != "0":
        sys.stderr.write(f"dump incomplete: {m.group(0)}\n")
        return None
    return {"s": float(fields["ms"]) / 1e3, "records": int(fields["records"]),
            "fetched": int(fields["fetched"])}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--jdks", required=True, help="comma-separated JAVA_HOMEs")
    ap.add_argument("--sizes", default="1000000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=900)
    a = ap.parse_args()
    classes = os.path.join(a.build, "bench/objects/classes")
    lib = os.path.abspath(os.path.join(a.build, "src/jvmpi/libjvmpi.so"))
    agent = os.path.abspath(os.path.join(a.build, "tests/jvmpi/libjvmpitest_lineage.so"))
    jdks = [j for j in a.jdks.split(",") if os.path.exists(os.path.join(j, "bin/java"))]
    sizes = [int(s) for s in a.sizes.split(",")]
    configs = [("jcmd", lambda j, s, t: jcmd_dump(j, classes, s, t, a.timeout)),
               ("agent", lambda j, s, t: agent_dump(j, lib, agent, classes, s, False, t,
                                                    a.timeout)),
               ("agent+fetch", lambda j, s, t: agent_dump(j, lib, agent, classes, s, True, t,
                                                          a.timeout)),
               ("jcmd again", lambda j, s, t: jcmd_dump(j, classes, s, t, a.timeout))]
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
          f"{a.runs} interleaved runs, seconds; ratio = lineage agent's dump with per-object "
          f"requests / jcmd GC.heap_dump; A/A = jcmd's second run / its first; {os.cpu_count()} "
          f"CPUs, load average {os.getloadavg()[0]:.2f}\n")
    print("| JDK | heap objects | jcmd GC.heap_dump s | agent dump s | agent dump + OBJECT_ALLOC "
          "per object s | objects requested | ratio | A/A |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for jdk in jdks:
        for size in sizes:
            med = {}
            for name, _ in configs:
                rows = results.get((jdk, size, name))
                med[name] = statistics.median(x["s"] for x in rows) if rows else None
            fetched = results.get((jdk, size, "agent+fetch"))
            cell = lambda v: "failed" if v is None else f"{v:.2f}"
            ratio = lambda x, y: "-" if x is None or y is None else f"{x / y:.2f}"
            print(f"| {os.path.basename(jdk)} | {size:,} | {cell(med['jcmd'])} | "
                  f"{cell(med['agent'])} | {cell(med['agent+fetch'])} | "
                  f"{min(x['fetched'] for x in fetched) if fetched else '-'} | "
                  f"{ratio(med['agent+fetch'], med['jcmd'])} | "
                  f"{ratio(med['jcmd again'], med['jcmd'])} |")


if __name__ == "__main__":
    main()
