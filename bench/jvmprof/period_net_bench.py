#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The agent's cost of continuous profiling into a collector, split into its parts: a workload
under HPROF with

  N    cpu=samples,interval=MS                     (file=, no net, no period: the baseline)
  NET  cpu=samples,interval=MS,net=...             (streaming to a running `jvmprof serve`, JDK 8's
                                                    net=: the cumulative reports at exit)
  P    cpu=samples,interval=MS,period=10,net=...   (periods into the same serve)
  N'   the same as N again                         (A/A: the noise of this machine)

run in interleaved rounds (round 1 of each, then round 2, ...; the order rotates each round), so
a shared machine's drift hits all alike. The workload is javac (JDK 17's jdk.compiler run as a
plain Java program, compiling a generated tree: bench/hprof/gen_sources.py) or, with
`--workload fixed`, bench/jvmprof/FixedWork.java: a fixed amount of work on two threads, whose CPU
varies far less from run to run than javac's (javac's JIT choices alone spread a configuration
over 11-17 CPU-s). Prints, per configuration, the median CPU seconds of the java process (user +
system, all threads) and the ratio to N, the median wall seconds, the CPU samples HPROF took per
CPU-second (from the cumulative CPU SAMPLES report: the file for N, the report serve received for
NET and P), so that a cheaper row that took fewer samples shows as such, and the CPU seconds of
HPROF's own net= and period= threads (`HPROF net`, `HPROF period`, `HPROF listener`, read from
/proc/PID/task/*/schedstat, else stat, every 0.2 s while the JVM runs; the last reading before the exit counts, so
the exit's last period and reports are left out): a direct measure of what streaming costs, which
the noise of the whole process's CPU cannot hide. And, per round against N, the process's CPU
without HotSpot's JIT compiler and GC threads (about half of javac's CPU, and the part whose
amount varies most from run to run).

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


# The threads HPROF adds for net= and period= (named in src/hprof; the sampler is in every row).
STREAM_THREADS = ("HPROF net", "HPROF period", "HPROF listener")
# HotSpot's JIT compiler and GC threads: javac spends about half its CPU compiling, and how much
# varies from run to run; the CPU without them is the program's own (and the agent's).
JIT_GC_THREADS = ("C1 CompilerThre", "C2 CompilerThre", "GC Thread", "G1 ")


def thread_cpu(pid, ticks):
    """{tid: (comm, CPU s)} of the process's threads now (ticks: stat's clock ticks per s)."""
    out = {}
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return out
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        cpu = (int(fields[11]) + int(fields[12])) / ticks
        try:
            # The scheduler's run time in ns, where the kernel keeps it: stat's clock ticks
            # (10 ms) are too coarse for threads that run a millisecond per period.
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                cpu = int(f.read().split()[0]) / 1e9
        except (OSError, ValueError, IndexError):
            pass
        out[tid] = (comm, cpu)
    return out


def run_measured(cmd, cwd, env, timeout):
    """Runs cmd; returns (wall s, CPU s of the process, {comm: CPU s} of HPROF's stream threads,
    exit code), or None at the time limit."""
    ticks = os.sysconf("SC_CLK_TCK")
    start = time.monotonic()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    seen = {}
    done = threading.Event()

    def poll():
        while not done.is_set():
            seen.update(thread_cpu(p.pid, ticks))
            done.wait(0.2)

    poller = threading.Thread(target=poll)
    poller.start()
    killer = threading.Timer(timeout, p.kill)
    killer.start()
    while True:
        try:
            os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
            break
        except InterruptedError:
            continue
    wall = time.monotonic() - start
    done.set()
    poller.join()
    killer.cancel()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if wall >= timeout:
        return None
    stream = {}
    for comm, cpu in seen.values():
        if comm in STREAM_THREADS:
            stream[comm] = stream.get(comm, 0.0) + cpu
        elif comm.startswith(JIT_GC_THREADS):
            stream["(JIT and GC)"] = stream.get("(JIT and GC)", 0.0) + cpu
    return wall, usage.ru_utime + usage.ru_stime, stream, p.returncode


def run_javac(args, options, files, work):
    """One run of the workload under HPROF `options` (or, with args.steady set, the bytes
    program); returns (wall s, CPU s, {thread: CPU s}, ok)."""
    out = os.path.join(work, "classes")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    cmd = [os.path.join(args.jdk, "bin", "java"), "-agentlib:hprof=" + options]
    if args.steady:
        # One thread busy all the time on three methods (hproftest.CpuSplit): HPROF's sampler
        # takes 1000 / interval samples per CPU-second of it.
        files = []
        cmd += ["-cp", args.wire_classes, "hproftest.CpuSplit", str(args.wire_cpu_ms)]
    elif args.workload == "fixed":
        files = []
        cmd += ["-cp", args.fixed_classes, "FixedWork", str(args.fixed_rounds)]
    else:
        cmd += ["-m", "jdk.compiler/com.sun.tools.javac.Main", "-nowarn", "-proc:none", "-d", out]
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(args.build, "lib"))
    for k in ("_JAVA_HPROF_OPTIONS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
              "HPROF_LABELS"):
        env.pop(k, None)
    got = run_measured(cmd + files, work, env, args.timeout)
    if got is None:
        return None, None, {}, False
    wall, cpu, stream, rc = got
    return wall, cpu, stream, rc == 0


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
    wall, cpu, stream, ok = run_javac(
        args, "cpu=samples,interval=%d,file=%s" % (args.interval, prof), files, work)
    return {"wall": wall, "cpu": cpu, "ok": ok, "samples": file_samples(prof), "stream": stream}


def run_net(args, serve, files, work, period=True):
    """A run into serve (with period=, or JDK 8's net= alone); polls serve's byte count of the
    connection."""
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
    wall, cpu, stream, ok = run_javac(args, "cpu=samples,interval=%d,%snet=127.0.0.1:%d" % (
        args.interval, "period=%d," % args.period if period else "", serve.port), files, work)
    done.set()
    poller.join()
    r = {"wall": wall, "cpu": cpu, "ok": ok, "samples": None, "rate": None, "total": None,
         "periods": [], "stream": stream}
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
    ap.add_argument("--workload", choices=("javac", "fixed"), default="javac",
                    help="javac (default) or bench/jvmprof/FixedWork.java, compiled here")
    ap.add_argument("--fixed-rounds", type=positive_int, default=30000,
                    help="FixedWork's rounds per thread (default 30000: about 10 CPU-s)")
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
    if args.workload == "fixed":
        args.fixed_classes = os.path.join(work, "fixed-work")
        subprocess.run([os.path.join(args.jdk, "bin", "javac"), "-d", args.fixed_classes,
                        os.path.join(HERE, "FixedWork.java")], check=True)
    tree = os.path.join(work, "src")
    shutil.rmtree(tree, ignore_errors=True)
    subprocess.run([sys.executable, os.path.join(os.path.dirname(HERE), "hprof", "gen_sources.py"),
                    tree, str(args.packages), str(args.classes)], check=True)
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(tree) for f in fs
                   if f.endswith(".java"))
    serve = Serve(jvmprof, work)
    names = ["N   cpu=samples", "NET cpu=samples,net=",
             "P   cpu=samples,period=%d,net=" % args.period, "N'  cpu=samples (A/A)"]
    results = {n: [] for n in names}
    wire = None
    try:
        log("%s; load %s" % (
            "hproftest.CpuSplit only" if args.wire_only else
            ("javac on %d generated classes" % len(files) if args.workload == "javac" else
             "FixedWork, %d rounds per thread" % args.fixed_rounds) +
            "; %d interleaved rounds" % args.rounds,
            open("/proc/loadavg").read().split()[0]))
        for rnd in range(0 if args.wire_only else args.rounds):
            order = names[rnd % 4:] + names[:rnd % 4]
            for n in order:
                if n.startswith("P"):
                    r = run_net(args, serve, files, work)
                elif n.startswith("NET"):
                    r = run_net(args, serve, files, work, period=False)
                else:
                    r = run_file(args, files, work)
                if not r["ok"]:
                    raise SystemExit("the workload failed under " + n)
                r["round"] = rnd
                results[n].append(r)
                log("round %d %-30s wall %6.2f s  CPU %6.2f s  samples %s  stream threads %s  "
                    "wire %s" % (rnd + 1, n, r["wall"], r["cpu"], r["samples"],
                                 " ".join("%s=%.4f" % kv for kv in sorted(r["stream"].items()))
                                 or "-",
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
        base_by_round = {r["round"]: r["cpu"] for r in results[names[0]]}
        print("| configuration | CPU s (median) | CPU ratio to N (of medians) | per-round ratio "
              "to N (median, min-max) | without JIT and GC threads, per-round ratio to N | wall s "
              "(median) | samples per CPU-second | stream threads' CPU s (median) | share of "
              "the process's CPU |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in names:
        cpu = statistics.median(r["cpu"] for r in results[n])
        wall = statistics.median(r["wall"] for r in results[n])
        per = [r["samples"] / r["cpu"] for r in results[n] if r["samples"]]
        # Each round's run against N's run of the same round: the drift between rounds cancels.
        paired = [r["cpu"] / base_by_round[r["round"]] for r in results[n]]
        stream = [sum(v for k, v in r["stream"].items() if k in STREAM_THREADS)
                  for r in results[n]]
        share = [x / r["cpu"] for x, r in zip(stream, results[n])]
        # The CPU without the JIT compiler and GC threads, each round against N's.
        base_rest = {r["round"]: r["cpu"] - r["stream"].get("(JIT and GC)", 0.0)
                     for r in results[names[0]]}
        rest = [(r["cpu"] - r["stream"].get("(JIT and GC)", 0.0)) / base_rest[r["round"]]
                for r in results[n]]
        print("| %s | %.2f | %.3fx | %.3fx (%.3f-%.3f) | %.3fx (%.3f-%.3f) | %.2f | %s | %.3f | "
              "%.2f %% |" % (
                  n, cpu, cpu / base, statistics.median(paired), min(paired), max(paired),
                  statistics.median(rest), min(rest), max(rest), wall,
                  "%.1f" % statistics.median(per) if per else "-", statistics.median(stream),
                  100 * statistics.median(share)))
    p_runs = results[names[2]] if names else []
    rates = [r["rate"] for r in p_runs if r.get("rate")]
    totals = [r["total"] for r in p_runs if r.get("total")]
    per_s = [r["wire_samples_per_s"] for r in p_runs if r.get("wire_samples_per_s")]
    print()
    if p_runs:
        print("%s: bytes serve received per JVM-minute: steady %s (%d runs with two periods "
              "or more, their periods carrying %s CPU samples/s); whole run incl. hello and exit "
              "reports %s" % (args.workload,
                              "%.0f" % statistics.median(rates) if rates else "-", len(rates),
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
