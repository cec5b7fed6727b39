#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The agent's cost of continuous profiling into a collector: javac (JDK 17's jdk.compiler run as
a plain Java program, compiling a generated tree: bench/hprof/gen_sources.py) under HPROF with

  A   cpu=samples,interval=MS                     (file=, no period: the baseline)
  A'  the same again                              (A/A: the noise of this machine)
  P   cpu=samples,interval=MS,period=10,net=...   (periods into a running `jvmprof serve`)

run in interleaved rounds (round 1 of each, then round 2, ...; the order rotates each round), so
a shared machine's drift hits all alike. Prints, per configuration, the median CPU seconds of the
java process (user + system, all threads) and the ratio to A, the median wall seconds, and the
CPU samples HPROF took per CPU-second (from the cumulative CPU SAMPLES report: the file for A, the
report serve received for P), so that a cheaper row that took fewer samples shows as such.

Bytes on the wire: serve counts what it receives per connection (`bytes` in /api/profiles); the
script polls it during each P run and prints (1) the steady rate between the first and the last
period before exit, per JVM-minute, which is what a long-running JVM costs, and (2) the whole
run's bytes (the hello with every trace, the periods, the cumulative reports at exit) per minute
of the run, which a short run inflates. At interval=10 ms one busy thread is sampled 100 times a
second."""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from timed_run import run_timed_usage  # noqa: E402


def positive_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not a whole number: %r" % text)
    if v < 1:
        raise argparse.ArgumentTypeError("must be at least 1: %r" % text)
    return v


def log(s):
    print(s, file=sys.stderr, flush=True)


class Serve:
    def __init__(self, jvmprof, work):
        self.proc = subprocess.Popen([jvmprof, "serve", "--port", "0", "--ui-port", "0"],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     env=dict(os.environ, TMPDIR=work))
        agent_line = self.proc.stdout.readline()
        while agent_line.startswith("jvmprof serve: removed "):
            agent_line = self.proc.stdout.readline()
        ui_line = self.proc.stdout.readline()
        agent = re.search(r"net=127\.0\.0\.1:(\d+)", agent_line)
        ui = re.search(r"(http://\S+)", ui_line)
        if not agent or not ui:
            self.stop()
            raise SystemExit("jvmprof serve did not start: %r %r" % (agent_line, ui_line))
        self.port = int(agent.group(1))
        self.base = ui.group(1).split("/?")[0]
        self.token = ui.group(1).split("token=")[1]
        # serve prints a line per agent: read them so it never blocks on a full pipe.
        threading.Thread(target=lambda: [None for _ in self.proc.stdout], daemon=True).start()

    def api(self, path):
        req = urllib.request.Request(self.base + path, headers={"X-Jvmprof-Token": self.token})
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read().decode())

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def run_javac(args, options, files, work):
    """One javac run under HPROF `options` (or, with args.steady set, the steady program);
    returns (wall s, CPU s, ok)."""
    out = os.path.join(work, "classes")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    cmd = [os.path.join(args.jdk, "bin", "java"), "-agentlib:hprof=" + options]
    if args.steady:
        # One thread busy all the time on three methods (hproftest.CpuSplit): HPROF's sampler
        # takes 1000 / interval samples per CPU-second of it.
        files = []
        cmd += ["-cp", args.wire_classes, "hproftest.CpuSplit", str(args.wire_cpu_ms)]
    else:
        cmd += ["-m", "jdk.compiler/com.sun.tools.javac.Main", "-nowarn", "-proc:none", "-d", out]
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(args.build, "lib"))
    for k in ("_JAVA_HPROF_OPTIONS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
              "HPROF_LABELS"):
        env.pop(k, None)
    got = run_timed_usage(cmd + files, work, args.timeout, env=env)
    if got is None:
        return None, None, False
    wall, user, system, rc = got
    return wall, user + system, rc == 0


def file_samples(path):
    try:
        with open(path, errors="replace") as f:
            m = re.search(r"CPU SAMPLES BEGIN \(total = (\d+)", f.read())
        return int(m.group(1)) if m else None
    except OSError:
        return None


def run_file(args, files, work):
    prof = os.path.join(work, "java.hprof.txt")
    if os.path.exists(prof):
        os.unlink(prof)
    wall, cpu, ok = run_javac(args, "cpu=samples,interval=%d,file=%s" % (args.interval, prof),
                              files, work)
    return {"wall": wall, "cpu": cpu, "ok": ok, "samples": file_samples(prof)}


def run_net(args, serve, files, work):
    """A javac run with period=10 into serve; polls serve's byte count of the connection."""
    before = {p["id"] for p in serve.api("/api/profiles")}
    polls = []  # (periods received, bytes, newest period's end ms, state)
    latest = []  # the latest periods in brief, as last seen while connected
    done = threading.Event()
    sid = [None]

    def poll():
        while not done.is_set() or sid[0] is None:
            try:
                if sid[0] is None:
                    new = [p["id"] for p in serve.api("/api/profiles") if p["id"] not in before]
                    if new:
                        sid[0] = new[0]
                if sid[0] is not None:
                    p = serve.api("/api/profiles/%d" % sid[0])
                    polls.append((p["periods"]["received"], p["bytes"], p["periods"]["lastEndMs"],
                                  p["state"]))
                    if p["state"] == "connected":
                        latest[:] = p["periods"]["latest"]
                    if done.is_set() and p["state"] != "connected":
                        return
            except OSError:
                pass
            if done.is_set() and sid[0] is None:
                return
            time.sleep(0.2)

    poller = threading.Thread(target=poll)
    poller.start()
    wall, cpu, ok = run_javac(args, "cpu=samples,interval=%d,period=%d,net=127.0.0.1:%d" % (
        args.interval, args.period, serve.port), files, work)
    done.set()
    poller.join()
    r = {"wall": wall, "cpu": cpu, "ok": ok, "samples": None, "rate": None, "total": None,
         "periods": []}
    if sid[0] is None:
        return r
    # The cumulative report at exit arrived with the end of the stream.
    for _ in range(100):
        if serve.api("/api/profiles/%d" % sid[0])["state"] != "connected":
            break
        time.sleep(0.1)
    flame = serve.api("/api/profiles/%d/flame?measure=cpu-samples" % sid[0])
    r["samples"] = flame.get("total")
    info = serve.api("/api/profiles/%d" % sid[0])
    r["total"] = info["bytes"] / (wall / 60.0) if wall else None
    # Steady rate: from the first period seen to the last one seen while still connected (the
    # period written at exit comes with the exit reports and is left out).
    live = [p for p in polls if p[3] == "connected" and p[0] >= 1]
    if live:
        first = min(live, key=lambda p: (p[0], p[1]))
        last = max((p for p in live if p[0] == max(q[0] for q in live)), key=lambda p: -p[1])
        # The first poll that saw the last period: bytes up to (about) that period's end.
        if last[0] > first[0] and last[2] > first[2]:
            r["rate"] = (last[1] - first[1]) / ((last[2] - first[2]) / 60000.0)
            r["rate_minutes"] = (last[2] - first[2]) / 60000.0
            # The CPU samples those periods carried, per second of the window.
            samples = sum(e["cpuSamples"] for e in latest if first[2] < e["endMs"] <= last[2])
            r["wire_samples_per_s"] = samples / ((last[2] - first[2]) / 1000.0)
            r["steady_periods"] = last[0] - first[0]
            r["steady_samples"] = samples
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="the build directory (lib/, src/jvmprof/)")
    ap.add_argument("--jdk", required=True, help="a JDK 17 (its jdk.compiler is the workload)")
    ap.add_argument("--rounds", type=positive_int, default=3)
    ap.add_argument("--packages", type=positive_int, default=4, help="generated packages")
    ap.add_argument("--classes", type=positive_int, default=25, help="classes per package")
    ap.add_argument("--interval", type=positive_int, default=10, help="sampling interval, ms")
    ap.add_argument("--period", type=positive_int, default=10, help="period=, seconds")
    ap.add_argument("--timeout", type=positive_int, default=900, help="per run, seconds")
    ap.add_argument("--work", default=None, help="scratch directory (default: a new one)")
    ap.add_argument("--wire-classes", default=None, metavar="DIR",
                    help="java/hprof-tests classes (build/java/hprof-test-classes): also "
                         "measure the bytes per JVM-minute on hproftest.CpuSplit, one thread "
                         "busy all the time (100 samples per CPU-second at interval=10)")
    ap.add_argument("--wire-cpu-ms", type=positive_int, default=30000,
                    help="CpuSplit's CPU budget, ms (default 30000: a few periods)")
    ap.add_argument("--wire-only", action="store_true",
                    help="only the CpuSplit bytes measurement (no javac rounds)")
    args = ap.parse_args()
    args.steady = False
    args.build, args.jdk = os.path.abspath(args.build), os.path.abspath(args.jdk)
    jvmprof = os.path.join(args.build, "src", "jvmprof", "jvmprof")
    for need in (jvmprof, os.path.join(args.build, "lib", "libhprof.so"),
                 os.path.join(args.jdk, "bin", "java")):
        if not os.path.exists(need):
            ap.error("not found: " + need)
    if args.wire_classes:
        args.wire_classes = os.path.abspath(args.wire_classes)
        if not os.path.exists(os.path.join(args.wire_classes, "hproftest", "CpuSplit.class")):
            ap.error("no hproftest/CpuSplit.class under " + args.wire_classes)
    elif args.wire_only:
        ap.error("--wire-only needs --wire-classes")

    work = args.work or tempfile.mkdtemp(prefix="period-net-bench-")
    os.makedirs(work, exist_ok=True)
    tree = os.path.join(work, "src")
    shutil.rmtree(tree, ignore_errors=True)
    subprocess.run([sys.executable, os.path.join(os.path.dirname(HERE), "hprof", "gen_sources.py"),
                    tree, str(args.packages), str(args.classes)], check=True)
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(tree) for f in fs
                   if f.endswith(".java"))
    serve = Serve(jvmprof, work)
    names = ["A  cpu=samples", "A' cpu=samples (A/A)",
             "P  cpu=samples,period=%d,net=" % args.period]
    results = {n: [] for n in names}
    wire = None
    try:
        log("%s; load %s" % (
            "hproftest.CpuSplit only" if args.wire_only else
            "javac on %d generated classes; %d interleaved rounds" % (len(files), args.rounds),
            open("/proc/loadavg").read().split()[0]))
        for rnd in range(0 if args.wire_only else args.rounds):
            order = names[rnd % 3:] + names[:rnd % 3]
            for n in order:
                r = run_net(args, serve, files, work) if n.startswith("P") else \
                    run_file(args, files, work)
                if not r["ok"]:
                    raise SystemExit("javac failed under " + n)
                results[n].append(r)
                log("round %d %-28s wall %6.2f s  CPU %6.2f s  samples %s  wire %s" % (
                    rnd + 1, n, r["wall"], r["cpu"], r["samples"],
                    "%.0f B/min steady" % r["rate"] if r.get("rate") else "-"))
        if args.wire_classes:
            args.steady = True
            wire = run_net(args, serve, files, work)
            args.steady = False
    finally:
        serve.stop()
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)

    if args.wire_only:
        names = []
    else:
        base = statistics.median(r["cpu"] for r in results[names[0]])
        print("| configuration | CPU s (median) | CPU ratio to A | wall s (median) | "
              "samples per CPU-second |")
        print("|---|---:|---:|---:|---:|")
    for n in names:
        cpu = statistics.median(r["cpu"] for r in results[n])
        wall = statistics.median(r["wall"] for r in results[n])
        per = [r["samples"] / r["cpu"] for r in results[n] if r["samples"]]
        print("| %s | %.2f | %.3fx | %.2f | %s |" % (
            n, cpu, cpu / base, wall, "%.1f" % statistics.median(per) if per else "-"))
    p_runs = results[names[2]] if names else []
    rates = [r["rate"] for r in p_runs if r.get("rate")]
    totals = [r["total"] for r in p_runs if r.get("total")]
    per_s = [r["wire_samples_per_s"] for r in p_runs if r.get("wire_samples_per_s")]
    print()
    if p_runs:
        print("javac: bytes serve received per JVM-minute: steady %s (%d runs with two periods "
              "or more, their periods carrying %s CPU samples/s); whole run incl. hello and exit "
              "reports %s" % ("%.0f" % statistics.median(rates) if rates else "-", len(rates),
                              "%.1f" % statistics.median(per_s) if per_s else "-",
                              "%.0f" % statistics.median(totals) if totals else "-"))
    if wire is not None:
        if wire.get("rate"):
            # A period's bytes follow its distinct stacks (one CPU SAMPLES row per trace) more
            # than its samples: printed beside the samples per second its periods carried.
            print("hproftest.CpuSplit (%d ms CPU, wall %.1f s): steady %.0f bytes per JVM-minute "
                  "over %d periods carrying %.1f CPU samples/s (%d in all)" % (
                      args.wire_cpu_ms, wire["wall"], wire["rate"], wire["steady_periods"],
                      wire["wire_samples_per_s"], wire["steady_samples"]))
        else:
            print("hproftest.CpuSplit: fewer than two periods before exit; no steady rate "
                  "(raise --wire-cpu-ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
