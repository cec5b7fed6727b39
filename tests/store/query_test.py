#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""jvmprof query against known answers: HPROF text profiles stored as periods of three JVMs
(two labelled service=checkout, one service=search) at known times; the merged collapsed stacks
of a range must be the sum of the stored profiles' own collapsed stacks (jvmprof convert), label
matchers and measures must select, the other formats must be what their readers expect, a diff
must carry both ranges, and bad input must give one error line."""
import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what, flush=True)
    return cond


def profile_text(rows, site_bytes):
    """A java.hprof.txt with one trace per (method, count) row, each under app.Main.main."""
    out = ["JAVA PROFILE 1.0.1, created Wed Nov 25 09:00:00 2026", "", "--------", ""]
    for i, (method, _) in enumerate(rows):
        out += ["TRACE %d: (thread=200001)" % (300001 + i), "\t%s(X.java:1)" % method,
                "\tapp.Main.main(Main.java:4)"]
    out += ["SITES BEGIN (ordered by live bytes) Wed Nov 25 09:00:01 2026",
            "          percent          live          alloc'ed  stack class",
            " rank   self  accum     bytes objs     bytes  objs trace name",
            "    1 100.00%% 100.00%%      %d   1      %d    1 300001 byte[]" % (site_bytes, site_bytes),
            "SITES END"]
    total = sum(c for _, c in rows)
    out.append("CPU SAMPLES BEGIN (total = %d) Wed Nov 25 09:00:02 2026" % total)
    out.append("rank   self  accum   count trace method")
    for i, (method, count) in enumerate(rows):
        out.append("%4d %5.2f%% %5.2f%% %7d %d %s" % (i + 1, 100.0 * count / total, 0.0, count,
                                                     300001 + i, method))
    out.append("CPU SAMPLES END")
    return "\n".join(out) + "\n"


def folded(text):
    out = {}
    for line in text.splitlines():
        stack, n = line.rsplit(" ", 1)
        out[stack] = out.get(stack, 0) + int(n)
    return out


def add(*maps):
    out = {}
    for m in maps:
        for k, v in m.items():
            out[k] = out.get(k, 0) + v
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--jvmprof", required=True)
    ap.add_argument("--fill", required=True)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="query_test.")
    db = os.path.join(work, "p.db")
    now = int(time.time() * 1000)
    t0 = now - 30 * 60 * 1000  # half an hour ago
    old = now - 3 * 3600 * 1000  # three hours ago

    def run(args, env=None):
        return subprocess.run([a.jvmprof] + args, capture_output=True, text=True, timeout=120,
                              env=dict(os.environ, **(env or {})))

    profiles = {
        "a": ([("app.Checkout.hot", 70), ("app.Main.idle", 30)], 4096),
        "b": ([("app.Checkout.hot", 20), ("app.Main.idle", 5)], 1024),
        "c": ([("app.Search.scan", 50)], 512),
        "a_old": ([("app.Checkout.hot", 10), ("app.Main.idle", 90)], 64),
    }
    collapsed, alloc = {}, {}
    for name, (rows, site) in profiles.items():
        path = os.path.join(work, name + ".txt")
        with open(path, "w") as f:
            f.write(profile_text(rows, site))
        r = run(["convert", "--to", "collapsed", "--measure", "cpu-samples", path, "-"])
        check(r.returncode == 0, "convert %s: %s" % (name, r.stderr))
        collapsed[name] = folded(r.stdout)
        r = run(["convert", "--to", "collapsed", "--measure", "alloc-bytes", path, "-"])
        alloc[name] = folded(r.stdout)
    fills = [("a", "h1", 11, "checkout", t0), ("b", "h2", 22, "checkout", t0 + 10000),
             ("c", "h3", 33, "search", t0), ("a_old", "h1", 11, "checkout", old)]
    for name, host, pid, service, start in fills:
        r = subprocess.run([a.fill, "--store", db, "--host", host, "--pid", str(pid), "--start",
                            str(start), "--end", str(start + 10000), "--label", "service=" + service,
                            "--label", "env=prod", os.path.join(work, name + ".txt")],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, "store_fill %s: %s" % (name, r.stderr))

    # The last hour, everything: a + b + c.
    r = run(["query", "--store", db, "--from", "-1h", "--to", "now", "-o", "-"])
    check(r.returncode == 0, "query -1h: %s" % r.stderr)
    want = add(collapsed["a"], collapsed["b"], collapsed["c"])
    check(folded(r.stdout) == want, "merged last hour: %s != %s" % (folded(r.stdout), want))
    check(want.get("app.Main.main;app.Checkout.hot") == 90, "known answer: 70 + 20 hot samples")

    # RFC 3339 bounds and a label: a + b only.
    iso = lambda ms: time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + "Z"
    r = run(["query", "--store", db, "--from", iso(t0 - 1000), "--to", iso(t0 + 60000), "--match",
             "service=checkout", "-o", "-"])
    check(folded(r.stdout) == add(collapsed["a"], collapsed["b"]), "checkout: %s" % r.stdout)
    r = run(["query", "--store", db, "--from", "-1h", "--match", "service=checkout", "--match",
             "env=test", "-o", "-"])
    check(r.returncode == 0 and r.stdout == "" and "no cpu-samples" in r.stderr,
          "no JVM matches both: %r %r" % (r.stdout, r.stderr))
    # The old range holds a_old only.
    r = run(["query", "--store", db, "--from", str(old), "--to", str(old + 1), "-o", "-"])
    check(folded(r.stdout) == collapsed["a_old"], "old period alone: %s" % r.stdout)

    # Measures and formats.
    out = os.path.join(work, "alloc.collapsed")
    r = run(["query", "--store", db, "--measure", "alloc-bytes", "-o", out])
    with open(out) as f:
        check(folded(f.read()) == add(alloc["a"], alloc["b"], alloc["c"]), "alloc-bytes merged")
    out = os.path.join(work, "q.pb.gz")
    r = run(["query", "--store", db, "-o", out])
    check(r.returncode == 0, "pprof: %s" % r.stderr)
    with gzip.open(out, "rb") as f:
        pb = f.read()
    check(b"app.Checkout.hot" in pb and b"samples" in pb, "pprof holds the frames and the unit")
    out = os.path.join(work, "q.json")
    run(["query", "--store", db, "-o", out])
    with open(out) as f:
        doc = json.load(f)
    check("speedscope" in doc.get("$schema", ""), "speedscope JSON")
    weights = sum(sum(p.get("weights", [])) for p in doc.get("profiles", []))
    check(weights == sum(want.values()), "speedscope weights %d == %d" % (weights, sum(want.values())))
    out = os.path.join(work, "q.html")
    r = run(["query", "--store", db, "--match", "service=search", "-o", out])
    with open(out) as f:
        page = f.read()
    check("app.Search.scan" in page and "app.Checkout.hot" not in page, "HTML of service=search")

    # A diff of the last hour against three hours ago: both columns, the after one unscaled.
    r = run(["query", "--store", db, "--from", "-1h", "--diff-from", str(old), "--diff-to",
             str(old + 1), "--match", "service=checkout", "-o", "-"])
    check(r.returncode == 0, "diff: %s" % r.stderr)
    after = {}
    for line in r.stdout.splitlines():
        stack, before_n, after_n = line.rsplit(" ", 2)
        after[stack] = int(after_n)
        check(int(before_n) >= 0, "before column")
    check({k: v for k, v in after.items() if v} == add(collapsed["a"], collapsed["b"]),
          "diff's after column: %s" % after)
    out = os.path.join(work, "d.html")
    r = run(["query", "--store", db, "--from", "-1h", "--diff-from", str(old), "--diff-to",
             str(old + 1), "-o", out])
    with open(out) as f:
        check("app.Checkout.hot" in f.read(), "diff HTML")

    # Listing; the default store under XDG_DATA_HOME, created on first use.
    r = run(["query", "--store", db, "--jvms"])
    check(r.stdout.count("\n") == 3 and "service=search" in r.stdout, "--jvms: %s" % r.stdout)
    xdg = os.path.join(work, "xdg")
    r = run(["query", "--jvms"], env={"XDG_DATA_HOME": xdg})
    check(r.returncode == 0 and os.path.exists(os.path.join(xdg, "jvmprof", "profiles.db")),
          "default store created: %s" % r.stderr)

    # Bad input: one line, exit 2 (usage) or 1 (the store), the file untouched.
    for args in (["--from", "yesterday"], ["--measure", "cycles"], ["--diff-from", "-2h"],
                 ["--match", "service"], ["--from", "now", "--to", "-1h"]):
        r = run(["query", "--store", db] + args + ["-o", "-"])
        check(r.returncode == 2 and r.stderr.count("\n") == 1, "%s: %d %r" % (args, r.returncode, r.stderr))
    notes = os.path.join(work, "notes.txt")
    with open(notes, "w") as f:
        f.write("not a store\n" * 100)
    r = run(["query", "--store", notes, "-o", "-"])
    check(r.returncode == 1 and r.stderr.count("\n") == 1 and "not a SQLite database" in r.stderr,
          "corrupt store: %r" % r.stderr)
    with open(notes) as f:
        check(f.read() == "not a store\n" * 100, "corrupt store left as it was")

    # serve --store: a store it cannot use is one error line and no serve; a good one is opened,
    # named at start, and closed with its count at stop.
    r = run(["serve", "--port", "0", "--ui-port", "0", "--store", notes])
    check(r.returncode == 1 and r.stderr.count("\n") == 1 and "not a SQLite database" in r.stderr,
          "serve --store on a corrupt file: %r" % r.stderr)
    r = run(["serve", "--port", "0", "--retention", "14d"])
    check(r.returncode == 2 and "--retention needs --store" in r.stderr, "--retention alone")
    serve = subprocess.Popen([a.jvmprof, "serve", "--port", "0", "--ui-port", "0", "--store", db,
                              "--retention", "14d"], stdout=subprocess.PIPE, text=True)
    lines = []
    for line in serve.stdout:
        lines.append(line)
        if "UI:" in line:
            break
    # SIGTERM only once the UI answers: a stop that comes before the web server runs is lost.
    url = next((l.split("UI: ", 1)[1].strip() for l in lines if "UI: " in l), None)
    for _ in range(600):
        try:
            urllib.request.urlopen(url, timeout=5).read()
            break
        except urllib.error.HTTPError:
            break
        except (urllib.error.URLError, OSError, TypeError, ValueError):
            time.sleep(0.1)
    serve.terminate()
    rest, _ = serve.communicate(timeout=60)
    check(any(("profile history: sqlite " + db) in l for l in lines), "serve names its store: %s" % lines)
    check("profile history: 0 periods stored, 0 dropped" in rest and serve.returncode == 0,
          "serve closes its store: %r" % rest)
    r = run(["query", "--store", db, "--from", "-1h", "-o", "-"])
    check(folded(r.stdout) == want, "the store after serve used it: %s" % r.stdout)

    if failures:
        print("%d failure(s); work dir %s" % (len(failures), work))
        return 1
    subprocess.run(["rm", "-rf", work])
    print("query test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
