#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A fleet into one collector over TCP: one `jvmprof serve` process, 190 simulated agents
(fleet_agents: each its own TCP connection, identity and content) and 10 JVMs running
hproftest.CpuSplit with -agentpath:libhprof.so=cpu=samples,period=1,net=...,label=..., all
streaming at once. Checked through serve's HTTP API, the view a user of the UI gets:

 - every simulated agent is there exactly once, under its own identity (pid, main class, labels),
   with every period it sent (seq 1..K, received == K) and each period's CPU SAMPLES total the
   one that agent sent for that seq (SAMPLES + agent + seq); its last period's flame graph holds
   only that agent's own frames. A serve that dropped a connection, lost a period or handed one
   agent's bytes to another's session fails here;
 - each JVM is there once under its labels and main class, exited normally, its periods numbered
   1..N without a gap, and summed over its periods its hot method
   hproftest.CpuSplit.workA has the most CPU samples and more than a third of them;
 - serve's peak RSS (VmHWM) stays under its RSS before any agent plus a bound per connected JVM
   derived below.
Exit 77 (skipped) when the JDK is missing."""
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

from browser_support import stop_serve

SIM_AGENTS = 190
JVMS = 10
PERIODS = 6          # per simulated agent; <= 10, so /api/profiles' "latest" lists them all
PERIOD_MS = 500
SAMPLES = 1000       # fleet_agents' default: CPU samples per period, plus agent + seq
TRACES, DEPTH, ROWS = 200, 12, 150  # fleet_agents' defaults
JVM_CPU_MS = 1500  # CpuSplit's CPU budget

# serve's memory per connected JVM, derived from what it keeps: the session's parsed profile (every
# thread and trace the agent sent: TRACES x DEPTH = 2400 frames) twice, the reader's own and the
# copy it publishes to the UI; and its kept periods, each only its rows (PERIODS x ROWS = 900
# here; a row is 64 bytes and its method name's heap block). A profiles::Frame is 72 bytes (two
# std::string and a line) and its method and source names (16-20 characters, past std::string's
# 15 in place) two heap blocks of 32 bytes: about 140 bytes a frame, 660 KiB for the two profiles;
# 200 threads of about 100 bytes twice, 40 KiB; the rows 90 KiB; the reader's 64 KiB buffer and
# its thread's stack (a few pages): about 850 KiB a simulated agent (measured: 710 KiB). The bound
# is twice that: room for allocator slack on a loaded machine, and still failing if the periods
# kept copies of their traces again (1.8 MiB a JVM) or grew without bound.
PER_JVM = (2 * TRACES * DEPTH * 140 + 2 * 200 * 100 + PERIODS * ROWS * 100 + 64 * 1024 +
           32 * 1024)
BOUND_PER_JVM = 2 * PER_JVM

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED: " + what)
    return cond


def kib(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError("no %s for pid %d" % (field, pid))


class Api:
    def __init__(self, url):
        m = re.match(r"(http://[^/]+)/\?token=(\w+)", url)
        self.base, self.token = m.group(1), m.group(2)

    def get(self, path):
        req = urllib.request.Request(self.base + path, headers={"X-Jvmprof-Token": self.token})
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read())


def self_samples(node, into):
    """Each frame's own samples in a flame tree ({"n","v","c"}): its value less its children's."""
    children = node.get("c", [])
    into[node["n"]] = into.get(node["n"], 0) + node["v"] - sum(c["v"] for c in children)
    for c in children:
        self_samples(c, into)


def names(node, into):
    for c in node.get("c", []):
        into.add(c["n"])
        names(c, into)


def labels_of(info):
    return info["identity"].get("labels", {})


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jvmprof", required=True)
    ap.add_argument("--hprof", required=True)
    ap.add_argument("--fleet-agents", required=True)
    ap.add_argument("--classes", required=True)
    ap.add_argument("--jdk", required=True)
    a = ap.parse_args()
    java = os.path.join(a.jdk, "bin", "java")
    if not os.access(java, os.X_OK):
        print("SKIPPED: no JDK at " + a.jdk)
        return 77

    with tempfile.TemporaryDirectory(prefix="jvmprof-fleet-") as work:
        env = dict(os.environ, TMPDIR=work)
        serve = subprocess.Popen([a.jvmprof, "serve", "--port", "0", "--ui-port", "0"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env=env)
        port = url = None
        for line in serve.stdout:
            m = re.search(r"net=127\.0\.0\.1:(\d+)", line)
            if m:
                port = int(m.group(1))
            if "UI:" in line:
                url = line.split("UI:")[1].strip()
                break
        if not port or not url:
            print("FAILED: serve did not start: " + serve.stderr.read())
            return 1
        threading.Thread(target=serve.stdout.read, daemon=True).start()
        api = Api(url)
        base_kib = kib(serve.pid, "VmRSS")

        sim = subprocess.Popen(
            [a.fleet_agents, "--port", str(port), "--agents", str(SIM_AGENTS), "--periods",
             str(PERIODS), "--period-ms", str(PERIOD_MS)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        jvms = []
        for k in range(JVMS):
            opts = "cpu=samples,period=1,net=127.0.0.1:%d,label=fleet=jvm;jvm=%d" % (port, k)
            jvms.append(subprocess.Popen(
                [java, "-agentpath:%s=%s" % (a.hprof, opts), "-Xmx64m", "-XX:TieredStopAtLevel=1",
                 "-cp", a.classes, "hproftest.CpuSplit", str(JVM_CPU_MS)],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        try:
            for k, jvm in enumerate(jvms):
                out, err = jvm.communicate(timeout=180)
                check(jvm.returncode == 0 and "CPUSPLIT a=" in out,
                      "JVM %d: exit code %s, output %r, stderr %r" % (k, jvm.returncode, out,
                                                                     err[-500:]))
            sent = sim.stdout.readline()
            check(sent.startswith("SENT agents=%d periods=%d " % (SIM_AGENTS,
                                                                  SIM_AGENTS * PERIODS)),
                  "fleet_agents: %r %s" % (sent, sim.stderr.read() if not sent else ""))

            # Everything sent is on its way; wait (a bound against hanging, not a timing check)
            # until serve has read it: every simulated agent's K periods, every JVM ended.
            def settled(profiles):
                sims = [p for p in profiles if labels_of(p).get("fleet") == "sim"]
                jv = [p for p in profiles if labels_of(p).get("fleet") == "jvm"]
                return (len(sims) == SIM_AGENTS and len(jv) == JVMS and
                        all(p["periods"]["received"] >= PERIODS for p in sims) and
                        all(p["state"] != "connected" for p in jv))
            profiles = api.get("/api/profiles")
            for _ in range(600):
                if settled(profiles):
                    break
                time.sleep(0.2)
                profiles = api.get("/api/profiles")
            # Measured while the simulated agents are still connected.
            peak_kib = kib(serve.pid, "VmHWM")
            rss_kib = kib(serve.pid, "VmRSS")

            sims = {}
            for p in profiles:
                lab = labels_of(p)
                if lab.get("fleet") == "sim":
                    i = int(lab["agent"])
                    check(i not in sims, "simulated agent %d has two sessions" % i)
                    sims[i] = p
            check(sorted(sims) == list(range(SIM_AGENTS)),
                  "simulated agents missing: %s" % sorted(set(range(SIM_AGENTS)) - set(sims)))
            for i, p in sorted(sims.items()):
                ident = p["identity"]
                check(ident.get("pid") == 100000 + i and ident.get("main") == "sim.Agent%d" % i,
                      "agent %d: identity %s" % (i, ident))
                check(p["state"] == "connected", "agent %d: state %s (%s)" % (i, p["state"],
                                                                           p["error"]))
                per = p["periods"]
                got = [(e["seq"], e["cpuSamples"]) for e in per["latest"]]
                want = [(s, SAMPLES + i + s) for s in range(1, PERIODS + 1)]
                check(per["received"] == PERIODS and got == want,
                      "agent %d: received %s, periods (seq, samples) %s, sent %s" %
                      (i, per["received"], got, want))
                flame = api.get("/api/profiles/%d/periods/%d/flame?measure=cpu-samples" %
                                (p["id"], PERIODS))
                seen = set()
                names(flame["root"], seen)
                own = re.compile(r"sim\.Agent%d\." % i)
                strangers = [n for n in seen if not own.search(n)]
                check(seen and not strangers,
                      "agent %d: period %d has frames of others: %s" % (i, PERIODS,
                                                                        strangers[:3]))

            jvm_sessions = {}
            for p in profiles:
                lab = labels_of(p)
                if lab.get("fleet") == "jvm":
                    k = int(lab["jvm"])
                    check(k not in jvm_sessions, "JVM %d has two sessions" % k)
                    jvm_sessions[k] = p
            check(sorted(jvm_sessions) == list(range(JVMS)),
                  "JVMs missing: %s" % sorted(set(range(JVMS)) - set(jvm_sessions)))
            for k, p in sorted(jvm_sessions.items()):
                check(p["identity"].get("main") == "hproftest.CpuSplit",
                      "JVM %d: identity %s" % (k, p["identity"]))
                check(p["state"] == "ended", "JVM %d: state %s (%s)" % (k, p["state"],
                                                                     p["error"]))
                kept = api.get("/api/profiles/%d/periods" % p["id"])
                seqs = [e["seq"] for e in kept]
                received = p["periods"]["received"]
                check(received >= 2 and seqs == list(range(1, received + 1)),
                      "JVM %d: received %d, kept seqs %s" % (k, received, seqs))
                # Summed over its periods: CpuSplit's main thread spends a fixed CPU budget in
                # workA, workB and workC, 60/30/10 (load changes the wall time, not the CPU
                # split), sampled every 10 ms of CPU: about 150 samples, 90 of them in workA and
                # 45 in workB. workA ahead of workB: their difference is 45 with a standard
                # deviation of sqrt(150 * 0.9 - 150 * 0.09) = 11, so 4 deviations. Start-up (class
                # loading, the management bean) adds a few samples elsewhere (measured 5-10): a
                # third is 3 deviations below workA's expected share of 0.55.
                own = {}
                for s in seqs:
                    f = api.get("/api/profiles/%d/periods/%d/flame?measure=cpu-samples" %
                                (p["id"], s))
                    self_samples(f["root"], own)
                own.pop(f["root"]["n"], None)
                total = sum(own.values())
                hot = max(own, key=own.get) if own else ""
                check(total >= 10 and "hproftest.CpuSplit.workA" in hot and
                      own[hot] * 3 > total,
                      "JVM %d: hottest %r with %s of %d samples; the top five: %s" %
                      (k, hot, own.get(hot), total, sorted(own.items(), key=lambda x: -x[1])[:5]))

            agents = SIM_AGENTS + JVMS
            bound_kib = base_kib + agents * BOUND_PER_JVM // 1024
            print("serve RSS: %d KiB before the agents, %d KiB peak, %d KiB with %d simulated "
                  "agents connected: %.0f KiB per connected JVM over the start (bound %d KiB "
                  "per JVM)" % (base_kib, peak_kib, rss_kib, SIM_AGENTS, (peak_kib - base_kib) /
                                agents, BOUND_PER_JVM // 1024))
            check(peak_kib <= bound_kib, "serve's peak RSS %d KiB is over the bound %d KiB" %
                  (peak_kib, bound_kib))
        finally:
            for jvm in jvms:
                if jvm.poll() is None:
                    jvm.kill()
                    jvm.wait()
            if sim.poll() is None:
                sim.stdin.close()
                try:
                    sim.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    sim.kill()
                    sim.wait()
            _, err = stop_serve(serve)
        check(serve.returncode == 0, "serve exit code %s: %s" % (serve.returncode, err[-500:]))

    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("OK: %d simulated agents x %d periods and %d JVMs, each under its own identity" %
          (SIM_AGENTS, PERIODS, JVMS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
