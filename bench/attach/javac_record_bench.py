#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`jvmprof record PID -d SECONDS` on a running javac: the CPU it costs, and how many samples it
takes per CPU-second.

One JVM compiles a generated source tree ITERATIONS times with the JDK's compiler
(attachbench.JavacLoop, javac in the JVM; bench/hprof/gen_sources.py writes the tree). Three
configurations:

  N   never attached
  P   `jvmprof record PID -d SECONDS -o F.txt cpu=samples,interval=MS` started once the first
      compilation has ended (attached mid-run, to a warm JVM that was started without an agent)
  N'  never attached again (A/A: what two identical runs differ by)

Sequential (the default): one JVM at a time, N, P and N' in a rotating order per round. Each run
does the same work, so the CPU time of the whole java process (user + system, every thread, from
wait4) is compared: P/N is the cost of the recording spread over the run; (P - N) divided by the
CPU the JVM used while it was recorded is the cost per recorded CPU-second. The virtual CPUs'
speed drifts by several percent between runs, which one-at-a-time runs cannot tell from a cost.

--paired: two JVMs at the same time, so that what the machine does to one it does to the other.
Each round runs the pair N|P and the pair N|N' (the pair order, and which JVM of a pair is
started first, alternate by round); both JVMs of a pair start together and do the same work, P
recorded as above. Per pair, the ratio of the two processes' CPU seconds (wait4): the median and
range over the rounds of P/N and N'/N, and per round (P - N) and (N' - N) over the CPU P's JVM
used while it was recorded. Two JVMs share the machine's CPUs, so each compilation takes about
twice the wall time it takes alone: raise --iterations so that P's run outlasts the attach, the
SECONDS and the stop (`--iterations 40 --classes 30` for -d 30 on two CPUs; the bench prints how
long javac ran on after each recording, and fails if it ended first).

Samples per CPU-second (both modes): the CPU SAMPLES total of P's report over the CPU the JVM's
Java threads used from the moment `jvmprof record` says it is profiling to SECONDS later (an
upper estimate) and over the whole `jvmprof record` command, attach and stop included (a lower
one), and over the runtime's own count of that CPU (armed_cpu_ms of JVMPI_SAMPLER_STATS=1: the
CPU each sampled thread used while its timer was armed, the exact expectation). At 10 ms, 100 if
every thread's every 10 ms of CPU is sampled. A run in which javac ends before the recording
does fails the bench (raise --iterations).

  python3 bench/attach/javac_record_bench.py --build build [--jdk HOME] [--paired] [--rounds R]
      [--iterations N] [--duration S] [--interval MS] [--packages P] [--classes C]"""
import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


# Threads of the JVM that no Java-level sampler can sample: HotSpot's compilers and collectors and
# its own service threads (not Java threads, or Java threads hidden from JVMTI), and the profiler's
# own ("JVMPI ...", "HPROF ..."), by their kernel names (15 characters at most).
NOT_SAMPLED = ("C1 CompilerThre", "C2 CompilerThre", "GC Thread#", "G1 ", "VM Thread",
               "VM Periodic Tas", "Sweeper thread", "Service Thread", "Monitor Deflati",
               "Notification Th", "JVMPI", "HPROF")


def thread_cpu(pid):
    """{(tid, name): user + system CPU seconds} of every thread of a running process (/proc)."""
    out = {}
    tick = os.sysconf("SC_CLK_TCK")
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return out
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                stat = f.read()
        except OSError:
            continue  # ended meanwhile
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat.rsplit(")", 1)[1].split()
        out[(int(tid), name)] = (int(fields[11]) + int(fields[12])) / tick
    return out


def cpu_between(before, after, sampled=None):
    """CPU seconds used between two thread_cpu() readings: all threads, or only the threads a
    Java sampler can sample (sampled=True) or cannot (sampled=False)."""
    total = 0.0
    for key, seconds in after.items():
        if sampled is not None and sampled == key[1].startswith(NOT_SAMPLED):
            continue
        total += seconds - before.get(key, 0.0)
    return total


def alive(pid):
    """Whether our child `pid` still runs, without reaping it (wait4 gets its rusage later)."""
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None


class Slot:
    """A run's own scratch: javac's output directory and the JVM's stderr (two runs at once must
    not share them)."""

    def __init__(self, work, name, files_txt):
        self.dir = os.path.join(work, name)
        os.makedirs(os.path.join(self.dir, "out"))
        self.javac_args = ["-nowarn", "-proc:none", "-d", os.path.join(self.dir, "out"),
                           "@" + files_txt]
        self.stderr = os.path.join(self.dir, "jvm-stderr.txt")


def run_once(java, classes, slot, iterations, record=None, started=None):
    """One javac loop; `record` (jvmprof, seconds, options, report) records it after the first
    compilation; `started` (a list), when given, gets the JVM's Popen as soon as it runs. Returns
    {"cpu": CPU seconds of the whole run, "wall": its wall seconds, "readings": the recording's
    or None}: the readings are thread_cpu() at the start of `jvmprof record`, when it says it is
    profiling (the sampler runs), SECONDS later (the stop is due) and at its end, with the wall
    clock of each; then the armed CPU seconds (or None) and the wall clock at javac's end."""
    # The runtime's statistics line at the stop (JVMPI_SAMPLER_STATS=1, every run alike): the
    # CPU its sampled threads used while armed.
    began = time.monotonic()
    with open(slot.stderr, "w") as err_file:
        jvm = subprocess.Popen([java, "-cp", classes, "attachbench.JavacLoop", str(iterations)]
                               + slot.javac_args, stdout=subprocess.PIPE, stderr=err_file,
                               text=True, env=dict(os.environ, JVMPI_SAMPLER_STATS="1"))
    if started is not None:
        started.append(jvm)
    readings = None
    try:
        first = jvm.stdout.readline()
        if not first.startswith("ITER 1"):
            raise SystemExit("javac did not run: %r" % first)
        if record is not None:
            jvmprof, seconds, options, report = record
            readings = [(time.monotonic(), thread_cpu(jvm.pid))]
            r = subprocess.Popen([jvmprof, "record", str(jvm.pid), "-d", str(seconds), "-o",
                                  report, options], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            said = r.stderr.readline()
            if "profiling JVM" in said:
                readings.append((time.monotonic(), thread_cpu(jvm.pid)))
                due = time.monotonic() + seconds
                while time.monotonic() < due and alive(jvm.pid):
                    time.sleep(min(0.5, max(0.0, due - time.monotonic())))
                readings.append((time.monotonic(), thread_cpu(jvm.pid)))
            out, err = r.communicate()
            readings.append((time.monotonic(), thread_cpu(jvm.pid)))
            if r.returncode != 0 or len(readings) != 4 or not alive(jvm.pid):
                raise SystemExit("the recording did not end while javac ran (raise --iterations): "
                                 "%s%s%s" % (said, out, err))
        rest = jvm.stdout.read()
        if "DONE" not in rest:
            raise SystemExit("javac did not finish: %r" % rest[-200:])
        ended = time.monotonic()
    except BaseException:
        # The JVM is not left running (or waited for) when the run has already failed.
        if alive(jvm.pid):
            jvm.kill()
        raise
    finally:
        jvm.stdout.close()
        # Reaps the JVM (nothing else did: alive() does not) with its CPU time.
        _, status, usage = os.wait4(jvm.pid, 0)
        jvm.returncode = os.waitstatus_to_exitcode(status)
    with open(slot.stderr) as f:
        armed = re.findall(r"cpu sampler: .*armed_cpu_ms=(\d+)", f.read())
    if jvm.returncode != 0:
        sys.exit("javac loop exited %d" % jvm.returncode)
    if readings is not None:
        readings.append(int(armed[-1]) / 1000.0 if armed else None)
        readings.append(ended)
    return {"cpu": usage.ru_utime + usage.ru_stime, "wall": ended - began, "readings": readings}


def run_pair(java, classes, slots, iterations, records, names):
    """Runs two javac loops at the same time (run_once, in two threads started in the order
    given), records[i] for slots[i]. Returns both runs' results; if either fails, the other JVM is
    killed and the first failure raised, its message led by the failed run's name."""
    results, errors, jvms = [None, None], [], []

    def one(i):
        try:
            results[i] = run_once(java, classes, slots[i], iterations, records[i], jvms)
        except SystemExit as e:
            errors.append(SystemExit("%s: %s" % (names[i], e.code))
                          if isinstance(e.code, str) else e)
        except BaseException as e:  # handed to the main thread
            errors.append(e)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(2)]
    try:
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            threads[0].join(0.5)
            if errors:
                raise errors[0]
    except BaseException:  # a failed run, or Ctrl-C: no JVM is left running
        # Not reaped here: run_once's wait4 does that (and sets returncode); alive() leaves the
        # pid in place until then.
        for jvm in list(jvms):
            try:
                if jvm.returncode is None and alive(jvm.pid):
                    os.kill(jvm.pid, signal.SIGKILL)
            except ChildProcessError:
                pass  # reaped meanwhile
        for t in threads:
            t.join()
        raise
    if errors:
        raise errors[0]
    return results


def read_samples(report):
    """(CPU SAMPLES total, HPROF's counts beside it) of a report, or None."""
    with open(report) as f:
        m = re.search(r"CPU SAMPLES BEGIN \(total = (\d+)(.*)\)", f.read())
    return (int(m.group(1)), m.group(2).strip(", ")) if m else None


def recording_rows(samples, windows):
    """Per recording: the whole `jvmprof record` window (attach, SECONDS profiled, stop), and the
    profiled seconds alone (from its "profiling" line, when the sampler runs, to SECONDS later)
    split into the threads a Java sampler samples and those it cannot (NOT_SAMPLED)."""
    rows = []
    for n, rd in zip(samples, windows):
        (t0, c0), (t1, c1), (t2, c2), (t3, c3), armed, ended = rd
        rows.append({"samples": n, "window_cpu": cpu_between(c0, c3), "window_s": t3 - t0,
                     "armed_cpu": armed, "attach_s": t1 - t0, "stop_s": t3 - t2,
                     "after_s": ended - t3,
                     "java_cpu": cpu_between(c1, c2, True),
                     "vm_cpu": cpu_between(c1, c2, False),
                     "java_window_cpu": cpu_between(c0, c3, True)})
    return rows


def median_of(rows, key):
    return statistics.median(row[key] if isinstance(key, str) else key(row) for row in rows)


def print_recordings(a, rows, added):
    """The recordings' figures, after `added` (the line on the CPU they added)."""
    window = median_of(rows, "window_cpu")
    print("recorded: median %.2f CPU s of the JVM while `jvmprof record` ran (%.1f s of wall "
          "time for -d %d: the attach %.1f s and the stop %.1f s besides); %s"
          % (window, median_of(rows, "window_s"), a.duration, median_of(rows, "attach_s"),
             median_of(rows, "stop_s"), added))
    print("javac ran on after the recording ended: median %.1f s, least %.1f s of wall time "
          "(the run must outlast the recording: raise --iterations as this nears 0)"
          % (median_of(rows, "after_s"), min(w["after_s"] for w in rows)))
    print("profiled seconds: median %.2f CPU s in the Java threads, %.2f CPU s in the VM's "
          "compiler, collector and service threads (not sampled by any Java-level sampler)"
          % (median_of(rows, "java_cpu"), median_of(rows, "vm_cpu")))
    # At INTERVAL ms every sampled thread should give 1000/INTERVAL samples per CPU-second. The
    # sampler starts inside the attach and ends inside the stop, so the Java threads' CPU of the
    # profiled seconds is a little less than what was sampled (an upper estimate of the rate) and
    # that of the whole window more (a lower one).
    print("samples: median %d per recording; per CPU-second of the Java threads %.1f (profiled "
          "seconds) to %.1f (whole window), expected %.0f; per CPU-second of the whole JVM "
          "over the whole window %.1f (the figure before the split)"
          % (median_of(rows, "samples"), median_of(rows, lambda w: w["samples"] / w["java_cpu"]),
             median_of(rows, lambda w: w["samples"] / w["java_window_cpu"]), 1000.0 / a.interval,
             median_of(rows, lambda w: w["samples"] / w["window_cpu"])))
    if all(w["armed_cpu"] for w in rows):
        # The runtime's own count of the CPU it sampled: the exact expectation.
        print("samples per CPU-second the runtime's timers were armed for (armed_cpu_ms of "
              "JVMPI_SAMPLER_STATS): median %.1f of %.0f expected (every recording: %s)"
              % (median_of(rows, lambda w: w["samples"] / w["armed_cpu"]), 1000.0 / a.interval,
                 ", ".join("%d/%.2f s" % (w["samples"], w["armed_cpu"]) for w in rows)))
    print("every recording: " + "; ".join(
        "%d samples, Java %.2f / VM %.2f CPU s profiled, window %.2f CPU s in %.1f s"
        % (w["samples"], w["java_cpu"], w["vm_cpu"], w["window_cpu"], w["window_s"])
        for w in rows))


def sequential(a, java, classes, slot, record):
    """N, P and N' one at a time, in a rotating order per round."""
    cpu = {"N": [], "P": [], "N'": []}
    windows, samples, counts = [], [], []
    order = list(cpu)
    for r in range(a.rounds):
        for k in order[r % 3:] + order[:r % 3]:
            got = run_once(java, classes, slot, a.iterations, record(r) if k == "P" else None)
            cpu[k].append(got["cpu"])
            if k == "P":
                found = read_samples(record(r)[3])
                if found is None:
                    sys.exit("round %d: the report has no CPU SAMPLES" % r)
                windows.append(got["readings"])
                samples.append(found[0])
                counts.append(found[1])
    med = {k: statistics.median(v) for k, v in cpu.items()}
    per_round = {k: statistics.median(x / n for x, n in zip(cpu[k], cpu["N"])) for k in cpu}
    print("| row | run | median CPU s (user+sys) | ratio of medians | median of per-round "
          "ratios |")
    print("|---|---|---|---|---|")
    names = {"N": "never attached",
             "P": "`jvmprof record PID -d %d %s` after the first compilation"
                  % (a.duration, a.options),
             "N'": "never attached (A/A)"}
    for k in ("N", "P", "N'"):
        print("| %s | %s | %.2f | %.3f | %.3f |" % (k, names[k], med[k], med[k] / med["N"],
                                                   per_round[k]))
    rows = recording_rows(samples, windows)
    window = median_of(rows, "window_cpu")
    print_recordings(a, rows, "added CPU per recorded CPU-second (P - N medians over it) %.3f; "
                     "A/A (N' - N) over it %.3f" % ((med["P"] - med["N"]) / window,
                                                    (med["N'"] - med["N"]) / window))
    print("HPROF's counts beside each total: " + "; ".join(counts))
    print("every run's CPU s: " + "; ".join("%s %s" % (k, ["%.2f" % x for x in cpu[k]])
                                            for k in cpu))


def paired(a, java, classes, slots, record):
    """Per round the pairs N|P and N|N', each pair's two JVMs side by side."""
    pairs = {"P": [], "N'": []}  # per round: (N's run, the other's run)
    samples, counts = [], []
    for r in range(a.rounds):
        names = ["P", "N'"] if r % 2 == 0 else ["N'", "P"]
        for name in names:
            # Which JVM's thread starts first alternates with the round, as does the pair order.
            records = [None, record(r) if name == "P" else None]
            flip = r % 2 == 1
            order = [1, 0] if flip else [0, 1]
            runs = ["round %d, N beside %s" % (r + 1, name), "round %d, %s" % (r + 1, name)]
            got = run_pair(java, classes, [slots[i] for i in order], a.iterations,
                           [records[i] for i in order], [runs[i] for i in order])
            base, other = (got[1], got[0]) if flip else (got[0], got[1])
            pairs[name].append((base, other))
            if name == "P":
                found = read_samples(record(r)[3])
                if found is None:
                    sys.exit("round %d: the report has no CPU SAMPLES" % (r + 1))
                samples.append(found[0])
                counts.append(found[1])
            print("round %d %-2s N %.2f CPU s in %.1f s beside %s %.2f CPU s in %.1f s: ratio %.4f"
                  % (r + 1, name, base["cpu"], base["wall"], name, other["cpu"], other["wall"],
                     other["cpu"] / base["cpu"]), file=sys.stderr, flush=True)
    rows = recording_rows(samples, [o["readings"] for _, o in pairs["P"]])
    print("| pair | ratio of CPU s to N beside it (median) | min-max | rounds | N CPU s (median) "
          "| its CPU s (median) | wall s, N / it (median) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    labels = {"P": "P: `jvmprof record PID -d %d %s` after the first compilation, beside N"
                   % (a.duration, a.options),
              "N'": "N': never attached, beside N (A/A)"}
    for name in ("P", "N'"):
        ratios = [o["cpu"] / b["cpu"] for b, o in pairs[name]]
        print("| %s | %.4fx | %.4f-%.4f | %d | %.2f | %.2f | %.1f / %.1f |" % (
            labels[name], statistics.median(ratios), min(ratios), max(ratios), len(ratios),
            statistics.median(b["cpu"] for b, _ in pairs[name]),
            statistics.median(o["cpu"] for _, o in pairs[name]),
            statistics.median(b["wall"] for b, _ in pairs[name]),
            statistics.median(o["wall"] for _, o in pairs[name])))
    # Per round: the CPU the recording added, over the CPU P's JVM used while it was recorded;
    # the A/A pair of the same round over the same window.
    added = [(o["cpu"] - b["cpu"]) / w["window_cpu"] for (b, o), w in zip(pairs["P"], rows)]
    same = [(o["cpu"] - b["cpu"]) / w["window_cpu"] for (b, o), w in zip(pairs["N'"], rows)]
    print_recordings(a, rows, "added CPU per recorded CPU-second (P - N beside it, over it, per "
                     "round) median %.3f (%.3f to %.3f); A/A (N' - N beside it, over the same "
                     "round's window) median %.3f (%.3f to %.3f)"
                     % (statistics.median(added), min(added), max(added),
                        statistics.median(same), min(same), max(same)))
    print("HPROF's counts beside each total: " + "; ".join(counts))
    print("every round's CPU s: " + "; ".join(
        "N|P %.2f|%.2f, N|N' %.2f|%.2f" % (p[0]["cpu"], p[1]["cpu"], q[0]["cpu"], q[1]["cpu"])
        for p, q in zip(pairs["P"], pairs["N'"])))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="the build directory")
    ap.add_argument("--jdk", default="/usr/lib/jvm/java-17-openjdk-amd64")
    ap.add_argument("--paired", action="store_true",
                    help="run N|P and N|N' side by side (two JVMs at once) instead of one JVM "
                         "at a time")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=12,
                    help="compilations of the tree per run (the run must outlast the recording; "
                         "--paired needs about twice as many as one JVM at a time)")
    ap.add_argument("--duration", type=int, default=30, help="jvmprof record -d SECONDS")
    ap.add_argument("--interval", type=int, default=10, help="HPROF's interval= in ms")
    ap.add_argument("--packages", type=int, default=3)
    ap.add_argument("--classes", type=int, default=25, help="classes per package")
    a = ap.parse_args()
    if min(a.rounds, a.iterations, a.duration, a.interval, a.packages, a.classes) <= 0:
        ap.error("every count must be positive")
    if a.iterations < 2:
        ap.error("--iterations must be at least 2 (the recording starts after the first)")
    jvmprof = os.path.join(a.build, "src", "jvmprof", "jvmprof")
    classes = os.path.join(a.build, "bench", "attach", "classes")
    java = os.path.join(a.jdk, "bin", "java")
    for path in (jvmprof, os.path.join(classes, "attachbench", "JavacLoop.class"), java):
        if not os.path.exists(path):
            ap.error("not found: %s (build the targets jvmprof and bench_attach_java)" % path)
    work = tempfile.mkdtemp(prefix="jvmprof-javac-record-bench-")
    try:
        tree = os.path.join(work, "tree")
        subprocess.run([sys.executable, os.path.join(HERE, "..", "hprof", "gen_sources.py"), tree,
                        str(a.packages), str(a.classes)], check=True, stdout=subprocess.DEVNULL)
        files = sorted(os.path.join(d, f) for d, _, fs in os.walk(tree) for f in fs
                       if f.endswith(".java"))
        files_txt = os.path.join(work, "files.txt")
        with open(files_txt, "w") as f:
            f.write("\n".join(files) + "\n")
        a.options = "cpu=samples,interval=%d" % a.interval

        def record(r):
            return (jvmprof, a.duration, a.options, os.path.join(work, "p%d.txt" % r))

        load = os.getloadavg()[0]
        began = time.time()
        print("javac loop: %d compilations of %d generated classes per run, %d rounds%s, JDK %s"
              % (a.iterations, len(files), a.rounds,
                 " of the pairs N|P and N|N' side by side" if a.paired else
                 " of N, P, N' one at a time", a.jdk))
        if a.paired:
            paired(a, java, classes, [Slot(work, "a", files_txt), Slot(work, "b", files_txt)],
                   record)
        else:
            sequential(a, java, classes, Slot(work, "a", files_txt), record)
        print("1-minute load average %.2f at the start, %.2f at the end; %.0f s in all"
              % (load, os.getloadavg()[0], time.time() - began))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
