#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A stalled net= front end must not slow the profiled JVM: throughput with a peer that stops
reading for a while, against one that always reads.

The workload is hproftest.WaitStorm -t SECONDS under HPROF monitor=y,net=: two threads hand a token
back and forth with wait/notify, so every hand-off is a WAIT and a WAITED event on the stream. The
peer (this script, on 127.0.0.1) either reads everything ("normal") or reads for --stall-at seconds,
stops reading for --stall seconds, then reads again ("stalled").

Each round runs three configurations back to back: "normal", "stalled" and "normal (A/A)", a second
normal run that shows how far two identical runs differ on this machine. The order rotates from
round to round, so no configuration always runs first or last. Per round, each run's hand-offs per
second is divided by that round's "normal" run (the per-round ratio); the table gives the medians
over rounds of the rates, of the per-round ratios, of the work per CPU-second of the java process
(hand-offs and stream events per user + system second, from wait4) and what HPROF reported
dropped. A stall costs nothing when the stalled ratio is as close to 1 as the A/A ratio is.

With --compute N (default 1), N more threads compute beside the hand-offs and the per-round ratios
are taken on their work per second instead: hand-offs are latency-bound (their rate follows how
fast the kernel wakes a waiting thread, which is slower when the CPUs idle), computing is not.
--compute 0 gives the hand-off rate alone.

Progress goes to stderr; the result (Markdown) to stdout.
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

CONFIGS = [("normal", False), ("stalled", True), ("normal (A/A)", False)]


def run_once(args, stall):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    cmd = [args.java, "-agentlib:hprof=monitor=y,net=127.0.0.1:%d" % port, "-cp", args.classes,
           "hproftest.WaitStorm", "-t", str(args.seconds)]
    if args.compute > 0:
        cmd += ["-c", str(args.compute)]
    env = dict(os.environ, LD_LIBRARY_PATH=args.lib_dir)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    listener.settimeout(60)
    try:
        conn, _ = listener.accept()
    except socket.timeout:
        proc.kill()
        sys.exit("HPROF did not connect within 60 s: %s" % " ".join(cmd))
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
    cpu = usage.ru_utime + usage.ru_stime
    w = re.search(r"WAITSTORM WORK (\d+) ([0-9.]+)", out)
    if args.compute > 0 and not w:
        sys.exit("run failed (%s): no WAITSTORM WORK line\n%s" % (" ".join(cmd), out))
    work = int(w.group(1)) / float(w.group(2)) if w else None
    d = re.search(r"hprof: net=: (\d+) events", err)
    return {"work": work, "rate": handoffs / seconds, "handoffs_per_cpu_s": handoffs / cpu,
            "events_per_cpu_s": 2 * handoffs / cpu, "cpu_s": cpu,
            "dropped": int(d.group(1)) if d else 0, "received": received[0],
            "load": os.getloadavg()[0]}


def positive(kind):
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError("not a number: %r" % text)
        if value <= 0:
            raise argparse.ArgumentTypeError("must be > 0: %r" % text)
        return value
    return parse


def non_negative(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not a number: %r" % text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be >= 0: %r" % text)
    return value


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--java", default="/usr/lib/jvm/java-17-openjdk-amd64/bin/java",
                    help="the java launcher (default: JDK 17)")
    ap.add_argument("--build", default="build",
                    help="build directory with lib/libhprof.so and the test classes")
    ap.add_argument("--rounds", type=positive(int), default=3, help="rounds (default 3)")
    ap.add_argument("--seconds", type=positive(float), default=40,
                    help="length of each run in seconds (default 40)")
    ap.add_argument("--stall", type=non_negative, default=30,
                    help="seconds the stalled peer stops reading (default 30)")
    ap.add_argument("--compute", type=int, default=1,
                    help="threads computing beside the hand-offs; ratios are taken on their work "
                         "per second (default 1; 0: ratios on hand-offs per second)")
    ap.add_argument("--stall-at", type=non_negative, default=5,
                    help="when the stall starts, seconds into the run (default 5)")
    args = ap.parse_args()
    if args.compute < 0:
        ap.error("--compute must be >= 0")
    if args.stall_at + args.stall > args.seconds:
        ap.error("the stall must end before the run does (stall-at + stall <= seconds)")
    args.lib_dir = os.path.join(args.build, "lib")
    args.classes = os.path.join(args.build, "java", "hprof-test-classes")
    for need in (os.path.join(args.lib_dir, "libhprof.so"),
                 os.path.join(args.classes, "hproftest", "WaitStorm.class"), args.java):
        if not os.path.exists(need):
            ap.error("missing %s (build the hprof and java_hprof_tests targets)" % need)

    results = {name: [] for name, _ in CONFIGS}
    ratios = {name: [] for name, _ in CONFIGS}
    load_start = os.getloadavg()[0]
    total = args.rounds * len(CONFIGS)
    started = time.monotonic()
    done = 0
    for r in range(args.rounds):
        order = CONFIGS[r % len(CONFIGS):] + CONFIGS[:r % len(CONFIGS)]
        round_results = {}
        for name, stall in order:
            print("[%d/%d] round %d/%d: %-12s (%g s, %.0f s elapsed, load %.1f) ..."
                  % (done + 1, total, r + 1, args.rounds, name, args.seconds,
                     time.monotonic() - started, os.getloadavg()[0]),
                  file=sys.stderr, flush=True)
            res = run_once(args, stall)
            done += 1
            results[name].append(res)
            round_results[name] = res
            print("      %9.0f hand-offs/s, %9.0f hand-offs/CPU-s, %s dropped %d, received %d B"
                  % (res["rate"], res["handoffs_per_cpu_s"],
                     "%.1f work units/s," % res["work"] if res["work"] else "",
                     res["dropped"], res["received"]),
                  file=sys.stderr, flush=True)
        key = "work" if args.compute > 0 else "rate"
        base = round_results["normal"][key]
        for name, _ in CONFIGS:
            ratios[name].append(round_results[name][key] / base)
        print("      round %d ratios to normal: stalled %.3f, A/A %.3f"
              % (r + 1, ratios["stalled"][-1], ratios["normal (A/A)"][-1]),
              file=sys.stderr, flush=True)

    print("%d interleaved rounds (order rotated per round), %g s per run, the stalled peer stops "
          "reading at %g s for %g s; %d CPUs; 1-minute load %.2f at the start, %.2f at the end.\n"
          % (args.rounds, args.seconds, args.stall_at, args.stall, os.cpu_count(), load_start,
             os.getloadavg()[0]))
    measure = ("work units/s of %d computing thread(s)" % args.compute if args.compute > 0
               else "hand-offs/s")
    print("| peer | work units/s (median) | hand-offs/s (median) | ratio to normal of %s "
          "(median of per-round ratios) | per-round ratios | hand-offs per CPU-second | "
          "events per CPU-second | events dropped (per run) |" % measure)
    print("|---|---|---|---|---|---|---|---|")
    for name, _ in CONFIGS:
        rows = results[name]
        print("| %s | %s | %.0f | %.3f | %s | %.0f | %.0f | %s |"
              % (name if name != "stalled" else "stalled %gs" % args.stall,
                 "%.1f" % statistics.median(x["work"] for x in rows) if args.compute > 0 else "-",
                 statistics.median(x["rate"] for x in rows), statistics.median(ratios[name]),
                 ", ".join("%.3f" % x for x in ratios[name]),
                 statistics.median(x["handoffs_per_cpu_s"] for x in rows),
                 statistics.median(x["events_per_cpu_s"] for x in rows),
                 ", ".join(str(x["dropped"]) for x in rows)))


if __name__ == "__main__":
    main()
