#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The collector's cost under a fleet: N simulated HPROF agents (fleet_agents: period= streams in
HPROF's text format, each over its own TCP connection, staggered over the period) into one
`jvmprof serve`; for each N of a ramp, serve's CPU time (utime + stime from /proc/<pid>/stat) over a
fixed wall window once every agent is streaming, and the periods serve received against those
sent. Prints one row per N:

  agents  window_s  serve_cpu_s  cores  cpu_s_per_jvm_hour  per_core  sent  received  backlog  rss_mib  rss_per_jvm_kib

  cores               serve's CPU seconds per wall second (1.0 = one core busy all the time)
  cpu_s_per_jvm_hour  serve's CPU seconds per hour of one JVM's stream received
  per_core            agents one core would keep up with at this cost (agents / cores)
  sent, received      periods fleet_agents sent over the whole run, and serve's count of them
                      (the sum of every session's periods.received once the agents stopped)
  backlog             the largest number of bytes fleet_agents had queued for one connection
                      because serve was not reading (0: serve always kept up)

With --replay FILE the agents replay a stream recorded from a real HPROF agent (format=a, net=,
period=; fleet_agents --help) instead of synthetic content: one recorded period per --period
seconds, so FILE needs as many periods as the run sends (about (window + 2 x period) / period
plus the time the agents take to connect); --samples-per-second and --threads do not apply.

A row "keeps up" when received == sent and cores < 1. On a shared machine the CPU seconds are
serve's own (not wall time), so other load shows up only as cache and scheduling noise: the
--repeat rows measure that noise (an A/A pair of the same N)."""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request


def positive_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not a whole number: %r" % text)
    if v < 1:
        raise argparse.ArgumentTypeError("must be at least 1: %r" % text)
    return v


def agent_list(text):
    try:
        values = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError("a comma-separated list of agent counts: %r" % text)
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("agent counts must be at least 1: %r" % text)
    return values


def recording(path):
    if not os.path.isfile(path):
        raise argparse.ArgumentTypeError("no such file: %r" % path)
    return path


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # utime and stime are fields 14 and 15 of proc(5); fields[0] here is field 3 (state).
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Serve:
    def __init__(self, jvmprof, max_profiles, work):
        self.proc = subprocess.Popen(
            [jvmprof, "serve", "--port", "0", "--ui-port", "0", "--max-profiles",
             str(max_profiles)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=dict(os.environ, TMPDIR=work))
        self.port = None
        url = None
        for line in self.proc.stdout:
            m = re.search(r"net=127\.0\.0\.1:(\d+)", line)
            if m:
                self.port = int(m.group(1))
            if "UI:" in line:
                url = line.split("UI:")[1].strip()
                break
        if not self.port or not url:
            raise RuntimeError("serve did not start: " + self.proc.stderr.read())
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()
        m = re.match(r"(http://[^/]+)/\?token=(\w+)", url)
        self.base, self.token = m.group(1), m.group(2)

    def profiles(self):
        req = urllib.request.Request(self.base + "/api/profiles",
                                     headers={"X-Jvmprof-Token": self.token})
        with urllib.request.urlopen(req, timeout=120) as r:
            return json.loads(r.read())

    def stop(self):
        # serve blocks SIGTERM until its signal thread waits for it; repeat until it has gone.
        for _ in range(600):
            self.proc.terminate()
            try:
                self.proc.wait(timeout=0.5)
                return
            except subprocess.TimeoutExpired:
                continue
        self.proc.kill()
        self.proc.wait()


def measure(args, agents):
    with tempfile.TemporaryDirectory(prefix="jvmprof-fleet-bench-") as work:
        serve = Serve(args.jvmprof, agents + 16, work)
        content = (["--replay", args.replay] if args.replay else
                   ["--samples", str(args.samples_per_second * args.period), "--threads",
                    str(args.threads)])
        sim = subprocess.Popen(
            [args.fleet_agents, "--port", str(serve.port), "--agents", str(agents),
             "--period-ms", str(args.period * 1000)] + content,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            # Every agent connected and its hello read, then one whole period so that every
            # agent has started sending periods (they are staggered over one): the steady state.
            deadline = time.time() + 600
            while len(serve.profiles()) < agents:
                if time.time() > deadline or sim.poll() is not None:
                    raise RuntimeError("only %d of %d agents connected" %
                                       (len(serve.profiles()), agents))
                time.sleep(1)
            time.sleep(args.period + 1)
            cpu0, sim0, t0 = cpu_seconds(serve.proc.pid), cpu_seconds(sim.pid), time.time()
            time.sleep(args.window)
            cpu1, sim1, t1 = cpu_seconds(serve.proc.pid), cpu_seconds(sim.pid), time.time()
            rss = rss_kib(serve.proc.pid)
            if sim.poll() is not None:  # e.g. a replay whose recording ran out of periods
                raise RuntimeError("fleet_agents ended during the window (exit code %s; its "
                                   "message is above)" % sim.returncode)
            # Stop the periods; fleet_agents writes what it has queued, then says what it sent.
            sim.stdin.write("stop\n")
            sim.stdin.flush()
            line = sim.stdout.readline()
            m = re.match(r"SENT agents=\d+ periods=(\d+) bytes=(\d+) max_backlog=(\d+)", line)
            if not m:
                raise RuntimeError("fleet_agents: %r (exit code %s; its message is above)" %
                                   (line, sim.poll()))
            sent, backlog = int(m.group(1)), int(m.group(3))
            # serve reads what is on its way: wait until its count stops growing.
            received, last, still = 0, -1, 0
            while still < 3 and received < sent:
                received = sum(p["periods"]["received"] for p in serve.profiles())
                still = still + 1 if received == last else 0
                last = received
                time.sleep(1)
        finally:
            if sim.poll() is None:
                sim.stdin.close()
                sim.wait(timeout=60)
            serve.stop()
    wall = t1 - t0
    cpu = cpu1 - cpu0
    cores = cpu / wall
    return {
        "agents": agents, "window_s": wall, "serve_cpu_s": cpu, "cores": cores,
        "cpu_s_per_jvm_hour": cpu / (agents * wall / 3600.0),
        "per_core": agents / cores if cores > 0 else float("inf"), "sent": sent,
        "received": received, "backlog": backlog, "rss_mib": rss / 1024.0,
        "rss_per_jvm_kib": rss / agents, "sim_cpu_s": sim1 - sim0,
    }


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Example: bench/jvmprof/fleet_bench.py --build build --agents 250,500,1000",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="the build directory (default: build)")
    ap.add_argument("--agents", type=agent_list, default=[250, 500, 1000],
                    help="the ramp: agent counts, comma-separated (default 250,500,1000)")
    ap.add_argument("--window", type=positive_int, default=60,
                    help="seconds of serve's CPU measured per row (default 60)")
    ap.add_argument("--period", type=positive_int, default=10,
                    help="the agents' period= in seconds (default 10)")
    ap.add_argument("--samples-per-second", type=positive_int, default=100,
                    help="CPU samples per second per agent (default 100)")
    ap.add_argument("--threads", type=positive_int, default=200,
                    help="threads per agent (default 200)")
    ap.add_argument("--replay", type=recording, metavar="FILE",
                    help="replay this recorded HPROF stream instead of synthetic content")
    ap.add_argument("--repeat", type=positive_int, default=1,
                    help="run the ramp this many times, interleaved (default 1; 2 gives A/A)")
    args = ap.parse_args()
    args.jvmprof = os.path.join(args.build, "src", "jvmprof", "jvmprof")
    args.fleet_agents = os.path.join(args.build, "tests", "jvmprof", "fleet_agents")
    for exe in (args.jvmprof, args.fleet_agents):
        if not os.access(exe, os.X_OK):
            ap.error("%s not built (cmake --build %s --target jvmprof fleet_agents)" %
                     (exe, args.build))

    cols = ["agents", "window_s", "serve_cpu_s", "cores", "cpu_s_per_jvm_hour", "per_core",
            "sent", "received", "backlog", "rss_mib", "rss_per_jvm_kib", "sim_cpu_s"]
    content = ("replaying %s" % args.replay if args.replay else
               "%d samples/s, %d threads per agent" % (args.samples_per_second, args.threads))
    print("# period=%ds, %s; %s" % (args.period, content, time.strftime("%Y-%m-%d %H:%M")))
    print("\t".join(cols + ["keeps_up"]))
    for _ in range(args.repeat):
        for n in args.agents:
            r = measure(args, n)
            keeps_up = r["received"] == r["sent"] and r["cores"] < 1.0
            print("\t".join(("%.2f" % r[c]) if isinstance(r[c], float) else str(r[c])
                            for c in cols) + "\t" + ("yes" if keeps_up else "no"), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
