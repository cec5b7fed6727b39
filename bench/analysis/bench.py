#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Heap-analysis benchmark: jvmprof against VisualVM's heap library on the same jcmd dumps.

For each size (millions of objects) BenchHeap builds a heap that `jcmd GC.heap_dump` writes to a
file; then, side by side on that file (in the page cache for both tools):
  - jvmprof first open (`summary --no-index`, twice: the second run is the A/A row showing noise),
    with its phases (JVMPROF_PHASE_TIMES): reading records = the summary pass, and the dominator
    phases;
  - jvmprof first open that saves the index, the index size, and reopen (`summary`, `dominators`);
  - VisualVM's library (VisualVmBench): open to summary, then retained sizes (10 biggest objects);
    its reopen (with the cache it writes).
Wall time, CPU time and peak RSS of each process; peak anonymous RSS (heap, not the mapped dump
nor the mapped index file the analyzer builds its arrays in) sampled from /proc every 20 ms.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(cmd, env=None):
    """Runs cmd; returns dict(wall, cpu, maxrss_mb, anon_mb, out, err). Peak RSS and CPU time
    come from wait4 on the child itself; peak anonymous RSS (the heap, not the mapped dump) from
    sampling /proc/PID/status every 20 ms."""
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    chunks = {"out": [], "err": []}

    def drain(stream, key):
        for block in iter(lambda: stream.read(65536), b""):
            chunks[key].append(block)

    readers = [threading.Thread(target=drain, args=(p.stdout, "out")),
               threading.Thread(target=drain, args=(p.stderr, "err"))]
    for t in readers:
        t.start()
    peak_anon = [0]
    done = threading.Event()

    def sample():
        while not done.is_set():
            try:
                with open(f"/proc/{p.pid}/status") as f:
                    for line in f:
                        if line.startswith("RssAnon:"):
                            peak_anon[0] = max(peak_anon[0], int(line.split()[1]))
            except OSError:
                pass
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(p.pid, 0)
    done.set()
    wall = time.monotonic() - start
    for t in readers:
        t.join()
    rc = os.waitstatus_to_exitcode(status)
    p.returncode = rc
    out = b"".join(chunks["out"]).decode(errors="replace")
    err = b"".join(chunks["err"]).decode(errors="replace")
    if rc != 0:
        sys.exit(f"failed ({rc}): {' '.join(cmd)}\n{err[-2000:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "maxrss_mb": usage.ru_maxrss / 1024,
            "anon_mb": peak_anon[0] / 1024, "out": out, "err": err}


maxrss_of = run


def make_dump(java, jcmd, classes, millions, path, heap_gb):
    p = subprocess.Popen([java, f"-Xmx{heap_gb}g", "-XX:+UseParallelGC", "-cp", classes, "BenchHeap",
                          str(millions)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    if not line.startswith("ready"):
        p.kill()
        sys.exit(f"BenchHeap {millions} did not start: {line}")
    if os.path.exists(path):
        os.remove(path)
    start = time.monotonic()
    subprocess.run([jcmd, str(p.pid), "GC.heap_dump", path], check=True, stdout=subprocess.DEVNULL)
    dump_s = time.monotonic() - start
    p.stdin.close()
    p.wait()
    return dump_s


def phase_times(err, key="phase-times"):
    m = re.search(key + r":(.*)", err)
    if not m:
        return {}
    return {k: float(v) for k, v in re.findall(r"'([^']+)'=([0-9.]+)", m.group(1) + " 'end'=" +
                                                  re.search(r"end=([0-9.]+)", m.group(1)).group(1))}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1,5", help="millions of objects, comma-separated (default 1,5)")
    ap.add_argument("--build", default=os.path.join(REPO, "build"), help="build directory (default build/)")
    ap.add_argument("--work", default=None, help="where dumps go (default BUILD/bench/analysis/run; deleted)")
    ap.add_argument("--java-home", default="/usr/lib/jvm/java-17-openjdk-amd64")
    ap.add_argument("--keep", action="store_true", help="keep the dumps")
    ap.add_argument("--no-visualvm", action="store_true",
                    help="jvmprof only (for sizes whose VisualVM run would not fit in memory)")
    args = ap.parse_args()
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
        assert all(s > 0 for s in sizes)
    except (ValueError, AssertionError):
        ap.error("--sizes needs positive integers, e.g. 1,5,20")
    jvmprof = os.path.join(args.build, "src/jvmprof/jvmprof")
    classes = os.path.join(args.build, "bench/analysis/classes")
    jar = "/usr/share/visualvm/visualvm/modules/org-graalvm-visualvm-lib-jfluid-heap.jar"
    java = os.path.join(args.java_home, "bin/java")
    jcmd = os.path.join(args.java_home, "bin/jcmd")
    for f in (jvmprof, os.path.join(classes, "BenchHeap.class"), jar, java):
        if not os.path.exists(f):
            sys.exit(f"missing {f} (build first: cmake --build {args.build}; apt-get install visualvm)")
    work = args.work or os.path.join(args.build, "bench/analysis/run")
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, JVMPROF_PHASE_TIMES="1")
    print(f"# heap analysis: jvmprof vs VisualVM's heap library — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"# {os.cpu_count()} CPUs; dumps by jcmd GC.heap_dump ({args.java_home})")
    rows = []
    for millions in sizes:
        dump = os.path.join(work, f"heap-{millions}m.hprof")
        heap_gb = max(2, millions // 5 + 2)
        dump_s = make_dump(java, jcmd, classes, millions, dump, heap_gb)
        size_mb = os.path.getsize(dump) / 1e6
        for stale in (dump + ".jvmprof-index",):
            if os.path.exists(stale):
                os.remove(stale)
        first = maxrss_of([jvmprof, "summary", "--no-index", "--top", "5", dump], env)
        again = maxrss_of([jvmprof, "summary", "--no-index", "--top", "5", dump], env)
        objects = int(re.search(r"objects:\s+(\d+)", first["out"]).group(1))
        saved = maxrss_of([jvmprof, "summary", "--top", "5", dump], env)
        index_mb = os.path.getsize(dump + ".jvmprof-index") / 1e6
        reopen = maxrss_of([jvmprof, "summary", "--top", "5", dump], env)
        dominators = maxrss_of([jvmprof, "dominators", "--top", "10", dump], env)
        vvm_heap = f"-Xmx{max(4, millions // 2 + 3)}g"
        if args.no_visualvm:
            vvm = vvm_again = {"out": "open_s nan retained_s nan", "wall": float("nan"),
                               "cpu": float("nan"), "maxrss_mb": float("nan")}
        else:
            vvm = maxrss_of([java, vvm_heap, "-cp", f"{classes}:{jar}", "VisualVmBench", dump])
            vvm_again = maxrss_of([java, vvm_heap, "-cp", f"{classes}:{jar}", "VisualVmBench", dump])
        v = dict(re.findall(r"(\w+_s) ([0-9.]+|nan)", vvm["out"]))
        v2 = dict(re.findall(r"(\w+_s) ([0-9.]+|nan)", vvm_again["out"]))
        ph = phase_times(first["err"])
        ph2 = phase_times(again["err"])
        cpu = phase_times(first["err"], "phase-cpu")
        cpu_pass = cpu.get("indexing ids", 0) - cpu.get("reading records", 0)
        cpu_dom = cpu.get("end", 0) - cpu.get("depth-first search", 0)
        summary_pass = ph.get("indexing ids", 0) - ph.get("reading records", 0)
        dom_s = ph.get("end", 0) - ph.get("depth-first search", 0)
        dom2_s = ph2.get("end", 0) - ph2.get("depth-first search", 0)
        print(f"\n## {millions}M requested: {objects} objects, dump {size_mb:.0f} MB (jcmd {dump_s:.1f} s)")
        print(f"jvmprof first open (summary, no index): {first['wall']:.2f} s wall, {first['cpu']:.2f} s CPU, "
              f"peak RSS {first['maxrss_mb']:.0f} MB, peak anon {first['anon_mb']:.0f} MB "
              f"({first['anon_mb'] * 1048576 / objects:.1f} B/object)")
        print(f"  A/A repeat: {again['wall']:.2f} s wall ({again['wall'] / first['wall']:.3f}x)")
        print(f"  phases: {ph}")
        print(f"  summary pass (reading records): {summary_pass:.2f} s = {size_mb / summary_pass:.0f} MB/s")
        print(f"  dominators + retained sizes: {dom_s:.2f} s (A/A {dom2_s:.2f} s)")
        if cpu:
            print(f"  in CPU time (the work itself on a shared machine): summary pass {cpu_pass:.2f} s = "
                  f"{size_mb / max(cpu_pass, 1e-9):.0f} MB per CPU-second; dominators + retained {cpu_dom:.2f} s")
        print(f"jvmprof first open saving the index: {saved['wall']:.2f} s; index {index_mb:.0f} MB "
              f"({index_mb * 1e6 / objects:.1f} B/object); peak RSS {saved['maxrss_mb']:.0f} MB, "
              f"peak anon {saved['anon_mb']:.0f} MB ({saved['anon_mb'] * 1048576 / objects:.1f} B/object)")
        print(f"jvmprof reopen: summary {reopen['wall']:.2f} s (RSS {reopen['maxrss_mb']:.0f} MB), "
              f"dominators {dominators['wall']:.2f} s")
        print(f"VisualVM: open {float(v['open_s']):.2f} s, retained sizes {float(v['retained_s']):.2f} s, "
              f"process {vvm['wall']:.2f} s wall, {vvm['cpu']:.2f} s CPU, peak RSS {vvm['maxrss_mb']:.0f} MB; "
              f"reopen {float(v2['open_s']):.2f} s + {float(v2['retained_s']):.2f} s")
        rows.append((millions, objects, size_mb, summary_pass, size_mb / summary_pass, first["wall"],
                     float(v["open_s"]), dom_s, float(v["retained_s"]), first["anon_mb"] * 1048576 / objects,
                     first["maxrss_mb"], vvm["maxrss_mb"], index_mb, reopen["wall"],
                     float(v2["open_s"]) + float(v2["retained_s"]), again["wall"] / first["wall"],
                     size_mb / max(cpu_pass, 1e-9), cpu_dom))
        if not args.keep:
            for f in os.listdir(work):
                if f.startswith(os.path.basename(dump)):
                    target = os.path.join(work, f)
                    shutil.rmtree(target) if os.path.isdir(target) else os.remove(target)
    print("\n| objects | dump MB | summary pass | MB/s | jvmprof first open | VisualVM open | jvmprof dominators+retained | "
          "VisualVM retained | ratio | jvmprof anon B/object | jvmprof peak RSS MB | VisualVM peak RSS MB | "
          "index MB | jvmprof reopen | VisualVM reopen | A/A | summary pass MB/CPU-s | dominators+retained CPU s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[1] / 1e6:.2f} M | {r[2]:.0f} | {r[3]:.2f} s | {r[4]:.0f} | {r[5]:.2f} s | {r[6]:.2f} s | "
              f"{r[7]:.2f} s | {r[8]:.2f} s | {r[8] / r[7]:.1f}x | {r[9]:.1f} | {r[10]:.0f} | {r[11]:.0f} | "
              f"{r[12]:.0f} | {r[13]:.2f} s | {r[14]:.2f} s | {r[15]:.3f} | {r[16]:.0f} | {r[17]:.2f} s |")


if __name__ == "__main__":
    main()
