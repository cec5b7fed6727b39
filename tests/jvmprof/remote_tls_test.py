#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A JVM profiles into a `jvmprof serve` on another host, over TLS with a token.

The "other host" is a network namespace: the test makes two (`ip netns add`), joins them with a
veth pair and addresses of its own, runs `jvmprof serve --bind <its address> --tls-cert
--tls-key --agent-token --store` in one and JVMs with HPROF (period=1,nettls=,nettoken=) in the
other, with a CA and a server certificate made here by `openssl req` / `openssl x509`.

 - the happy path: hproftest.PeriodicWork allocates exactly 100 PeriodicWork$Item objects per
   round and prints how many it made; with exact counting (heap=sites,sample=0) the periods
   serve stored for its label must add up to that count (`jvmprof query`);
 - a collector certificate from another CA: the agent refuses it, the program runs and exits 0,
   nothing of it is stored;
 - a wrong token: serve refuses the agent (log line, counter), nothing of it is stored;
 - a plain-text agent stream to the TLS port is refused (log line, counter);
 - net= to that address without nettls= is refused by the agent with one line, and serve
   --bind there without TLS is refused too;
 - a collector restarted while a JVM runs: the agent reconnects, with a new TLS handshake and
   its token again, and the new serve receives its periods.

The namespaces are deleted at the end whatever happens. Exit 77 (skipped) when the JDK or
openssl is missing or network namespaces cannot be made (not root, no CAP_NET_ADMIN)."""
import argparse
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from browser_support import stop_serve as end_serve_process
from netns_support import Namespaces, make_certificates, run, write_secret

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED: " + what)
    return cond


def item_objects(jvmprof, db, match):
    r = run([jvmprof, "query", "--store", db, "--from", "-1h", "--to", "now", "--match", match,
             "--measure", "alloc-objects", "-o", "-"], timeout=120)
    total = 0
    for line in r.stdout.splitlines():
        stack, _, weight = line.rpartition(" ")
        if stack.split(";")[-1] == "hproftest.PeriodicWork$Item":
            total += int(weight)
    return total


def start_serve(ns, jvmprof, work, token, db, port):
    """serve in the collector's namespace on PORT (0: any); returns it and its agent port."""
    serve = subprocess.Popen(
        ns.exec_in(ns.collector,
                   [jvmprof, "serve", "--bind", ns.COLLECTOR_IP, "--port", str(port),
                    "--ui-port", "0", "--tls-cert", os.path.join(work, "server.pem"),
                    "--tls-key", os.path.join(work, "server.key"), "--agent-token", token,
                    "--store", db]),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = queue.Queue()
    found = None
    for line in serve.stdout:
        m = re.search(r"net=%s:(\d+)" % re.escape(ns.COLLECTOR_IP), line)
        if m:
            found = int(m.group(1))
        if "UI:" in line:
            break
    # The rest of its output, line by line, for wait_for_line; the thread ends with serve.
    threading.Thread(target=lambda: [lines.put(l) for l in serve.stdout] + [lines.put(None)],
                     daemon=True).start()
    serve.lines = lines
    return serve, found


def wait_for_line(serve, text, deadline):
    """True once serve printed a line with TEXT; False if it ended or DEADLINE passed."""
    while time.time() < deadline:
        try:
            line = serve.lines.get(timeout=max(0.1, deadline - time.time()))
        except queue.Empty:
            return False
        if line is None:
            return False
        serve.seen.append(line)
        if text in line:
            return True
    return False


def stop_serve(serve):
    out, err = end_serve_process(serve)
    rest = []
    while True:
        try:
            line = serve.lines.get(timeout=10)
        except queue.Empty:
            break
        if line is None:
            break
        rest.append(line)
    return "".join(serve.seen + rest) + (out or ""), err


def plain_text_agent(port):
    """What an agent without TLS sends, from the agent's namespace: True when serve closes it."""
    code = ("import socket,sys\n"
            "s=socket.create_connection(('%s',%d),timeout=30)\n"
            "s.sendall(b'HPROF-TOKEN agent-secret\\nJAVA PROFILE 1.0.1\\n')\n"
            "try:\n"
            "  while s.recv(4096): pass\n"
            "except ConnectionResetError: pass\n"
            "print('closed')\n") % (Namespaces.COLLECTOR_IP, port)
    return code


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--jvmprof", required=True)
    ap.add_argument("--hprof", required=True, help="libhprof.so")
    ap.add_argument("--classes", required=True, help="java/hprof-tests classes")
    ap.add_argument("--jdk", required=True)
    a = ap.parse_args()
    java = os.path.join(a.jdk, "bin", "java")
    if not os.access(java, os.X_OK):
        print("skipped: no JDK at " + a.jdk)
        return 77
    if shutil.which("openssl") is None or shutil.which("ip") is None:
        print("skipped: openssl or ip (iproute2) is not installed")
        return 77

    work = tempfile.mkdtemp(prefix="remote-tls-")
    ns = Namespaces()
    serve = None
    try:
        why = ns.make()
        if why is not None:
            print("skipped: cannot make network namespaces (%s)" % why)
            return 77
        make_certificates(work)
        token, wrong = os.path.join(work, "token"), os.path.join(work, "wrong-token")
        write_secret(token, "agent-secret")
        write_secret(wrong, "not-the-secret")
        db = os.path.join(work, "history.db")

        # serve on a non-loopback address without TLS: refused with one line.
        r = run(ns.exec_in(ns.collector, [a.jvmprof, "serve", "--bind", ns.COLLECTOR_IP,
                                          "--port", "0", "--ui-port", "0"]))
        check(r.returncode == 2 and "not a loopback address" in r.stderr and
              len(r.stderr.strip().splitlines()) == 1,
              "serve --bind without TLS refused with one line: %r" % r.stderr)

        # The namespace is the test's own: a fixed port is free, and a restarted serve gets
        # the same one.
        port = 7370
        serve, bound = start_serve(ns, a.jvmprof, work, token, db, port)
        serve.seen = []
        if not check(bound == port, "serve printed its agent port"):
            return 1
        net = "net=%s:%d" % (ns.COLLECTOR_IP, port)

        def agent_command(label, extra, seconds_ms):
            opts = "heap=sites,sample=0,period=1,label=test=%s,%s,%s" % (label, net, extra)
            return ns.exec_in(ns.agent, [java, "-agentpath:%s=%s" % (a.hprof, opts), "-cp",
                                         a.classes, "hproftest.PeriodicWork", str(seconds_ms)])

        def agent(label, extra, seconds_ms):
            return run(agent_command(label, extra, seconds_ms), timeout=300)

        started = time.time()
        ca = os.path.join(work, "ca.pem")
        # The happy path: TLS, the token, periods delivered.
        r = agent("happy", "nettls=%s,nettoken=%s" % (ca, token), 2500)
        check(r.returncode == 0, "the program ran over TLS: %r" % r.stderr[-2000:])
        m = re.search(r"PERIODIC rounds=(\d+) items=(\d+)", r.stdout)
        check(m is not None, "the program printed its count: %r" % r.stdout)
        items = int(m.group(2)) if m else -1
        check("hprof: error" not in r.stderr, "no agent error over TLS: %r" % r.stderr)

        # A collector certificate from another CA: refused by the agent; the program runs on.
        r = agent("wrong-ca", "nettls=%s,nettoken=%s" % (os.path.join(work, "other-ca.pem"),
                                                         token), 1000)
        check(r.returncode == 0 and "PERIODIC rounds=" in r.stdout,
              "the program ran with the collector's certificate refused: %r" % r.stderr[-2000:])
        check("certificate not accepted" in r.stderr,
              "the agent said why it refused the collector: %r" % r.stderr)

        # A wrong token: the collector refuses the agent; the program runs on.
        r = agent("wrong-token", "nettls=%s,nettoken=%s" % (ca, wrong), 1000)
        check(r.returncode == 0 and "PERIODIC rounds=" in r.stdout,
              "the program ran with its token refused: %r" % r.stderr[-2000:])

        # The token file must be readable by its owner only.
        os.chmod(wrong, 0o640)
        r = agent("open-token", "nettls=%s,nettoken=%s" % (ca, wrong), 100)
        check(r.returncode == 1 and "readable by nobody else" in r.stderr,
              "a token file readable by its group refused: %r" % r.stderr[-2000:])

        # No nettls= to a non-loopback collector: refused by the agent, with one line.
        r = agent("plain", "nettoken=%s" % token, 100)
        check(r.returncode == 1 and "is not a loopback address" in r.stderr,
              "net= beyond loopback without nettls= refused: %r" % r.stderr[-2000:])

        # A plain-text stream to the TLS port: closed by serve.
        r = run(ns.exec_in(ns.agent, [sys.executable, "-c", plain_text_agent(port)]), timeout=60)
        check(r.stdout.strip() == "closed", "serve closed a plain-text agent: %r" % r.stderr)

        out, err = stop_serve(serve)
        serve = None
        check("connected over TLS" in out, "serve took the agent over TLS: %r" % out)
        check(re.search(r"refused: wrong token", out) is not None,
              "serve logged the wrong token: %r" % out)
        check(re.search(r"refused: TLS handshake failed: .*wrong version number", out) is not None,
              "serve logged the agent without TLS: %r" % out)
        c = re.search(r"agents: (\d+) admitted, (\d+) refused without TLS, (\d+) without the "
                      r"token", out)
        # The refused agents retry with backoff while their program runs, so each refusal
        # counts at least once; only the happy JVM is admitted.
        check(c is not None and int(c.group(1)) == 1 and int(c.group(2)) >= 2 and
              int(c.group(3)) >= 1, "serve's counters: %r" % out)

        stored = item_objects(a.jvmprof, db, "test=happy")
        check(stored == items, "the stored periods add up to the %d Items the program made "
              "(%d)" % (items, stored))
        check(item_objects(a.jvmprof, db, "test=wrong-ca") == 0, "nothing from the wrong CA")
        check(item_objects(a.jvmprof, db, "test=wrong-token") == 0, "nothing from a wrong token")

        # A collector restarted while the JVM runs: a new handshake and the token again, and
        # the new serve (a store of its own) receives periods.
        first_db, second_db = os.path.join(work, "first.db"), os.path.join(work, "second.db")
        serve, _ = start_serve(ns, a.jvmprof, work, token, first_db, port)
        serve.seen = []
        jvm = subprocess.Popen(agent_command("restart", "nettls=%s,nettoken=%s" % (ca, token),
                                             8000),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        check(wait_for_line(serve, "connected over TLS", time.time() + 120),
              "the first serve took the JVM")
        stop_serve(serve)
        serve, _ = start_serve(ns, a.jvmprof, work, token, second_db, port)
        serve.seen = []
        # The JVM runs 8 s; the agent retries at most 10 s apart after 100 ms doubling, so it is
        # back within about 2 s of the new serve listening unless the machine is very slow.
        reconnected = wait_for_line(serve, "connected over TLS", time.time() + 120)
        check(reconnected, "the JVM reconnected to the restarted serve")
        out, err = jvm.communicate(timeout=300)
        check(jvm.returncode == 0 and "PERIODIC rounds=" in out,
              "the program ran through the restart: %r" % err[-2000:])
        check("reconnected to" in err, "the agent says it reconnected: %r" % err[-2000:])
        out, _ = stop_serve(serve)
        serve = None
        check("refused:" not in out, "the reconnect was not refused: %r" % out)
        check(item_objects(a.jvmprof, second_db, "test=restart") > 0,
              "the restarted serve received periods after the reconnect")
        print("took %.1f s" % (time.time() - started))
    finally:
        if serve is not None:
            end_serve_process(serve)
        ns.delete()
    if failures:
        print("%d failure(s); work dir %s" % (len(failures), work))
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print("remote TLS test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
