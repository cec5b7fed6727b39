#!/usr/bin/env python3
"""A stalled net= front end must not slow the profiled JVM: throughput with a reader that stops
reading for a while, against one that always reads.

The workload is hproftest.WaitStorm -t SECONDS under HPROF monitor=y,net=: two threads hand a token
back and forth with wait/notify, so every hand-off is a WAIT and a WAITED event on the stream. The
peer (this script, on 127.0.0.1) either reads everything ("normal") or reads for STALL_AT seconds,
then stops reading for --stall seconds, then reads again ("stalled"). Configurations run interleaved
(round 1 runs each once, then round 2, ...); "normal" runs twice per round, so the second one is an
A/A row. Prints a Markdown table: median hand-offs per second, the ratio to "normal", events per
CPU-second of the java process (user + system, from wait4), and the events HPROF reported dropped.
"""
import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import threading
import time


def run_once(args, stall):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    cmd = [args.java, "-agentlib:hprof=monitor=y,net=127.0.0.1:%d" % port, "-cp", args.classes,
           "hproftest.WaitStorm", "-t", str(args.seconds)]
    env = dict(os.environ, LD_LIBRARY_PATH=args.lib_dir)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    listener.settimeout(60)
    conn, _ = listener.accept()
    listener.close()
    received = [0]

    def reader():
        start = time.monotonic()
        stalled = False
        while True:
            if stall and not stalled and time.monotonic() - start >= args.stall_at:
                stalled = True
                time.sleep(args.stall)  # the front end stops reading
            try:
                data = conn.recv(1 << 16)
            except OSError:
                break
            if not data:
                break
            received[0] += len(data)

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    out_chunks, err_chunks = [], []
    to = threading.Thread(target=lambda: out_chunks.append(proc.stdout.read()))
    te = threading.Thread(target=lambda: err_chunks.append(proc.stderr.read()))
    to.start()
    te.start()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    to.join()
    te.join()
    t.join(timeout=30)
    conn.close()
    out = b"".join(out_chunks).decode(errors="replace")
    err = b"".join(err_chunks).decode(errors="replace")
    m = re.search(r"WAITSTORM RATE (\d+) ([0-9.]+)", out)
    if proc.returncode != 0 or not m:
        sys.exit("run failed (%s): rc=%d\n%s\n%s" % (" ".join(cmd), proc.returncode, out, err))
    handoffs, seconds = int(m.group(1)), float(m.group(2))
    d = re.search(r"hprof: net=: (\d+) events", err)
    return {"rate": handoffs / seconds, "events_per_cpu_s": 2 * handoffs /
            (usage.ru_utime + usage.ru_stime), "dropped": int(d.group(1)) if d else 0,
            "received": received[0]}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--java", default="/usr/lib/jvm/java-17-openjdk-amd64/bin/java")
    ap.add_argument("--build", default="build", help="build directory (libhprof.so, test classes)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=40, help="length of each run")
    ap.add_argument("--stall", type=float, default=30, help="seconds the stalled peer stops reading")
    ap.add_argument("--stall-at", type=float, default=5, help="when the stall starts (s)")
    args = ap.parse_args()
    if args.rounds < 1 or args.seconds <= 0 or args.stall < 0 or args.stall_at < 0:
        ap.error("rounds must be >= 1, seconds > 0, stall and stall-at >= 0")
    if args.stall_at + args.stall > args.seconds:
        ap.error("the stall must end before the run does (stall-at + stall <= seconds)")
    args.lib_dir = os.path.join(args.build, "lib")
    args.classes = os.path.join(args.build, "java", "hprof-test-classes")
    for need in (os.path.join(args.lib_dir, "libhprof.so"),
                 os.path.join(args.classes, "hproftest", "WaitStorm.class"), args.java):
        if not os.path.exists(need):
            ap.error("missing %s (build the hprof and java_hprof_tests targets)" % need)
    configs = [("normal", False), ("normal (A/A)", False), ("stalled %gs" % args.stall, True)]
    results = {name: [] for name, _ in configs}
    load_start = os.getloadavg()[0]
    for r in range(args.rounds):
        for name, stall in configs:
            res = run_once(args, stall)
            results[name].append(res)
            print("round %d %-14s %9.0f hand-offs/s, %9.0f events/CPU-s, dropped %d, received %d B"
                  % (r + 1, name, res["rate"], res["events_per_cpu_s"], res["dropped"],
                     res["received"]), file=sys.stderr, flush=True)
    base = statistics.median(x["rate"] for x in results["normal"])
    print("Median of %d runs, interleaved; %g s per run, the stalled peer stops reading at %g s for "
          "%g s; 1-minute load %.2f at the start, %.2f at the end.\n"
          % (args.rounds, args.seconds, args.stall_at, args.stall, load_start, os.getloadavg()[0]))
    print("| peer | hand-offs/s (median) | ratio to normal | events per CPU-second | "
          "events dropped (per run) |")
    print("|---|---|---|---|---|")
    for name, _ in configs:
        rate = statistics.median(x["rate"] for x in results[name])
        eps = statistics.median(x["events_per_cpu_s"] for x in results[name])
        dropped = ", ".join(str(x["dropped"]) for x in results[name])
        print("| %s | %.0f | %.3f | %.0f | %s |" % (name, rate, rate / base, eps, dropped))


if __name__ == "__main__":
    main()
