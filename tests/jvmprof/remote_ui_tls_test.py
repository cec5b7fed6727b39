#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`jvmprof serve`'s web UI beyond loopback speaks HTTPS only, with the agent port's certificate.

Two network namespaces made by the test (netns_support: a veth pair, 10.231.77.1 and .2, a CA and
a collector certificate for .1 made by `openssl req`): serve in one with `--bind` and `--ui-bind`
on its address, curl in the other.

 - serve prints an https:// UI URL; curl trusting the test's CA gets the UI's page with the URL's
   token, and its cookie is Secure;
 - over HTTPS the token and the Host allow-list still hold: no token is 401, a foreign Host 403,
   a foreign Origin 403;
 - curl without the CA fails to verify the certificate (exit 60) and gets no page;
 - plain http:// to the UI port gets no page (the TLS handshake fails);
 - `--ui-bind` beyond loopback without a certificate is refused with one line;
 - the default: with `--bind` beyond loopback and no `--ui-bind` the UI stays on 127.0.0.1 as
   plain HTTP (served there, unreachable from the other namespace).

No JVM. The namespaces are deleted at the end whatever happens. Exit 77 (skipped) when openssl,
ip or curl is missing or network namespaces cannot be made (not root, no CAP_NET_ADMIN)."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

from browser_support import stop_serve
from netns_support import Namespaces, make_certificates, run

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED: " + what)
    return cond


def start_serve(ns, jvmprof, work, *options):
    """serve in the collector's namespace with the test's certificate; returns it and its UI
    URL's scheme, address and token (None when it printed no UI line)."""
    serve = subprocess.Popen(
        ns.exec_in(ns.collector,
                   [jvmprof, "serve", "--port", "0", "--ui-port", "0", "--tls-cert",
                    os.path.join(work, "server.pem"), "--tls-key",
                    os.path.join(work, "server.key")] + list(options)),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in serve.stdout:
        m = re.search(r"UI: (\w+)://([\d.]+:\d+)/\?token=(\w+)", line)
        if m:
            return serve, m.groups()
    return serve, None


def read_text(path):
    if not os.path.exists(path):
        return ""
    with open(path, errors="replace") as f:
        return f.read()


class Curl:
    """curl run in a namespace; each fetch gives (exit code, HTTP status, headers, body)."""

    def __init__(self, ns, netns, work):
        self.ns, self.netns, self.work = ns, netns, work
        # curl finds no CA through the environment: only --cacert makes one trusted.
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR")}

    def fetch(self, url, *options):
        headers, body = os.path.join(self.work, "headers"), os.path.join(self.work, "body")
        for f in (headers, body):
            if os.path.exists(f):
                os.remove(f)
        r = run(self.ns.exec_in(self.netns, ["curl", "-sS", "--max-time", "30", "-D", headers,
                                             "-o", body, "-w", "%{http_code}"] +
                                list(options) + [url]), env=self.env)
        return r.returncode, r.stdout.strip(), read_text(headers), read_text(body)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--jvmprof", required=True)
    ap.add_argument("--index", required=True, help="web/index.html, the page the UI serves at /")
    a = ap.parse_args()
    for tool in ("openssl", "ip", "curl"):
        if shutil.which(tool) is None:
            print("skipped: %s is not installed" % tool)
            return 77
    # The page's title line: what only the UI's own page holds.
    with open(a.index) as f:
        title = re.search(r"<title>.*</title>", f.read()).group(0)

    work = tempfile.mkdtemp(prefix="remote-ui-tls-")
    ns = Namespaces()
    serve = None
    try:
        why = ns.make()
        if why is not None:
            print("skipped: cannot make network namespaces (%s)" % why)
            return 77
        make_certificates(work)
        ip = ns.COLLECTOR_IP
        ca = os.path.join(work, "ca.pem")
        remote = Curl(ns, ns.agent, work)

        # Beyond loopback without a certificate: refused with one line.
        r = run(ns.exec_in(ns.collector, [a.jvmprof, "serve", "--port", "0", "--ui-port", "0",
                                          "--ui-bind", ip]))
        check(r.returncode == 2 and "--ui-bind %s is not a loopback address" % ip in r.stderr and
              len(r.stderr.strip().splitlines()) == 1,
              "serve --ui-bind without a certificate refused with one line: %r" % r.stderr)

        serve, ui = start_serve(ns, a.jvmprof, work, "--bind", ip, "--ui-bind", ip)
        if not check(ui is not None, "serve printed its UI URL"):
            return 1
        scheme, address, token = ui
        check(scheme == "https" and address.startswith(ip + ":"),
              "the UI URL is https:// on %s: %s://%s" % (ip, scheme, address))
        page = "https://%s/?token=%s" % (address, token)

        # The page over HTTPS, with the test's CA, from the other namespace.
        code, status, headers, body = remote.fetch(page, "--cacert", ca)
        check(code == 0 and status == "200" and title in body,
              "the UI page over https with the CA (curl %d, HTTP %s): %r" % (code, status,
                                                                             body[:200]))
        cookie = re.search(r"(?im)^set-cookie: jvmprof_token=.*$", headers)
        check(cookie is not None and "Secure" in cookie.group(0) and "HttpOnly" in cookie.group(0),
              "the token's cookie is Secure over https: %r" % headers)

        # The token and the Host allow-list over HTTPS.
        code, status, _, body = remote.fetch("https://%s/" % address, "--cacert", ca)
        check(code == 0 and status == "401" and title not in body,
              "no token over https: 401 (curl %d, HTTP %s)" % (code, status))
        code, status, _, body = remote.fetch(page, "--cacert", ca, "-H",
                                             "Host: attacker.example:%s" % address.split(":")[1])
        check(code == 0 and status == "403" and title not in body,
              "a foreign Host over https: 403 (curl %d, HTTP %s)" % (code, status))
        code, status, _, body = remote.fetch(page, "--cacert", ca, "-H",
                                             "Origin: http://%s" % address)
        check(code == 0 and status == "403" and title not in body,
              "an http:// Origin to the https UI: 403 (curl %d, HTTP %s)" % (code, status))
        code, status, _, body = remote.fetch(page, "--cacert", ca, "-H",
                                             "Origin: https://%s" % address)
        check(code == 0 and status == "200" and title in body,
              "the UI's own https:// Origin: 200 (curl %d, HTTP %s)" % (code, status))

        # Without the CA the certificate does not verify (curl: 60, "SSL certificate problem").
        code, status, _, body = remote.fetch(page)
        check(code == 60 and title not in body,
              "https without the CA fails verification (curl %d, HTTP %s)" % (code, status))

        # Plain HTTP to the HTTPS port: no page, whatever bytes come back.
        code, status, headers, body = remote.fetch("http://%s/?token=%s" % (address, token))
        check(code != 0 and status != "200" and title not in body and "HTTP/" not in headers,
              "plain http to the https UI gets no page (curl %d, HTTP %s): %r" %
              (code, status, headers + body[:200]))

        out, err = stop_serve(serve)
        serve = None
        check("jvmprof serve: stopped" in out, "serve stopped cleanly: %r" % err[-2000:])

        # The default: agents beyond loopback, the UI on loopback as plain HTTP.
        serve, ui = start_serve(ns, a.jvmprof, work, "--bind", ip)
        if not check(ui is not None, "serve printed its UI URL (default --ui-bind)"):
            return 1
        scheme, address, token = ui
        check(scheme == "http" and address.startswith("127.0.0.1:"),
              "by default the UI is http:// on 127.0.0.1: %s://%s" % (scheme, address))
        local = Curl(ns, ns.collector, work)
        code, status, _, body = local.fetch("http://%s/?token=%s" % (address, token))
        check(code == 0 and status == "200" and title in body,
              "the loopback UI page over plain http (curl %d, HTTP %s)" % (code, status))
        port = address.split(":")[1]
        code, status, _, _ = remote.fetch("http://%s:%s/?token=%s" % (ip, port, token))
        check(code == 7, "the loopback UI is not reachable from the other namespace (curl %d)" %
              code)
        out, err = stop_serve(serve)
        serve = None
        check("jvmprof serve: stopped" in out, "serve stopped cleanly: %r" % err[-2000:])
    finally:
        if serve is not None:
            stop_serve(serve)
        ns.delete()
    if failures:
        print("%d failure(s); work dir %s" % (len(failures), work))
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print("remote UI TLS test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
