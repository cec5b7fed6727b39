#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Server benchmark: Debian's Tomcat 10 serving LoadServlet (java/benchserver: CPU work,
allocation, a contended lock) to apache2-utils' ab with CLIENTS concurrent clients, with no agent,
with HPROF in each mode streaming to `jvmprof serve` (net=), and with async-profiler's cpu, alloc
and lock modes when its library is given. Every configuration runs once per round, rounds
interleaved, so that slow drift of a shared machine hits them alike; "no agent, repeated" is the
A/A row (the noise floor). Each run starts a fresh Tomcat in a private CATALINA_BASE on a loopback
port, warms it up, measures for DURATION seconds, and stops it (SIGTERM; HPROF writes its report
at exit). Prints a Markdown table: median requests/s, p50 and p99 latency and the JVM's CPU per
request while measured, each relative to no agent, the JVM's context switches per request, and
for CPU samplers the stack samples per
CPU-second of the JVM (the runtime's signals=, or async-profiler's jdk.ExecutionSample events)
and whether perf-event descriptors were open (which CPU timer ran).

With --after-stop the configurations are instead three Tomcats that run the same timeline
(warm-up, a loaded phase, a second warm-up, the measured run): N and N' never attached, P
attached with `jvmprof attach PID SESSION` at the start of its loaded phase and stopped with
`jvmprof stop PID` at its end, under ab's load. The table gives requests/s after the stop, P/N
and N'/N (the A/A row) as ratios of medians and as medians of per-round ratios, and the stack
samples HPROF recorded per CPU-second of P's JVM while attached.

Run through bench/server/run-server-bench.sh (which installs tomcat10 and apache2-utils when
missing).
"""
import argparse
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOMCAT_HOME = "/usr/share/tomcat10"

# (name, HPROF options or None, async-profiler options or None). net= is appended to HPROF's.
# heap=sites over net= samples every 512k unless sample=0 asks for exact counts.
CONFIGS = [
    ("no agent", None, None),
    ("no agent, repeated", None, None),
    ("cpu=samples", "cpu=samples", None),
    # What streaming costs, split (run with --only "N: ,N': ,P: ,=cpu=samples"): cpu=samples to a
    # file (no net=), the same again (A/A), and with period=10 into serve beside plain net= above.
    ("N: cpu=samples to a file", "cpu=samples", None),
    ("N': cpu=samples to a file (A/A)", "cpu=samples", None),
    ("P: cpu=samples period=10 net=", "cpu=samples,period=10", None),
    ("monitor=y", "monitor=y", None),
    ("heap=sites,sample=512k (net= default)", "heap=sites", None),
    ("heap=sites,sample=0 (exact)", "heap=sites,sample=0", None),
    ("cpu=samples,heap=sites,sample=0", "cpu=samples,heap=sites,sample=0", None),
    ("cpu=samples,monitor=y", "cpu=samples,monitor=y", None),
    ("heap=sites,sample=0,monitor=y", "heap=sites,sample=0,monitor=y", None),
    ("cpu=samples,heap=sites,sample=0,monitor=y", "cpu=samples,heap=sites,sample=0,monitor=y",
     None),
    ("cpu=samples,heap=sites,sample=512k,monitor=y", "cpu=samples,heap=sites,monitor=y", None),
    ("cpu=times", "cpu=times", None),
    ("heap=dump", "heap=dump", None),
    ("heap=all", "heap=all", None),
    ("async-profiler cpu", None, "event=cpu"),
    ("cpu=samples with perf events (JVMPI_SAMPLER_TIMER=perf)", "cpu=samples", None),
    ("async-profiler ctimer", None, "event=ctimer"),
    ("async-profiler alloc", None, "event=alloc"),
    ("async-profiler lock", None, "event=lock"),
]
# Environment added to a configuration's JVM: the earlier default timer of cpu=samples (a perf
# event per thread), beside the POSIX CPU timers the runtime now takes at 10 ms.
CONFIG_ENV = {
    "cpu=samples with perf events (JVMPI_SAMPLER_TIMER=perf)": {"JVMPI_SAMPLER_TIMER": "perf"},
}

SERVER_XML = """<?xml version="1.0" encoding="UTF-8"?>
<Server port="-1" shutdown="SHUTDOWN">
  <Service name="Catalina">
    <Connector port="{port}" address="127.0.0.1" protocol="HTTP/1.1" connectionTimeout="60000"
               maxThreads="200" acceptCount="200"/>
    <Engine name="Catalina" defaultHost="localhost">
      <Host name="localhost" appBase="webapps" unpackWARs="false" autoDeploy="false"/>
    </Engine>
  </Service>
</Server>
"""

WEB_XML = """<?xml version="1.0" encoding="UTF-8"?>
<web-app xmlns="https://jakarta.ee/xml/ns/jakartaee" version="5.0" metadata-complete="true">
  <servlet><servlet-name>load</servlet-name>
    <servlet-class>benchserver.LoadServlet</servlet-class></servlet>
  <servlet-mapping><servlet-name>load</servlet-name><url-pattern>/load</url-pattern>
  </servlet-mapping>
</web-app>
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_base(base, jdk, port):
    """A private CATALINA_BASE with the servlet compiled into webapps/ROOT."""
    for d in ("conf", "logs", "temp", "work", "webapps/ROOT/WEB-INF/classes"):
        os.makedirs(os.path.join(base, d), exist_ok=True)
    with open(os.path.join(base, "conf", "server.xml"), "w") as f:
        f.write(SERVER_XML.format(port=port))
    for name in ("web.xml", "logging.properties", "catalina.properties"):
        for d in ("/etc/tomcat10", os.path.join(TOMCAT_HOME, "etc")):
            if os.path.isfile(os.path.join(d, name)):
                shutil.copy(os.path.join(d, name), os.path.join(base, "conf", name))
                break
    with open(os.path.join(base, "webapps/ROOT/WEB-INF/web.xml"), "w") as f:
        f.write(WEB_XML)
    subprocess.run([os.path.join(jdk, "bin", "javac"), "-nowarn", "-d",
                    os.path.join(base, "webapps/ROOT/WEB-INF/classes"), "-cp",
                    os.path.join(TOMCAT_HOME, "lib", "servlet-api.jar"),
                    os.path.join(HERE, "java", "benchserver", "LoadServlet.java")], check=True)


def wait_for_port(port, proc, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            time.sleep(0.2)
    return False


def start_tomcat(jdk, base, port, agent_args, env, log):
    cmd = [os.path.join(jdk, "bin", "java")] + agent_args + [
        "-Xms512m", "-Xmx512m",
        f"-Dcatalina.base={base}", f"-Dcatalina.home={TOMCAT_HOME}",
        f"-Djava.io.tmpdir={base}/temp",
        "-Djava.util.logging.manager=org.apache.juli.ClassLoaderLogManager",
        f"-Djava.util.logging.config.file={base}/conf/logging.properties",
        "-cp", f"{TOMCAT_HOME}/bin/bootstrap.jar:{TOMCAT_HOME}/bin/tomcat-juli.jar",
        "org.apache.catalina.startup.Bootstrap", "start"]
    proc = subprocess.Popen(cmd, cwd=base, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    return proc, cmd


def stop(proc, seconds):
    """SIGTERM (Tomcat's shutdown hook, HPROF's report), SIGKILL after `seconds`."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=seconds)
        return True
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return False


def process_cpu_seconds(pid):
    """User + system CPU of process `pid` so far, or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def context_switches(pid):
    """Voluntary + involuntary context switches of all threads of process `pid` so far, or None."""
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                total += sum(int(line.split()[1]) for line in f if "ctxt_switches" in line)
        except (OSError, ValueError, IndexError):
            pass  # a thread that ended meanwhile
    return total


def perf_event_fds(pid):
    """How many perf-event descriptors process `pid` holds (which CPU timer a profiler uses)."""
    try:
        return sum(1 for fd in os.listdir(f"/proc/{pid}/fd")
                   if "perf_event" in os.readlink(f"/proc/{pid}/fd/{fd}"))
    except OSError:
        return None


def cpu_samples_taken(log_path, jfr_path, jdk):
    """Stack samples of a run: the runtime's `signals=` (JVMPI_SAMPLER_STATS), or the
    jdk.ExecutionSample count of async-profiler's JFR file (`jfr summary`); None if neither."""
    try:
        with open(log_path) as f:
            m = re.search(r"jvmpi: cpu sampler: .*?signals=(\d+)", f.read())
        if m:
            return int(m.group(1))
    except OSError:
        pass
    if jfr_path and os.path.exists(jfr_path):
        out = subprocess.run([os.path.join(jdk, "bin", "jfr"), "summary", jfr_path],
                             capture_output=True, text=True).stdout
        m = re.search(r"^\s*jdk\.ExecutionSample\s+(\d+)", out, re.M)
        if m:
            return int(m.group(1))
    return None


def run_ab(port, clients, seconds, spin, items):
    """ab for `seconds`; returns (requests/s, p50 ms, p99 ms, failed, complete requests) or
    None."""
    url = f"http://127.0.0.1:{port}/load?spin={spin}&items={items}"
    # -t before -n: with -t alone ab stops at 50000 requests.
    cmd = ["ab", "-q", "-r", "-s", "60", "-c", str(clients), "-t", str(seconds), "-n", "10000000",
           url]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True,
                             timeout=seconds + 120).stdout
    except subprocess.TimeoutExpired:
        return None
    rps = re.search(r"Requests per second:\s+([\d.]+)", out)
    p50 = re.search(r"^\s+50%\s+(\d+)", out, re.M)
    p99 = re.search(r"^\s+99%\s+(\d+)", out, re.M)
    failed = re.search(r"Failed requests:\s+(\d+)", out)
    complete = re.search(r"Complete requests:\s+(\d+)", out)
    if not rps:
        return None
    return (float(rps.group(1)), float(p50.group(1)) if p50 else None,
            float(p99.group(1)) if p99 else None, int(failed.group(1)) if failed else 0,
            int(complete.group(1)) if complete else 0)


# --after-stop: (name, attached during the loaded phase).
AFTER_STOP_CONFIGS = [
    ("never attached (N)", False),
    ("attached, then stopped (P)", True),
    ("never attached, repeated (N')", False),
]


def hprof_cpu_samples(report_path):
    """The total of HPROF's CPU SAMPLES section in a text report, or None."""
    try:
        with open(report_path, errors="replace") as f:
            m = re.search(r"^CPU SAMPLES BEGIN \(total = (\d+)", f.read(), re.M)
    except OSError:
        return None
    return int(m.group(1)) if m else None


def after_stop_run(a, jvmprof, base, port, env, attach, report, log):
    """One Tomcat through the --after-stop timeline; returns (ab row after the stop or None,
    CPU seconds of the JVM while attached or None, problem or None)."""
    proc, _ = start_tomcat(a.jdk, base, port, [], env, log)
    try:
        if not wait_for_port(port, proc, 120):
            return None, None, "did not start"
        if a.warmup:
            run_ab(port, a.clients, a.warmup, a.spin, a.items)
        # The loaded phase: ab runs for --attached seconds; P is attached at its start and stopped
        # a second before its end, so both happen under load.
        loaded = threading.Thread(target=run_ab,
                                  args=(port, a.clients, a.attached, a.spin, a.items))
        loaded.start()
        attached_cpu, problem = None, None
        if attach:
            time.sleep(0.5)  # let ab's clients connect
            cpu_before = process_cpu_seconds(proc.pid)
            began = time.time()
            r = subprocess.run([jvmprof, "attach", str(proc.pid), f"{a.session},file={report}"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                problem = "attach failed: " + (r.stderr.strip().splitlines() or ["?"])[-1]
            else:
                time.sleep(max(0.0, a.attached - 1 - (time.time() - began)))
                r = subprocess.run([jvmprof, "stop", str(proc.pid)], capture_output=True,
                                   text=True)
                cpu_after = process_cpu_seconds(proc.pid)
                if r.returncode != 0:
                    problem = "stop failed: " + (r.stderr.strip().splitlines() or ["?"])[-1]
                elif cpu_before is not None and cpu_after is not None:
                    attached_cpu = cpu_after - cpu_before
        loaded.join()
        if problem:
            return None, None, problem
        # The untimed warm-up again: what a stop leaves to recompile is recompiled before the
        # measured run, as for N (which ran the same loaded phase without an attach).
        if a.warmup:
            run_ab(port, a.clients, a.warmup, a.spin, a.items)
        row = run_ab(port, a.clients, a.duration, a.spin, a.items)
        return row, attached_cpu, None if row is not None else "ab failed"
    finally:
        if not stop(proc, 180):
            print("a Tomcat had to be killed at exit", file=sys.stderr)


def after_stop_main(a, jvmprof, base, port, env, work):
    """--after-stop: N, P, N' in interleaved rounds (the order rotating), table after each."""
    rps = {name: [] for name, _ in AFTER_STOP_CONFIGS}
    sample_rates = []  # HPROF's samples per CPU-second of P's JVM while attached
    per_round = {"P/N": [], "N'/N": []}
    notes = {name: set() for name, _ in AFTER_STOP_CONFIGS}
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load_start = os.getloadavg()[0]
    n, p, n2 = (name for name, _ in AFTER_STOP_CONFIGS)
    for r in range(a.rounds):
        order = AFTER_STOP_CONFIGS[r % 3:] + AFTER_STOP_CONFIGS[:r % 3]
        this_round = {}
        for name, attach in order:
            report = os.path.join(work, f"after-stop-{r}.txt")
            log = open(os.path.join(work, "tomcat.log"), "w")
            row, attached_cpu, problem = after_stop_run(a, jvmprof, base, port, env, attach,
                                                        report, log)
            log.close()
            if problem:
                notes[name].add(problem)
            if row is not None:
                rps[name].append(row[0])
                this_round[name] = row[0]
                if row[3]:
                    notes[name].add(f"{row[3]} failed requests")
            taken = hprof_cpu_samples(report) if attach else None
            if taken is not None and attached_cpu:
                sample_rates.append(taken / attached_cpu)
            print(f"round {r + 1} {name}: {row}"
                  + (f"; attached: {taken} samples in {attached_cpu} CPU-s" if attach else ""),
                  file=sys.stderr, flush=True)
        if n in this_round:
            for key, other in (("P/N", p), ("N'/N", n2)):
                if other in this_round:
                    per_round[key].append(this_round[other] / this_round[n])

        def med(values):
            return statistics.median(values) if values else None

        def fmt(v, spec):
            return format(v, spec) if v is not None else "-"

        print(f"\n### After round {r + 1} of {a.rounds}\n")
        print(f"Started {started}; Tomcat 10 (Debian) on {a.jdk}, {a.clients} clients (ab); "
              f"each run: {a.warmup} s warm-up, {a.attached} s loaded phase (P attached with "
              f"`{a.session}` and stopped in it), {a.warmup} s warm-up, {a.duration} s measured; "
              f"request: spin={a.spin}, items={a.items}; {os.cpu_count()} CPUs; 1-minute load "
              f"average {load_start:.2f} at the start, {os.getloadavg()[0]:.2f} now.\n")
        print("| JVM | rps after the stop (median) | ratio of medians to N | "
              "median of per-round ratios | runs | notes |")
        print("|---|---:|---:|---:|---|---|")
        base_rps = med(rps[n])
        for name, _ in AFTER_STOP_CONFIGS:
            m = med(rps[name])
            ratio = m / base_rps if m is not None and base_rps else None
            key = {p: "P/N", n2: "N'/N"}.get(name)
            round_ratio = med(per_round[key]) if key else None
            print(f"| {name} | {fmt(m, '.0f')} | {fmt(ratio, '.3f')} | "
                  f"{fmt(round_ratio, '.3f')} | {', '.join(f'{x:.0f}' for x in rps[name])} | "
                  f"{'; '.join(sorted(notes[name]))} |")
        rate = med(sample_rates)
        print(f"\nP while attached: {fmt(rate, '.1f')} samples per CPU-second of the JVM "
              f"(median of {len(sample_rates)}; HPROF's CPU SAMPLES total over the JVM's user + "
              f"system CPU from attach to stop)", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True, help="build directory (lib/libhprof.so, jvmprof)")
    ap.add_argument("--jdk", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=int, default=20, help="measured seconds per run")
    ap.add_argument("--warmup", type=int, default=8, help="warm-up seconds per run")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--spin", type=int, default=100000, help="xorshift steps per request")
    ap.add_argument("--items", type=int, default=400, help="objects allocated per request")
    ap.add_argument("--asprof", default="", help="libasyncProfiler.so (its rows skipped if none)")
    ap.add_argument("--only", default="",
                    help="comma-separated substrings of configuration names, or =NAME for one "
                         "name exactly (no agent always runs)")
    ap.add_argument("--after-stop", action="store_true",
                    help="throughput after an attached session was stopped (N, P, N')")
    ap.add_argument("--attached", type=int, default=15,
                    help="--after-stop: seconds of the loaded phase P is attached in")
    ap.add_argument("--session", default="cpu=samples,heap=sites,monitor=y",
                    help="--after-stop: HPROF options of P's session (file= is added)")
    a = ap.parse_args()
    if a.attached < 3:
        ap.error("--attached must be at least 3")
    if "file=" in a.session or "net=" in a.session:
        ap.error("--session takes HPROF options without file= or net= (file= is added)")
    for n, v in (("rounds", a.rounds), ("duration", a.duration), ("clients", a.clients)):
        if v < 1:
            ap.error(f"--{n} must be at least 1")
    if a.warmup < 0:
        ap.error("--warmup must be 0 or more")
    # Tomcat runs in its CATALINA_BASE: a relative build directory would not find the agent there.
    a.build = os.path.abspath(a.build)
    lib = os.path.join(a.build, "lib")
    jvmprof = os.path.join(a.build, "src", "jvmprof", "jvmprof")
    for path in (os.path.join(lib, "libhprof.so"), jvmprof, os.path.join(a.jdk, "bin", "java")):
        if not os.path.exists(path):
            ap.error(f"{path} does not exist (build first, or give --build / --jdk)")
    configs = [c for c in CONFIGS if c[2] is None or a.asprof]
    if a.only:
        wanted = [w.strip() for w in a.only.split(",") if w.strip()]
        # "=NAME" asks for that configuration only; any other word for every name containing it.
        configs = [c for c in configs
                   if c[1] is None and c[2] is None
                   or any(c[0] == w[1:] if w.startswith("=") else w in c[0] for w in wanted)]

    work = tempfile.mkdtemp(prefix="server-bench-")
    port = free_port()
    make_base(os.path.join(work, "base"), a.jdk, port)
    base = os.path.join(work, "base")
    if a.after_stop:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: sys.exit(130))
        env = dict(os.environ)
        after_stop_main(a, jvmprof, base, port, env, work)
        if not os.environ.get("BENCH_KEEP"):
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}", file=sys.stderr)
        return
    serve_port, ui_port = free_port(), free_port()
    serve_log = open(os.path.join(work, "jvmprof-serve.log"), "w")
    serve = subprocess.Popen([jvmprof, "serve", "--port", str(serve_port), "--ui-port",
                              str(ui_port)], stdout=serve_log, stderr=subprocess.STDOUT,
                             start_new_session=True)
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = lib + (":" + env["LD_LIBRARY_PATH"]
                                    if env.get("LD_LIBRARY_PATH") else "")
    env["JVMPI_SAMPLER_STATS"] = "1"  # the runtime's sampler counts, on Tomcat's log at exit
    results = {c[0]: [] for c in configs}
    rates = {c[0]: [] for c in configs}  # stack samples per CPU-second of the JVM, whole run
    # The JVM's CPU (user + system) per request while measured: on a shared machine less
    # dependent than requests/s on how much of the CPUs the other work leaves to Tomcat.
    cpu_per_request = {c[0]: [] for c in configs}
    # Context switches of the JVM's threads per request while measured (what a perf-event timer
    # adds a cost to: bench/server/timer_switch_cost).
    switches_per_request = {c[0]: [] for c in configs}
    notes = {c[0]: set() for c in configs}
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load_start = os.getloadavg()[0]

    def print_table(rounds_done):
        print(f"\n### After round {rounds_done} of {a.rounds}\n", flush=True)
        def med(name, i):
            vals = [x[i] for x in results.get(name, []) if x[i] is not None]
            return statistics.median(vals) if vals else None

        base_rps, base_p50, base_p99 = (med("no agent", i) for i in range(3))

        def cpu_med(name):
            return statistics.median(cpu_per_request[name]) if cpu_per_request[name] else None

        base_cpu = cpu_med("no agent")

        def ratio(v, b):
            return f"{v / b:.2f}x" if v is not None and b else "-"

        print(f"Started {started}; {rounds_done} interleaved rounds; Tomcat 10 (Debian), "
              f"{a.clients} clients (ab), {a.duration} s measured after {a.warmup} s warm-up per "
              f"run; request: spin={a.spin}, items={a.items}; HPROF streams to jvmprof serve "
              f"(net=); {os.cpu_count()} CPUs; 1-minute load average {load_start:.2f} at the start, "
              f"{os.getloadavg()[0]:.2f} at the end.\n")
        print("| configuration | rps (median) | rps ratio | p50 ratio | p99 ratio | "
              "CPU ms per request | CPU ratio | switches per request | samples per CPU-s | "
              "runs: rps (p50 / p99 ms) | notes |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
        for name, _, _ in configs:
            rps, p50, p99 = (med(name, i) for i in range(3))
            runs = ", ".join(f"{x[0]:.0f} ({x[1]:.0f} / {x[2]:.0f})" if x[1] is not None
                             else f"{x[0]:.0f}" for x in results[name])
            rate = (f"{statistics.median(rates[name]):.1f}" if rates[name] else "")
            cpu = cpu_med(name)
            switches = (f"{statistics.median(switches_per_request[name]):.1f}"
                        if switches_per_request[name] else "-")
            cpu_cells = (f"{cpu * 1000:.2f} | {ratio(cpu, base_cpu)}" if cpu is not None
                         else "- | -") + f" | {switches}"
            print(f"| {name} | {rps:.0f} | {ratio(rps, base_rps)} | {ratio(p50, base_p50)} | "
                  f"{ratio(p99, base_p99)} | {cpu_cells} | {rate} | {runs} | "
                  f"{'; '.join(sorted(notes[name]))} |"
                  if rps is not None else
                  f"| {name} | - | - | - | - | {cpu_cells} | {rate} | {runs} | "
                  f"{'; '.join(sorted(notes[name]))} |")
        sys.stdout.flush()

    running = []  # the Tomcat of the current run, stopped should the benchmark be interrupted
    # SIGTERM (and SIGINT, which a background job may have ignored) end the benchmark through the
    # `finally` below, so no Tomcat or jvmprof serve is left behind.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: sys.exit(130))
    try:
        for r in range(a.rounds):
            for name, hprof, asprof in configs:
                agent = []
                out = None
                if hprof is not None and name.startswith("N"):
                    agent = [f"-agentlib:hprof={hprof},file={work}/java.hprof.txt"]
                elif hprof is not None:
                    agent = [f"-agentlib:hprof={hprof},net=127.0.0.1:{serve_port}"]
                elif asprof is not None:
                    out = os.path.join(work, f"asprof-{len(results[name])}.jfr")
                    agent = [f"-agentpath:{a.asprof}=start,{asprof},file={out}"]
                log_path = os.path.join(work, "tomcat.log")
                log = open(log_path, "w")
                run_env = dict(env, **CONFIG_ENV.get(name, {}))
                proc, _ = start_tomcat(a.jdk, base, port, agent, run_env, log)
                running.append(proc)
                row = None
                if not wait_for_port(port, proc, 120):
                    notes[name].add("did not start")
                else:
                    if a.warmup:
                        run_ab(port, a.clients, a.warmup, a.spin, a.items)
                    cpu_before = process_cpu_seconds(proc.pid)
                    switches_before = context_switches(proc.pid)
                    row = run_ab(port, a.clients, a.duration, a.spin, a.items)
                    cpu_after = process_cpu_seconds(proc.pid)
                    switches_after = context_switches(proc.pid)
                    if row is not None and row[4] and switches_before is not None \
                            and switches_after is not None:
                        switches_per_request[name].append(
                            (switches_after - switches_before) / row[4])
                    if row is None:
                        notes[name].add("ab failed")
                    elif row[4] and cpu_before is not None and cpu_after is not None:
                        cpu_per_request[name].append((cpu_after - cpu_before) / row[4])
                cpu_seconds = process_cpu_seconds(proc.pid)
                perf_fds = perf_event_fds(proc.pid)
                if not stop(proc, 180):
                    notes[name].add("killed at exit")
                running.remove(proc)
                log.close()
                if (hprof is not None and "cpu=samples" in hprof
                        or asprof in ("event=cpu", "event=ctimer")):
                    # Which timer: a perf-event descriptor per thread, or none (POSIX timers).
                    if perf_fds is not None:
                        notes[name].add("perf events" if perf_fds > 0 else "no perf events")
                    taken = cpu_samples_taken(log_path, out, a.jdk)
                    if taken is not None and cpu_seconds:
                        rates[name].append(taken / cpu_seconds)
                if row is not None:
                    results[name].append(row)
                    if row[3]:
                        notes[name].add(f"{row[3]} failed requests")
                print(f"round {r + 1} {name}: {row}", file=sys.stderr, flush=True)
            print_table(r + 1)
    finally:
        for proc in running:
            stop(proc, 30)
        stop(serve, 30)
        serve_log.close()

    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
