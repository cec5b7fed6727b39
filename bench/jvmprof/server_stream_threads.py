#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Where a loaded Tomcat's CPU goes under HPROF's net= and period=: Debian's Tomcat 10 serving
bench/server's LoadServlet to ab (driven as bench/server/bench.py drives it), with
cpu=samples,period=PERIOD,net= into a running `jvmprof serve`; over the measured window, the CPU
of each group of the JVM's threads (by name, from /proc/PID/task/*/schedstat): HPROF's stream
threads (`HPROF net`, `HPROF period`, `HPROF listener`), HPROF's sampler, Tomcat's request threads
(`http-nio-*`), the JIT compilers, GC, and the rest; per request and as a share of the JVM's CPU.
A mechanism measure: what the stream threads themselves cost, which a whole-process CPU ratio on
a shared machine cannot resolve."""
import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "server"))
import bench as server  # noqa: E402


def group(comm):
    if comm in ("HPROF net", "HPROF period", "HPROF listener"):
        return comm
    if comm.startswith("HPROF"):
        return "HPROF other (" + comm + ")"
    if comm.startswith("http-nio"):
        return "Tomcat http-nio threads"
    if comm.startswith("C1 ") or comm.startswith("C2 "):
        return "JIT compilers"
    if comm.startswith("GC ") or comm.startswith("G1 "):
        return "GC"
    return "other"


def threads_cpu(pid):
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                comm = f.read().strip()
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                out[tid] = (comm, int(f.read().split()[0]) / 1e9)
        except (OSError, ValueError, IndexError):
            pass
    return out


def positive(text):
    v = int(text)
    if v < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="build directory (lib/, src/jvmprof/jvmprof)")
    ap.add_argument("--jdk", default="/usr/lib/jvm/java-17-openjdk-amd64")
    ap.add_argument("--options", default="cpu=samples,period=10",
                    help="HPROF options before net= (default cpu=samples,period=10)")
    ap.add_argument("--duration", type=positive, default=30, help="measured seconds")
    ap.add_argument("--warmup", type=positive, default=5)
    ap.add_argument("--clients", type=positive, default=50)
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    jvmprof = os.path.join(a.build, "src", "jvmprof", "jvmprof")
    if not os.path.exists(os.path.join(a.build, "lib", "libhprof.so")) or \
            not os.path.exists(jvmprof):
        ap.error("no lib/libhprof.so or src/jvmprof/jvmprof under " + a.build)
    if not os.path.exists(os.path.join(server.TOMCAT_HOME, "lib", "catalina.jar")):
        ap.error("Debian's tomcat10 is not installed (bench/server/run-server-bench.sh installs it)")
    work = tempfile.mkdtemp(prefix="server-stream-threads-")
    port, serve_port, ui_port = server.free_port(), server.free_port(), server.free_port()
    base = os.path.join(work, "base")
    server.make_base(base, a.jdk, port)
    serve = subprocess.Popen([jvmprof, "serve", "--port", str(serve_port), "--ui-port",
                              str(ui_port)], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(a.build, "lib"))
    log = open(os.path.join(work, "tomcat.log"), "w")
    proc, _ = server.start_tomcat(a.jdk, base, port,
                                  ["-agentlib:hprof=%s,net=127.0.0.1:%d" % (a.options, serve_port)],
                                  env, log)
    try:
        if not server.wait_for_port(port, proc, 120):
            raise SystemExit("Tomcat did not start")
        server.run_ab(port, a.clients, a.warmup, 100000, 400)
        before = threads_cpu(proc.pid)
        start = time.monotonic()
        row = server.run_ab(port, a.clients, a.duration, 100000, 400)
        wall = time.monotonic() - start
        after = threads_cpu(proc.pid)
    finally:
        server.stop(proc, 180)
        server.stop(serve, 30)
        log.close()
    if row is None:
        raise SystemExit("ab failed")
    requests = row[4]
    groups = {}
    for tid, (comm, cpu) in after.items():
        groups[group(comm)] = groups.get(group(comm), 0.0) + cpu - before.get(tid, (comm, 0.0))[1]
    total = sum(groups.values())
    print("%s,net=; %d requests in %.1f s (%.1f requests/s), %d clients; JVM threads' CPU %.2f s "
          "(%.3f ms per request); load average %.1f" % (
              a.options, requests, wall, row[0], a.clients, total, 1000 * total / requests,
              os.getloadavg()[0]))
    print("| threads | CPU s | ms per request | share of the JVM's CPU |")
    print("|---|---:|---:|---:|")
    for name, cpu in sorted(groups.items(), key=lambda kv: -kv[1]):
        print("| %s | %.4f | %.4f | %.3f %% |" % (name, cpu, 1000 * cpu / requests,
                                                  100 * cpu / total))
    return 0


if __name__ == "__main__":
    sys.exit(main())
