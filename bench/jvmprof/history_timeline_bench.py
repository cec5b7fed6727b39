#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What the History view's timelines cost: `jvmprof serve --store DB` answering
/api/history/timeline for one measure, for every measure in one request (`measure=all`, what the
page asks), and for every measure as one request each (what the page would ask without it), over
the store's whole range (or --from/--to), grouped by a label. The rows run interleaved, round by
round, with the one-measure request twice for an A/A row; medians and ratios to the first row are
printed. The store is only read (fill one with bench/store's store_bench first).

    build/bench/store/store_bench --store /tmp/h.db --jvms 10 --hours 6
    python3 bench/jvmprof/history_timeline_bench.py --jvmprof build/src/jvmprof/jvmprof \\
        --store /tmp/h.db --rounds 5 --group service
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request


def start_serve(jvmprof, db, work):
    """serve on free ports; (process, base URL, token)."""
    proc = subprocess.Popen([jvmprof, "serve", "--port", "0", "--ui-port", "0", "--store", db],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=dict(os.environ, TMPDIR=work))
    lines = [proc.stdout.readline() for _ in range(3)]
    urls = [m.group(1) for m in (re.search(r"(http://\S+)", line) for line in lines) if m]
    if not urls:
        proc.terminate()
        proc.wait()
        sys.exit("history_timeline_bench: jvmprof serve --store did not start: %r" % lines)
    return proc, urls[0].split("/?")[0], urls[0].split("token=")[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jvmprof", required=True, help="the jvmprof binary")
    ap.add_argument("--store", required=True, help="a SQLite profile store to read")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--group", default="service", help="the label to stack by ('' for none)")
    ap.add_argument("--from", dest="from_ms", type=int, help="ms since the epoch (default: the "
                    "store's first period)")
    ap.add_argument("--to", dest="to_ms", type=int, help="ms since the epoch (default: the "
                    "store's last period's end)")
    a = ap.parse_args()
    if a.rounds < 1:
        ap.error("--rounds must be at least 1")
    if not os.path.isfile(a.store):
        ap.error("--store %s: no such file" % a.store)

    work = tempfile.mkdtemp(prefix="history_timeline_bench.")
    proc, base, token = start_serve(a.jvmprof, a.store, work)
    try:
        def get(path):
            req = urllib.request.Request(base + path, headers={"X-Jvmprof-Token": token})
            with urllib.request.urlopen(req, timeout=600) as r:
                return json.loads(r.read().decode())

        jvms = get("/api/history/jvms")
        if not jvms:
            sys.exit("history_timeline_bench: the store holds no periods")
        lo = a.from_ms if a.from_ms is not None else min(j["firstMs"] for j in jvms)
        hi = a.to_ms if a.to_ms is not None else max(j["lastMs"] for j in jvms)
        window = "from=%d&to=%d" % (lo, hi) + ("&group=%s" % a.group if a.group else "")
        measures = get("/api/history")["measures"]
        rows = [
            ("one measure (cpu-samples)", ["cpu-samples"]),
            ("one measure again (A/A)", ["cpu-samples"]),
            ("every measure, one request (measure=all)", ["all"]),
            ("every measure, a request each (%d)" % len(measures), measures),
        ]
        times = {name: [] for name, _ in rows}
        answers = {}
        for _ in range(a.rounds):
            for name, asks in rows:
                t = time.monotonic()
                got = [get("/api/history/timeline?%s&measure=%s" % (window, m)) for m in asks]
                times[name].append(time.monotonic() - t)
                answers[name] = got
        # The one request and the separate ones must agree, or the comparison means nothing.
        together = {t["measure"]: t["points"] for t in answers[rows[2][0]][0]["timelines"]}
        apart = {t["measure"]: t["points"] for t in answers[rows[3][0]] if t["points"]}
        if together != apart:
            sys.exit("history_timeline_bench: measure=all differs from the separate answers")
        periods = sum(j["periods"] for j in jvms)
        print("store %s: %d JVMs, %d periods, window %d s, bucket %d ms, %d timelines, %d rounds"
              % (a.store, len(jvms), periods, (hi - lo) // 1000,
                 answers[rows[0][0]][0]["bucketMs"], len(together), a.rounds))
        first = statistics.median(times[rows[0][0]])
        print("| request | median s | ratio |")
        print("|---|---:|---:|")
        for name, _ in rows:
            m = statistics.median(times[name])
            print("| %s | %.3f | %.2fx |" % (name, m, m / first))
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
