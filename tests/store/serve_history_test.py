#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A JVM streams period= profiles to `jvmprof serve --store`; `jvmprof query` over that store
afterwards must give the program's known answer.

hproftest.PeriodicWork allocates exactly 100 PeriodicWork$Item objects per round and prints how
many it made; with exact allocation counting (heap=sites,sample=0) the stored periods' allocated
objects of that class, summed by `jvmprof query`, must equal the printed count. The JVM carries a
label, and a query for another label value must find nothing. The store is reopened by a second
serve, which must not change the answer. Exit 77 when the JDK is missing."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED: " + what)


def start_serve(jvmprof, db):
    serve = subprocess.Popen([jvmprof, "serve", "--port", "0", "--ui-port", "0", "--store", db],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    port = None
    for line in serve.stdout:
        m = re.search(r"net=127\.0\.0\.1:(\d+)", line)
        if m:
            port = int(m.group(1))
        if "UI:" in line:
            break
    return serve, port


def stop_serve(serve):
    # serve blocks SIGTERM until its signal thread waits for it; repeat until it has gone.
    for _ in range(600):
        serve.terminate()
        try:
            out, err = serve.communicate(timeout=0.5)
            return out, err
        except subprocess.TimeoutExpired:
            continue
    serve.kill()
    return serve.communicate()


def item_objects(jvmprof, db, match):
    r = subprocess.run([jvmprof, "query", "--store", db, "--from", "-1h", "--to", "now",
                        "--match", match, "--measure", "alloc-objects", "-o", "-"],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "query --match %s: %r" % (match, r.stderr))
    total = 0
    for line in r.stdout.splitlines():
        stack, _, weight = line.rpartition(" ")
        if stack.split(";")[-1] == "hproftest.PeriodicWork$Item":
            total += int(weight)
    return total


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

    work = tempfile.mkdtemp(prefix="serve-history-")
    db = os.path.join(work, "history.db")
    serve, port = start_serve(a.jvmprof, db)
    check(port is not None, "serve printed its agent port")
    if port is None:
        stop_serve(serve)
        return 1
    opts = ("heap=sites,sample=0,period=1,label=service=checkout;env=test,net=127.0.0.1:%d" % port)
    started = time.time()
    r = subprocess.run([java, "-agentpath:%s=%s" % (a.hprof, opts), "-cp", a.classes,
                        "hproftest.PeriodicWork", "2500"], capture_output=True, text=True,
                       timeout=300)
    check(r.returncode == 0, "the program ran: %r" % r.stderr[-2000:])
    m = re.search(r"PERIODIC rounds=(\d+) items=(\d+)", r.stdout)
    check(m is not None, "the program printed its count: %r" % r.stdout)
    items = int(m.group(2)) if m else -1
    out, err = stop_serve(serve)
    stored = re.search(r"profile history: (\d+) periods stored, (\d+) dropped", out)
    check(stored is not None and int(stored.group(1)) >= 2 and stored.group(2) == "0",
          "serve stored the JVM's periods: %r %r" % (out, err))

    check(item_objects(a.jvmprof, db, "service=checkout") == items,
          "stored periods add up to the %d Items the program made" % items)
    check(item_objects(a.jvmprof, db, "service=other") == 0, "another label finds nothing")
    r = subprocess.run([a.jvmprof, "query", "--store", db, "--jvms"], capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 0 and "hproftest.PeriodicWork" in r.stdout and "service=checkout" in
          r.stdout, "the stored JVM is named by its identity and labels: %r" % r.stdout)

    # A second serve reopens the store: the same answer afterwards.
    serve, _ = start_serve(a.jvmprof, db)
    stop_serve(serve)
    check(item_objects(a.jvmprof, db, "env=test") == items, "same answer after serve restarted")

    print("took %.1f s" % (time.time() - started))
    if failures:
        print("%d failure(s); work dir %s" % (len(failures), work))
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print("serve history test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
