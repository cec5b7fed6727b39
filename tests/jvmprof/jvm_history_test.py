#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Each JVM's connection history and the agent port's counters, in `jvmprof serve`'s API and UI.

A JVM (hproftest.PeriodicWork under HPROF with period=1,net=,nettoken=) streams into serve
(--agent-token) through a TCP proxy of the test's own. After two periods the test cuts the
proxy's connection (serve's side with a reset, the agent's side closed): the agent reconnects
through the proxy, and serve's /api/jvms must show one JVM with two connections — the first
ended by a reset, the second (connection=2) connected and delivering periods — one reconnect and
one drop. A command sent to the JVM's current connection is answered. A client with a wrong
token is refused, and /api/agents counts it (2 admitted, 1 refused without the token). In
headless Chromium (when installed) the page's status line shows the refusal and the list shows
the JVM with its two connections and the connection history table the reset. At last the
program ends (its standard input closes): its second connection ends as "agent exited", and the
program's output and exit code are as without the proxy.
"""
import argparse
import json
import os
import re
import select
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_support import (check, finish, shot, skip_reason, start_chromium, stop_serve,  # noqa: E402
                             texts, wait_until)


class Proxy:
    """Forwards each connection to `target`; cut() ends the current ones (the target's side with
    a reset, the client's side closed) and keeps accepting, so a client can reconnect. One thread
    per connection owns both sockets (a socket closed under another thread's recv would stay
    open until that recv returned)."""

    def __init__(self, target):
        self.target = target
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(4)
        self.port = self.listener.getsockname()[1]
        self.generation = 0  # cut() counts up; a connection of an older generation ends
        self.accepted = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            self.accepted += 1
            threading.Thread(target=self._pump, args=(client, server, self.generation),
                             daemon=True).start()

    def _pump(self, client, server, generation):
        peer = {client: server, server: client}
        try:
            while self.generation == generation:
                ready, _, _ = select.select([client, server], [], [], 0.1)
                for src in ready:
                    data = src.recv(65536)
                    if not data:
                        raise EOFError
                    peer[src].sendall(data)
            # Cut: a reset towards the target, a plain close towards the client.
            server.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except (OSError, EOFError):
            pass
        server.close()
        client.close()

    def cut(self):
        self.generation += 1

    def close(self):
        self.listener.close()
        self.cut()


def start_serve(jvmprof, token, work):
    proc = subprocess.Popen([jvmprof, "serve", "--port", "0", "--ui-port", "0", "--agent-token",
                             token], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, TMPDIR=work))
    agent_line = proc.stdout.readline()
    while agent_line.startswith("jvmprof serve: removed "):
        agent_line = proc.stdout.readline()
    ui_line = proc.stdout.readline()
    agent = re.search(r"net=127\.0\.0\.1:(\d+)", agent_line)
    ui = re.search(r"(http://\S+)", ui_line)
    if not agent or not ui:
        stop_serve(proc)
        raise RuntimeError("jvmprof serve did not start: %r %r" % (agent_line, ui_line))
    proc.port = int(agent.group(1))
    proc.url = ui.group(1)
    proc.base = proc.url.split("/?")[0]
    proc.token = proc.url.split("token=")[1]
    # The rest of its output is read at the end (serve prints little: one line per agent).
    return proc


def api(serve, path, body=None):
    req = urllib.request.Request(serve.base + path, headers={"X-Jvmprof-Token": serve.token,
                                                             "Content-Type": "application/json"},
                                 data=json.dumps(body).encode() if body is not None else None)
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read().decode())


def the_jvm(serve):
    """The test JVM's entry in /api/jvms (label test=history), or None."""
    for j in api(serve, "/api/jvms"):
        if j["identity"].get("labels", {}).get("test") == "history":
            return j
    return None


def write_secret(path, text):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text + "\n")


def wrong_token_agent(port):
    """What an agent with the wrong token sends; returns once serve has closed it."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(b"HPROF-TOKEN not-the-secret\nJAVA PROFILE 1.0.1\n")
    try:
        while s.recv(4096):
            pass
    except (ConnectionResetError, socket.timeout):
        pass
    s.close()


def check_browser(serve, work, screenshots):
    from selenium.webdriver.common.by import By  # noqa: F401
    driver = start_chromium(work, "1300,900")
    try:
        driver.get(serve.url)
        check(wait_until(lambda: "1 without the token" in driver.find_element(
            "id", "agent-counters").text, 30),
            "the status line shows the refused token: %r" % texts(driver, "#agent-counters"))
        check("2 admitted" in texts(driver, "#agent-counters")[0],
              "the status line shows 2 admitted: %r" % texts(driver, "#agent-counters"))
        check(wait_until(lambda: any("2 connections" in t and "1 reconnects" in t and "1 drops" in t
                                     for t in texts(driver, "#profile-list li.jvm .jvm-name")), 30),
              "the list shows the JVM with its 2 connections: %r"
              % texts(driver, "#profile-list li"))
        check(len(texts(driver, "#profile-list li.jvm ul.connections li")) == 2,
              "the JVM's two connections are listed under it: %r"
              % texts(driver, "#profile-list li.jvm li"))
        driver.execute_script("document.querySelector('#profile-list li.jvm .jvm-name').click()")
        rows = []

        def history_rows():
            rows[:] = driver.execute_script(
                "var t = document.getElementById('connection-history'); if (!t) return [];"
                "return Array.from(t.querySelectorAll('tr')).slice(1).map("
                "  r => Array.from(r.cells).map(c => c.textContent));")
            return len(rows) == 2
        check(wait_until(history_rows, 30) and rows[0][3] == "reset" and
              rows[1][0].startswith("2") and rows[1][3] == "connected",
              "the connection history shows the reset and the live second connection: %r" % rows)
        check(driver.execute_script(
            "return !document.querySelector('#command-buttons button[data-command=\"gc\"]')"
            ".disabled"), "the JVM's commands are enabled (its live connection is shown)")
        shot(driver, screenshots, "jvmprof-serve-connections.png")
    finally:
        driver.quit()


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--jvmprof", required=True)
    ap.add_argument("--hprof", required=True, help="libhprof.so")
    ap.add_argument("--classes", required=True, help="java/hprof-tests classes")
    ap.add_argument("--jdk", required=True)
    ap.add_argument("--screenshots", help="where the page's screenshot goes")
    a = ap.parse_args()
    java = os.path.join(a.jdk, "bin", "java")
    if not os.access(java, os.X_OK):
        print("skipped: no JDK at " + a.jdk)
        return 77
    browser = skip_reason(a.jdk) is None

    work = tempfile.mkdtemp(prefix="jvm-history-")
    serve = jvm = proxy = None
    try:
        token = os.path.join(work, "token")
        write_secret(token, "agent-secret")
        serve = start_serve(a.jvmprof, token, work)
        proxy = Proxy(("127.0.0.1", serve.port))
        opts = "heap=sites,sample=0,period=1,label=test=history,net=127.0.0.1:%d,nettoken=%s" % (
            proxy.port, token)
        jvm = subprocess.Popen([java, "-agentpath:%s=%s" % (a.hprof, opts), "-cp", a.classes,
                                "hproftest.PeriodicWork", "-"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

        # Two periods on the first connection, then the link is cut.
        if not check(wait_until(lambda: the_jvm(serve)["connections"][0]["periods"] >= 2, 120),
                     "the JVM's first connection delivers periods: %r" % api(serve, "/api/jvms")):
            return finish("jvm_history")
        proxy.cut()

        def reconnected():
            j = the_jvm(serve)
            return (j["connects"] == 2 and j["connected"] and
                    j["connections"][1]["periods"] >= 1 and j["connections"][0]["endedMs"] > 0)
        check(wait_until(reconnected, 120), "the JVM reconnected and delivers periods again: %r"
              % api(serve, "/api/jvms"))
        j = the_jvm(serve)
        first, second = j["connections"][0], j["connections"][-1]
        check(j["connects"] == 2 and j["reconnects"] == 1 and j["drops"] == 1,
              "one JVM, 2 connections, 1 reconnect, 1 drop: %r" % j)
        check(first["endCause"] == "reset", "the first connection ended by a reset: %r" % first)
        check(first["connection"] == 1 and second["connection"] == 2,
              "the agent numbered its connections 1 and 2: %r" % j["connections"])
        check(j["current"] == second["session"], "commands go to the second connection: %r" % j)
        check(second["connectedMs"] >= first["endedMs"] - 1000,
              "the second connection came after the first ended: %r" % j["connections"])
        check(len(j["latestPeriods"]) >= 1, "the JVM's latest periods are listed: %r" % j)
        check(proxy.accepted == 2, "the agent connected through the proxy twice: %d"
              % proxy.accepted)
        # The same history in /api/profiles: the sessions say how they ended.
        profiles = {p["id"]: p for p in api(serve, "/api/profiles")}
        check(profiles[first["session"]]["endCause"] == "reset",
              "/api/profiles shows the first session's end cause")

        # A command per JVM, on its live connection.
        api(serve, "/api/profiles/%d/command" % j["current"], {"command": "sites"})
        check(wait_until(lambda: any(c["command"] == "sites" and c["state"] == "answered"
                                     for c in api(serve, "/api/profiles/%d" % j["current"])[
                                         "commands"]), 60),
              "the JVM's live connection answers a command")

        # A wrong token: refused and counted.
        wrong_token_agent(serve.port)
        check(wait_until(lambda: api(serve, "/api/agents")["refusedToken"] == 1, 30),
              "the refused token is counted: %r" % api(serve, "/api/agents"))
        counters = api(serve, "/api/agents")
        check(counters["admitted"] == 2 and counters["refusedTls"] == 0 and counters["token"],
              "2 admitted, none refused without TLS: %r" % counters)

        if browser:
            check_browser(serve, work, a.screenshots)
        else:
            print("note: the browser part did not run: " + str(skip_reason(a.jdk)))

        # The program ends: its connection ends as the agent's exit.
        out, err = jvm.communicate("\n", timeout=120)
        check(jvm.returncode == 0, "the program exited 0: %r" % err[-2000:])
        check(re.search(r"PERIODIC rounds=\d+ items=\d+", out) is not None,
              "the program printed its count: %r" % out)
        check(wait_until(lambda: the_jvm(serve)["connections"][-1]["endCause"] == "agent exited",
                         60), "the second connection ended as the agent's exit: %r"
              % the_jvm(serve))
        check(the_jvm(serve)["drops"] == 1, "an exit is not a drop")
        return finish("jvm_history")
    finally:
        if jvm and jvm.poll() is None:
            jvm.kill()
            jvm.wait()
        if proxy:
            proxy.close()
        if serve:
            stop_serve(serve)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
