#!/usr/bin/env python3
"""HPROF overhead benchmark: javac (JDK 17's jdk.compiler, run as a plain Java program) compiling a
large source tree with and without libhprof.so in each mode; every configuration runs N times
and the table gives the median wall time and its ratio to the run without an agent.

Run through bench/run-hprof-bench.sh. Source tree: java.util of JDK 17's src.zip when that is
installed, else a generated tree (gen_sources.py). cpu=times instruments every method and is
measured on a smaller generated tree against its own no-agent baseline.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))


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


def run_once(java, lib_dir, hprof, javac_args, work, timeout):
    """One javac run; returns (wall seconds or None if killed, dump seconds or None, ok)."""
    out = os.path.join(work, "classes")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    prof = os.path.join(work, "prof")
    shutil.rmtree(prof, ignore_errors=True)
    os.makedirs(prof)
    cmd = [java]
    if hprof is not None:
        cmd.append("-agentlib:hprof=" + hprof + ",file=" + os.path.join(prof, "java.hprof.txt"))
    cmd += ["-m", "jdk.compiler/com.sun.tools.javac.Main", "-nowarn", "-proc:none", "-d", out]
    cmd += javac_args
    env = dict(os.environ, LD_LIBRARY_PATH=lib_dir)
    for k in ("_JAVA_HPROF_OPTIONS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"):
        env.pop(k, None)
    dump = {}

    def watch(stream):
        # "Dumping Java heap ..." then " done.": time between them is the heap dump's.
        buf = b""
        while True:
            c = stream.read(1)
            if not c:
                return
            buf = (buf + c)[-64:]
            if buf.endswith(b"Dumping Java heap ..."):
                dump["start"] = time.monotonic()
            elif buf.endswith(b" done.") and "start" in dump and "end" not in dump:
                dump["end"] = time.monotonic()

    start = time.monotonic()
    p = subprocess.Popen(cmd, env=env, cwd=work, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    t = threading.Thread(target=watch, args=(p.stderr,))
    t.start()
    try:
        rc = p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        t.join()
        return None, None, False
    wall = time.monotonic() - start
    t.join()
    d = dump["end"] - dump["start"] if "end" in dump else None
    return wall, d, rc == 0


def measure(name, hprof, java, lib_dir, javac_args, work, runs, timeout, log):
    walls, dumps, notes = [], [], []
    for i in range(runs):
        wall, dump, ok = run_once(java, lib_dir, hprof, javac_args, work, timeout)
        if wall is None:
            notes.append(f"run {i + 1} killed after {timeout:.0f} s")
            log(f"  {name} run {i + 1}: killed after {timeout:.0f} s")
            break  # do not spend the cap again
        if not ok:
            notes.append(f"run {i + 1}: javac failed")
        walls.append(wall)
        if dump is not None:
            dumps.append(dump)
        log(f"  {name} run {i + 1}: {wall:.2f} s" + (f" (heap dump {dump:.2f} s)" if dump else ""))
    return walls, dumps, notes


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
    args = ap.parse_args()

    java = os.path.join(args.jdk, "bin", "java")
    lib_dir = os.path.join(args.build, "lib")
    for f in ("libhprof.so", "libjvmpi.so"):
        if not os.path.isfile(os.path.join(lib_dir, f)):
            sys.exit(f"{lib_dir}/{f} is missing: build the hprof target first")
    work = args.work or tempfile.mkdtemp(prefix="hprof-bench-")
    log = lambda s: print(s, file=sys.stderr, flush=True)

    main_args, main_desc = workload(work, args.jdk, args.packages, args.classes, "main")
    small_args, small_desc = workload(work, args.jdk, 1, args.times_classes, "small")
    log(f"workload: {main_desc}; cpu=times on: {small_desc}; {args.runs} runs each")

    configs = [
        ("no agent", None, main_args),
        ("cpu=samples, 10 ms", "cpu=samples,interval=10", main_args),
        ("cpu=samples, 1 ms", "cpu=samples,interval=1", main_args),
        ("heap=sites", "heap=sites", main_args),
        ("monitor=y", "monitor=y", main_args),
        ("heap=dump", "heap=dump", main_args),
        ("no agent (small tree)", None, small_args),
        ("cpu=times (small tree)", "cpu=times", small_args),
    ]
    def loadavg():
        try:
            return open("/proc/loadavg").read().split()[0]
        except OSError:
            return "?"

    load_start = loadavg()
    results = []
    for name, hprof, jargs in configs:
        log(f"{name}:")
        walls, dumps, notes = measure(name, hprof, java, lib_dir, jargs, work, args.runs,
                                      args.timeout, log)
        results.append((name, hprof, walls, dumps, notes))

    base = {"main": None, "small": None}
    for name, hprof, walls, _, _ in results:
        if hprof is None and walls:
            base["small" if "small" in name else "main"] = statistics.median(walls)
    print(f"Workload: javac ({args.jdk}, jdk.compiler) compiling {main_desc}; cpu=times on "
          f"{small_desc}. Median of {args.runs} runs; ratio = median / median of the no-agent "
          f"run on the same tree. {os.cpu_count()} CPUs; 1-minute load average {load_start} at "
          f"the start, {loadavg()} at the end (other jobs share the machine).\n")
    print("| configuration | hprof options | median wall (s) | ratio | runs (s) | notes |")
    print("|---|---|---:|---:|---|---|")
    for name, hprof, walls, dumps, notes in results:
        b = base["small" if "small" in name else "main"]
        med = statistics.median(walls) if walls else None
        ratio = f"{med / b:.3f}x" if med and b else "-"
        if notes and any("killed" in n for n in notes) and not walls:
            ratio = f"> {args.timeout / b:.0f}x" if b else "-"
        extra = list(notes)
        if dumps:
            extra.append(f"heap dump itself: median {statistics.median(dumps):.2f} s")
        print(f"| {name} | {hprof or '-'} | {med:.2f} | {ratio} | "
              f"{', '.join(f'{w:.2f}' for w in walls)} | {'; '.join(extra)} |"
              if med else f"| {name} | {hprof or '-'} | - | {ratio} | - | {'; '.join(extra)} |")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
