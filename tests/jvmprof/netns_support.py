# SPDX-License-Identifier: Apache-2.0
"""What the tests of a collector on another host share: two network namespaces joined by a veth
pair with addresses of the test's own, and a CA with a certificate it signs for the collector's
address (made by `openssl req` / `openssl x509`).

Not a test itself: remote_tls_test.py and remote_ui_tls_test.py import it."""
import os
import subprocess


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=kw.pop("timeout", 60), **kw)


class Namespaces:
    """Two network namespaces joined by a veth pair: COLLECTOR_IP in one, AGENT_IP in the other."""
    COLLECTOR_IP = "10.231.77.1"
    AGENT_IP = "10.231.77.2"

    def __init__(self):
        tag = "%d" % os.getpid()
        self.collector = "jvmprof-col-" + tag
        self.agent = "jvmprof-jvm-" + tag
        self.made = []

    def make(self):
        for ns in (self.collector, self.agent):
            r = run(["ip", "netns", "add", ns])
            if r.returncode != 0:
                return "ip netns add: " + r.stderr.strip()
            self.made.append(ns)
        veth_c, veth_a = "vc%d" % (os.getpid() % 10**9), "va%d" % (os.getpid() % 10**9)
        steps = [
            ["ip", "link", "add", veth_c, "netns", self.collector, "type", "veth", "peer", "name",
             veth_a, "netns", self.agent],
            self.ip(self.collector, "addr", "add", self.COLLECTOR_IP + "/30", "dev", veth_c),
            self.ip(self.agent, "addr", "add", self.AGENT_IP + "/30", "dev", veth_a),
            self.ip(self.collector, "link", "set", veth_c, "up"),
            self.ip(self.agent, "link", "set", veth_a, "up"),
            self.ip(self.collector, "link", "set", "lo", "up"),
            self.ip(self.agent, "link", "set", "lo", "up"),
        ]
        for step in steps:
            r = run(step)
            if r.returncode != 0:
                return "%s: %s" % (" ".join(step), r.stderr.strip())
        return None

    @staticmethod
    def ip(ns, *args):
        return ["ip", "-n", ns] + list(args)

    def exec_in(self, ns, cmd):
        return ["ip", "netns", "exec", ns] + cmd

    def delete(self):
        for ns in self.made:  # the veth pair goes with them
            run(["ip", "netns", "del", ns])
        self.made = []


def make_certificates(work):
    """A CA, a collector certificate it signs for COLLECTOR_IP, and an unrelated CA."""
    def openssl(*args):
        r = run(["openssl"] + list(args), cwd=work)
        if r.returncode != 0:
            raise RuntimeError("openssl %s: %s" % (args[0], r.stderr))

    for ca in ("ca", "other-ca"):
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca + ".key", "-out",
                ca + ".pem", "-subj", "/CN=jvmprof test " + ca, "-days", "1")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
            "-subj", "/CN=collector")
    with open(os.path.join(work, "san.ext"), "w") as f:
        f.write("subjectAltName=IP:%s\n" % Namespaces.COLLECTOR_IP)
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "1", "-extfile", "san.ext", "-out", "server.pem")


def write_secret(path, text):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text + "\n")
