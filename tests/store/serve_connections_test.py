#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A JVM's connection history survives a restarted `jvmprof serve --store`.

A simulated agent (what HPROF with net=,period= sends in its text format: header, IDENTITY with
the agent's connection=N, a TRACE, PERIOD blocks) connects to serve #1 with --store; once its
connection's row is committed (read from the SQLite file), serve #1 is killed with SIGKILL, so it
never writes that connection's end. Serve #2 starts on the same store and the agent reconnects
(connection=2): serve #2's /api/jvms must show the JVM with both connections in order, the first
from the store and ended ("collector stopped", end time unknown, not counted as a drop), the
second live. The agent then closes its connection (its end is written: "closed by agent" with its
periods), serve #2 stops cleanly, serve #3 starts on the store and the agent reconnects
(connection=3): all three in order, the second with its recorded end and periods; `jvmprof query
--jvms --connections` lists the three under the JVM. In headless Chromium (when installed) serve
#3's page lists the stored connections under the JVM and its history table shows them with their
collectors. A serve without --store shows only its own connection, as before.
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "jvmprof"))
from browser_support import browser_missing, stop_serve  # noqa: E402  (shared with the browser tests)

failures = []

HEADER = "JAVA PROFILE 1.0.1, created Sat Nov 28 06:00:00 2026\n\nHeader text.\n--------\n\n"
START_MS = int(time.time() * 1000) - 60_000
PID = 4711


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED: " + what)
    return cond


def wait_until(pred, seconds=60):
    """Polls `pred` until it holds or `seconds` pass (a bound for a loaded machine, not a
    timing assertion)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if pred():
                return True
        except Exception:  # a page redrawing, a store file being made: not yet
            pass
        time.sleep(0.05)
    return pred()


def start_serve(jvmprof, work, store):
    args = [jvmprof, "serve", "--port", "0", "--ui-port", "0"]
    if store:
        args += ["--store", store]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, TMPDIR=work))
    port = url = None
    for line in proc.stdout:
        m = re.search(r"net=127\.0\.0\.1:(\d+)", line)
        if m:
            port = int(m.group(1))
        m = re.search(r"UI: (http://\S+)", line)
        if m:
            url = m.group(1)
            break
    if port is None or url is None:
        proc.kill()
        raise RuntimeError("jvmprof serve did not start: %r" % proc.stderr.read())
    proc.port = port
    proc.url = url
    proc.base = url.split("/?")[0]
    proc.token = url.split("token=")[1]
    return proc


def api(serve, path):
    req = urllib.request.Request(serve.base + path, headers={"X-Jvmprof-Token": serve.token})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read().decode())


def the_jvm(serve):
    for j in api(serve, "/api/jvms"):
        if j["identity"].get("pid") == PID:
            return j
    return None


def connect_agent(serve, connection, periods):
    """The agent's connection number `connection`, with `periods` PERIOD blocks sent."""
    s = socket.create_connection(("127.0.0.1", serve.port), timeout=30)
    identity = ("IDENTITY: pid=%d host=restart-test main=app.Main vm=17.0.9 start=%d "
                "labels=service=checkout" % (PID, START_MS))
    if connection > 1:
        identity += " connection=%d" % connection
    text = HEADER + identity + "\nTRACE 300001:\n\tapp.Hot.spin(Hot.java:10)\n" \
        "\tapp.Main.main(Main.java:3)\n"
    for seq in range(1, periods + 1):
        start = START_MS + (connection * 100 + seq) * 1000
        text += ("PERIOD BEGIN: seq=%d start=%d end=%d\nCPU SAMPLES: total=5 rows=1\n300001 5\n"
                 "PERIOD END: seq=%d\n" % (seq, start, start + 1000, seq))
    s.sendall(text.encode())
    return s


def stored_rows(db):
    """(connection, ended_ms, end_cause, periods) of every stored connection, in order."""
    c = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=30)
    try:
        return c.execute("SELECT connection, ended_ms, end_cause, periods FROM connections "
                         "ORDER BY connection").fetchall()
    except sqlite3.OperationalError:
        return []  # not made yet
    finally:
        c.close()


def check_browser(serve, work, screenshots):
    """Serve #3's page: the JVM's row lists the two stored connections as text under it, and its
    connection history table shows them before the live one, with their collectors."""
    from browser_support import rows_of, shot, start_chromium, texts  # noqa: E402
    driver = start_chromium(work, "1300,900")
    try:
        driver.get(serve.url)
        check(wait_until(lambda: any("3 connections" in t for t in texts(
            driver, "#profile-list li.jvm .jvm-name")), 60),
            "the list shows the JVM with 3 connections: %r" % texts(driver, "#profile-list li"))
        stored = texts(driver, "#profile-list li.jvm ul.connections li.stored")
        check(len(stored) == 2 and "collector stopped" in stored[0] and
              "closed by agent" in stored[1],
              "the two stored connections are listed under the JVM: %r" % stored)
        driver.execute_script("document.querySelector('#profile-list li.jvm .jvm-name').click()")
        rows = []

        def three_rows():
            rows[:] = rows_of(driver, "#connection-history")
            return len(rows) == 3
        check(wait_until(three_rows, 60) and rows[0][3] == "collector stopped" and
              rows[0][2] == "?" and rows[0][8].startswith("earlier: ") and
              rows[1][3] == "closed by agent" and rows[1][5] == "2" and
              rows[2][0].startswith("3") and rows[2][3] == "connected" and
              rows[2][8] == "this serve",
              "the connection history: stored 1 and 2, then 3 live: %r" % rows)
        if screenshots:
            shot(driver, screenshots, "jvmprof-serve-stored-connections.png")
    finally:
        driver.quit()


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--jvmprof", required=True)
    ap.add_argument("--screenshots", help="where the page's screenshot goes")
    a = ap.parse_args()
    browser_skip = browser_missing()
    work = tempfile.mkdtemp(prefix="serve-connections-")
    db = os.path.join(work, "profiles.db")
    procs = []
    try:
        # Serve #1: the agent's first connection, recorded at its beginning; then SIGKILL.
        serve1 = start_serve(a.jvmprof, work, db)
        procs.append(serve1)
        agent = connect_agent(serve1, 1, 1)
        # Written at its beginning: no end yet (its periods so far are only counted at the end).
        check(wait_until(lambda: [r[:3] for r in stored_rows(db)] == [(1, None, None)]),
              "serve #1 records the first connection when it begins: %r" % stored_rows(db))
        serve1.send_signal(signal.SIGKILL)
        serve1.communicate()
        agent.close()

        # Serve #2 on the same store: the agent reconnects with connection=2.
        serve2 = start_serve(a.jvmprof, work, db)
        procs.append(serve2)
        agent = connect_agent(serve2, 2, 2)
        jvm = {}

        def two_connections():
            j = the_jvm(serve2)
            jvm.clear()
            jvm.update(j or {})
            return j is not None and len(j["connections"]) == 2 and \
                j["connections"][1].get("periods") == 2
        check(wait_until(two_connections),
              "serve #2 shows the JVM's two connections: %r" % jvm)
        if jvm.get("connections") and len(jvm["connections"]) == 2:
            first, second = jvm["connections"]
            check(first["connection"] == 1 and first["stored"] and first["session"] == 0,
                  "the first connection comes from the store: %r" % first)
            check(first["endCause"] == "collector stopped" and not first["endKnown"] and
                  first["endedMs"] == 0 and first["state"] == "ended",
                  "the connection live when serve #1 died shows as ended by its collector: %r"
                  % first)
            check(first["collector"].endswith("pid %d" % serve1.pid),
                  "the first connection names serve #1 as its collector: %r" % first)
            check(second["connection"] == 2 and not second["stored"] and
                  second["state"] == "connected" and second["endedMs"] == 0 and
                  second["session"] == jvm["current"],
                  "the second connection is live and current: %r" % second)
            check(jvm["connects"] == 2 and jvm["reconnects"] == 1 and jvm["drops"] == 0 and
                  jvm["connected"], "two connects, one reconnect, no drop, connected: %r" % jvm)

        # Its end is written when it ends; serve #2 stops cleanly.
        agent.close()
        check(wait_until(lambda: len(stored_rows(db)) == 2 and stored_rows(db)[1][1] is not None),
              "serve #2 records the second connection's end: %r" % stored_rows(db))
        rows = stored_rows(db)
        check(len(rows) == 2 and rows[1][2] == "closed by agent" and rows[1][3] == 2,
              "the second connection ended closed by the agent after 2 periods: %r" % rows)
        stop_serve(serve2)

        # Serve #3: connection=3, after both stored ones.
        serve3 = start_serve(a.jvmprof, work, db)
        procs.append(serve3)
        agent = connect_agent(serve3, 3, 1)
        check(wait_until(lambda: (the_jvm(serve3) or {}).get("connects") == 3),
              "serve #3 shows the JVM's three connections: %r" % the_jvm(serve3))
        j = the_jvm(serve3) or {"connections": []}
        check([c["connection"] for c in j["connections"]] == [1, 2, 3] and
              [c["stored"] for c in j["connections"]] == [True, True, False],
              "connections 1 and 2 from the store, then 3 live: %r" % j["connections"])
        if len(j["connections"]) == 3:
            second = j["connections"][1]
            check(second["endCause"] == "closed by agent" and second["endKnown"] and
                  second["endedMs"] > second["connectedMs"] > 0 and second["periods"] == 2 and
                  second["collector"].endswith("pid %d" % serve2.pid),
                  "the second connection's recorded end: %r" % second)
            check(j["connections"][2]["gapMs"] > 0,
                  "the gap before connection 3 is known from the stored end: %r" % j)
        if browser_skip is None:
            check_browser(serve3, work, a.screenshots)
        else:
            print("note: the browser part did not run: " + browser_skip)
        agent.close()
        stop_serve(serve3)

        # jvmprof query lists them under the JVM; serve #3's end was written as it stopped.
        r = subprocess.run([a.jvmprof, "query", "--store", db, "--jvms", "--connections"],
                           capture_output=True, text=True, timeout=120)
        lines = [l.strip() for l in r.stdout.splitlines() if l.startswith("  connection ")]
        check(r.returncode == 0 and len(lines) == 3, "query --jvms --connections: %r %r"
              % (r.stdout, r.stderr))
        if len(lines) == 3:
            check(lines[0].startswith("connection 1 ") and "(no end recorded)" in lines[0] and
                  "(collector %s pid %d)" % (socket.gethostname(), serve1.pid) in lines[0],
                  "query: connection 1 without an end, held by serve #1: %r" % lines[0])
            check(lines[1].startswith("connection 2 ") and
                  "closed by agent, 2 periods" in lines[1], "query: connection 2: %r" % lines[1])
            check(lines[2].startswith("connection 3 ") and "(no end recorded)" not in lines[2],
                  "query: connection 3 ended: %r" % lines[2])
        r = subprocess.run([a.jvmprof, "query", "--store", db, "--connections"],
                           capture_output=True, text=True, timeout=120)
        check(r.returncode == 2 and r.stderr.count("\n") == 1,
              "--connections without --jvms is one error line: %r" % r.stderr)

        # Without --store, as before: only the connection this serve holds.
        serve4 = start_serve(a.jvmprof, work, None)
        procs.append(serve4)
        agent = connect_agent(serve4, 4, 1)
        check(wait_until(lambda: (the_jvm(serve4) or {}).get("connects") == 1),
              "a serve without --store shows its own connection only: %r" % the_jvm(serve4))
        agent.close()
        stop_serve(serve4)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
