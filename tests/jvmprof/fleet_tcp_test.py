#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A fleet into one collector over TCP: one `jvmprof serve` process, 190 simulated agents
(fleet_agents --replay: each its own TCP connection and identity, replaying a stream a real JVM
sent) and 10 JVMs running hproftest.CpuSplit with
-agentpath:libhprof.so=cpu=samples,period=1,net=...,label=..., all streaming at once.

The replayed stream is recorded here first, so that no binary is checked in: a JVM running
hproftest.PeriodicWork under cpu=samples,thread=y,depth=12,period=1,net=127.0.0.1:PORT streams
into a plain listening socket of this test's own that keeps every byte (and sends nothing: HPROF
waits for no command) until it has K periods; then the JVM is told to end, and its stream, exit
reports and all, is the recording. The 10 JVMs start with the recording JVM, so the simulated
agents replay beside them.

Checked through serve's HTTP API, the view a user of the UI gets:

 - every simulated agent is there exactly once, under its own identity (pid, main class, labels),
   with every period it sent (seq 1..K, received == K) and each period's CPU SAMPLES total the
   recorded period's; its last period's flame graph has the recorded period's total, and each
   stack in it the samples the recording gives it (the recording read here, on its own, from its
   TRACE records and PERIOD blocks: not by serve's parser). A serve that dropped a connection,
   lost a period or handed one agent's bytes to another's session fails here, and so does a
   replay that lost, reordered or altered recorded records;
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
import socket
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
JVM_CPU_MS = 1500  # CpuSplit's CPU budget
REAL_DEPTH = 4  # HPROF's default depth=: the JVMs' traces have at most this many frames
RECORDED = "hproftest.PeriodicWork"  # CPU work, allocations and a new thread every round

# A hidden class's name (a lambda, a LambdaForm) is a different string in serve's flame graph
# (run-specific parts cut: profiles::normalized_method); stacks through one are compared by their
# samples in the total only.
HIDDEN = re.compile(r"[./]0x[0-9a-fA-F]|\$\$Lambda|LambdaForm\$")


def per_jvm_bytes(frames, threads, rows):
    """serve's memory per connected JVM, derived from what it keeps: the session's parsed profile
    (every thread and trace the agent sent) twice, the reader's own and the copy it publishes to
    the UI; and its kept periods, each only its rows (a row is 64 bytes and its method name's heap
    block). A profiles::Frame is 72 bytes (two std::string and a line) and its method and source
    names (16-20 characters, past std::string's 15 in place) two heap blocks of 32 bytes: about
    140 bytes a frame; a thread (profiles::ThreadInfo: two std::string and two stamps, 96 bytes,
    in a std::map node) about 140; a row about 100; then the reader's 64 KiB buffer and its
    thread's stack (a few pages): 96 KiB (measured: 84 KiB a session whose stream has no thread,
    trace or row). For the synthetic fleet (2400 frames, 200 threads, 900 rows) that is about
    850 KiB a simulated agent (measured: 710 KiB)."""
    return 2 * frames * 140 + 2 * threads * 140 + rows * 100 + 64 * 1024 + 32 * 1024


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


def labels_of(info):
    return info["identity"].get("labels", {})


def leaf_paths(node, path, into):
    """Each root-to-frame path of a flame tree with samples of its own: {(frame, ...): samples}."""
    children = node.get("c", [])
    own = node["v"] - sum(c["v"] for c in children)
    if own and path:
        into[path] = into.get(path, 0) + own
    for c in children:
        leaf_paths(c, path + (c["n"],), into)
    return into


def read_recording(text):
    """The recorded stream read on its own terms (docs/hprof-text-format.md), not by serve's
    parser: each TRACE's frames (method names, leaf first; none for <empty>) and, for each complete
    PERIOD block in order, its seq, its CPU SAMPLES total and rows (trace, count), and its rows in
    all; and how many frames, threads and rows the stream up to each block's end holds."""
    traces, periods = {}, []
    frames = threads = rows_so_far = 0
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        m = re.match(r"TRACE (\d+):", line)
        if m:
            trace = []
            while i < len(lines) and lines[i].startswith("\t"):
                frame = lines[i][1:]
                if frame != "<empty>":
                    trace.append(frame[:frame.rfind("(")] if frame.endswith(")") else frame)
                i += 1
            traces[int(m.group(1))] = trace
            frames += len(trace)
            continue
        if line.startswith("THREAD START"):
            threads += 1
            continue
        m = re.match(r"PERIOD BEGIN: seq=(\d+) start=\d+ end=\d+$", line)
        if not m:
            continue
        period = {"seq": int(m.group(1)), "cpu_total": None, "cpu_rows": [], "rows": 0}
        while i < len(lines) and not lines[i].startswith("PERIOD END: "):
            header = lines[i]
            n = int(re.search(r"rows=(\d+)", header).group(1))
            body = lines[i + 1:i + 1 + n]
            i += 1 + n
            period["rows"] += n
            if header.startswith("CPU SAMPLES: "):
                period["cpu_total"] = int(re.search(r"total=(\d+)", header).group(1))
                period["cpu_rows"] = [tuple(int(x) for x in r.split()) for r in body]
        if i < len(lines):  # its END line: the block is complete
            i += 1
            rows_so_far += period["rows"]
            period.update(frames=frames, threads=threads, rows_so_far=rows_so_far,
                          traces=dict(traces))
            periods.append(period)
    return periods


def recorded_stacks(period):
    """One recorded period's CPU samples by root-first stack: {(frame, ...): samples}; stacks
    through a hidden class or of an empty trace are left out (see HIDDEN)."""
    stacks = {}
    for trace, count in period["cpu_rows"]:
        frames = period["traces"].get(trace)
        if frames is None:
            return None  # a row names a trace not written before it
        path = tuple(reversed(frames))
        if path and not any(HIDDEN.search(f) for f in path):
            stacks[path] = stacks.get(path, 0) + count
    return stacks


def serve_stacks(flame):
    return {path: n for path, n in leaf_paths(flame["root"], (), {}).items()
            if not any(HIDDEN.search(f) or f.startswith("<empty") for f in path)}


class Recorder:
    """A plain listening socket for one HPROF agent's net= stream: keeps every byte it sends until
    the connection ends, and tells when `periods` complete PERIOD blocks are in."""

    def __init__(self, periods):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1)
        self.port = self.sock.getsockname()[1]
        self.periods = periods
        self.data = bytearray()
        self.enough = threading.Event()  # `periods` blocks in, or the stream ended
        self.ended = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        try:
            self.sock.settimeout(240)  # a bound against hanging when no JVM ever connects
            conn, _ = self.sock.accept()
            with conn:
                conn.settimeout(240)
                ends = searched = 0
                mark = b"\nPERIOD END: "
                while True:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    self.data += chunk
                    at = self.data.find(mark, searched)
                    while at >= 0:
                        ends += 1
                        searched = at + 1
                        at = self.data.find(mark, searched)
                    # A mark cut by the chunk's end is found in the next round.
                    searched = max(searched, len(self.data) - len(mark) + 1)
                    if ends >= self.periods:
                        self.enough.set()
        except OSError as e:
            print("recorder: %s" % e)
        finally:
            self.sock.close()
            self.enough.set()
            self.ended.set()


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

        recorder = Recorder(PERIODS)
        rec_opts = "cpu=samples,thread=y,depth=12,period=1,net=127.0.0.1:%d" % recorder.port
        rec_jvm = subprocess.Popen(
            [java, "-agentpath:%s=%s" % (a.hprof, rec_opts), "-Xmx64m", "-XX:TieredStopAtLevel=1",
             "-cp", a.classes, RECORDED, "-"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        sim = None
        jvms = []
        for k in range(JVMS):
            opts = "cpu=samples,period=1,net=127.0.0.1:%d,label=fleet=jvm;jvm=%d" % (port, k)
            jvms.append(subprocess.Popen(
                [java, "-agentpath:%s=%s" % (a.hprof, opts), "-Xmx64m", "-XX:TieredStopAtLevel=1",
                 "-cp", a.classes, "hproftest.CpuSplit", str(JVM_CPU_MS)],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        try:
            # K periods recorded (a bound against hanging, not a timing check), then the program
            # is told to end (its standard input closes): HPROF sends its last period and its
            # exit reports and closes the connection.
            for _ in range(240):
                if recorder.enough.wait(timeout=1) or rec_jvm.poll() is not None:
                    break
            out, err = rec_jvm.communicate(input="", timeout=180)
            recorder.ended.wait(timeout=60)
            check(rec_jvm.returncode == 0 and "PERIODIC rounds=" in out,
                  "recording JVM: exit code %s, output %r, stderr %r" % (rec_jvm.returncode, out,
                                                                        err[-500:]))
            recording = os.path.join(work, "recorded-stream.txt")
            with open(recording, "wb") as f:
                f.write(recorder.data)
            replayed = read_recording(recorder.data.decode("utf-8", "replace"))[:PERIODS]
            if not check([r["seq"] for r in replayed] == list(range(1, PERIODS + 1)),
                         "the recording (%d bytes) has periods %s, not 1..%d" %
                         (len(recorder.data), [r["seq"] for r in replayed], PERIODS)):
                return 1
            # Not a vacuous comparison: PeriodicWork's main thread computes all through the
            # recording (6 s and more), so some recorded period has CPU samples on stacks compared
            # one by one (outside hidden classes), however loaded the machine.
            if not check(any(recorded_stacks(r) for r in replayed),
                         "the recording's periods have no CPU samples to compare: %s" %
                         [(r["seq"], r["cpu_rows"]) for r in replayed]):
                return 1
            last = replayed[-1]
            print("recorded %d bytes from %s: replayed periods' CPU samples %s; %d frames, %d "
                  "THREAD STARTs, %d period rows up to period %d; %d of %d JVMs running as the "
                  "replay starts" % (len(recorder.data), RECORDED,
                                     [r["cpu_total"] for r in replayed], last["frames"],
                                     last["threads"], last["rows_so_far"], PERIODS,
                                     sum(j.poll() is None for j in jvms), JVMS))
            sim = subprocess.Popen(
                [a.fleet_agents, "--replay", recording, "--port", str(port), "--agents",
                 str(SIM_AGENTS), "--periods", str(PERIODS), "--period-ms", str(PERIOD_MS)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

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
                want = [(r["seq"], r["cpu_total"] or 0) for r in replayed]
                if not check(per["received"] == PERIODS and got == want,
                             "agent %d: received %s, periods (seq, samples) %s, recorded %s" %
                             (i, per["received"], got, want)):
                    continue
                # The last period of each agent, every period of the first and the last agent.
                for seq in (range(1, PERIODS + 1) if i in (0, SIM_AGENTS - 1) else [PERIODS]):
                    flame = api.get("/api/profiles/%d/periods/%d/flame?measure=cpu-samples" %
                                    (p["id"], seq))
                    rec = replayed[seq - 1]
                    want_total = sum(n for _, n in rec["cpu_rows"])
                    want_stacks = recorded_stacks(rec)
                    got_stacks = serve_stacks(flame)
                    differ = sorted(k for k in set(want_stacks or {}) | set(got_stacks)
                                    if (want_stacks or {}).get(k) != got_stacks.get(k))
                    check(want_stacks is not None and flame["total"] == want_total and
                          not differ,
                          "agent %d period %d: %s samples, recorded %d; stacks (serve, "
                          "recorded) differ: %s" %
                          (i, seq, flame["total"], want_total,
                           [(k, got_stacks.get(k), (want_stacks or {}).get(k))
                            for k in differ[:3]]))

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

            # The bound: twice the derived size of what each agent sent (room for allocator
            # slack on a loaded machine): for a simulated agent, what the replayed part of the
            # recording holds; for a JVM, its traces (at most REAL_DEPTH frames each), threads,
            # and rows (at most one per trace in each period and in the exit report), as serve
            # counts them. It fails if sessions grew with what they read beyond their profile
            # and kept periods (the replayed stream is ~20 KB, not enough to show periods that
            # kept copies of their traces: fleet_bench's synthetic fleet measures that).
            sim_bound = 2 * per_jvm_bytes(last["frames"], last["threads"], last["rows_so_far"])
            jvm_bound = sum(2 * per_jvm_bytes(REAL_DEPTH * p["traces"], p["threads"],
                                              p["traces"] * (p["periods"]["received"] + 1))
                            for p in jvm_sessions.values())
            agents = SIM_AGENTS + JVMS
            bound_kib = base_kib + (SIM_AGENTS * sim_bound + jvm_bound) // 1024
            print("serve RSS: %d KiB before the agents, %d KiB peak, %d KiB with %d simulated "
                  "agents connected: %.0f KiB per connected JVM over the start (bound %d KiB "
                  "per simulated agent, %d KiB per JVM on average)" %
                  (base_kib, peak_kib, rss_kib, SIM_AGENTS, (peak_kib - base_kib) / agents,
                   sim_bound // 1024, jvm_bound // 1024 // max(1, len(jvm_sessions))))
            check(peak_kib <= bound_kib, "serve's peak RSS %d KiB is over the bound %d KiB" %
                  (peak_kib, bound_kib))
        finally:
            for jvm in jvms + [rec_jvm]:
                if jvm.poll() is None:
                    jvm.kill()
                    jvm.wait()
            if sim is not None and sim.poll() is None:
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
    print("OK: %d simulated agents x %d recorded periods and %d JVMs, each under its own "
          "identity" % (SIM_AGENTS, PERIODS, JVMS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
