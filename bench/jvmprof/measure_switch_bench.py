#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How long the UI of `jvmprof serve` takes to redraw the allocation view when the measure is
switched (alloc-bytes -> alloc-objects -> live-bytes -> live-objects -> ...), on a profile of
N distinct allocation stacks (default 100000), measured in headless Chromium.

The profile is generated (a SITES section of N rows, each with its own TRACE of DEPTH frames that
share prefixes like a server's stacks do) and opened as a file by each `jvmprof` given. Each
switch is timed inside the page: from the measure select's change event until the flame graph of
the new measure is in the DOM and the browser has painted a frame after it
(requestAnimationFrame twice). Binaries are run interleaved, round by round; give the same binary
twice for an A/A row.

    python3 bench/jvmprof/measure_switch_bench.py --jvmprof A=/path/old/jvmprof \\
        --jvmprof B=build/src/jvmprof/jvmprof --jvmprof A2=/path/old/jvmprof [--stacks 100000]
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "jvmprof"))
from browser_support import start_chromium, wait_until  # noqa: E402

HEADER = "JAVA PROFILE 1.0.1, created Wed Nov 25 09:00:00 2026\n\nbench\n--------\n\n"
MEASURES = ["alloc-objects", "live-bytes", "live-objects", "alloc-bytes"]


def write_profile(path, stacks, depth):
    """N traces: a common base of frames, then the trace number's base-4 digits as frames."""
    base = ["java.lang.Thread.run", "org.apache.tomcat.util.threads.TaskThread$WrappingRunnable.run",
            "org.apache.tomcat.util.net.SocketProcessorBase.run",
            "org.apache.coyote.AbstractProtocol$ConnectionHandler.process",
            "org.apache.catalina.core.StandardEngineValve.invoke"]
    with open(path, "w") as f:
        f.write(HEADER)
        for t in range(stacks):
            frames = list(base)
            n = t
            for level in range(depth - len(base)):
                frames.append("app.layer%d.Service%d.call%d" % (level, n % 4, (n // 4) % 2))
                n //= 4
            f.write("TRACE %d:\n" % (300001 + t))
            for fr in reversed(frames):
                f.write("\t%s(Service.java:%d)\n" % (fr, 10 + len(fr) % 50))
        f.write("SITES BEGIN (ordered by live bytes) Wed Nov 25 09:00:00 2026\n")
        f.write("          percent          live          alloc'ed  stack class\n")
        f.write(" rank   self  accum     bytes objs     bytes  objs trace name\n")
        for t in range(stacks):
            live = (t * 7919) % 1000
            f.write("%5d  0.00%%  0.00%% %9d %4d %9d %5d %d byte[]\n"
                    % (t + 1, live * 16, live, (live + t % 13) * 16 + 16, live + t % 13 + 1,
                       300001 + t))
        f.write("SITES END\n")


SWITCH = """
var measure = arguments[0], done = arguments[arguments.length - 1];
var t0 = performance.now();
var s = document.getElementById('measure');
s.value = measure;
s.dispatchEvent(new Event('change'));
(function poll() {
  var g = document.querySelector('#view .fg-graph');
  if (g && g.getAttribute('data-measure') === measure && document.querySelector('#view tr.fg-hot')) {
    requestAnimationFrame(function () { requestAnimationFrame(function () {
      done(performance.now() - t0); }); });
  } else {
    setTimeout(poll, 1);
  }
})();
"""


class Run:
    def __init__(self, name, jvmprof, profile, work):
        self.name = name
        self.proc = subprocess.Popen([jvmprof, "serve", "--port", "0", "--ui-port", "0", profile],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        # The UI line follows the agents' line (and a note on removed spool directories, if any).
        self.url = None
        while self.url is None:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(name + ": jvmprof serve printed no UI address")
            m = re.search(r"UI: (http://\S+)", line)
            self.url = m.group(1) if m else None
        self.driver = start_chromium(os.path.join(work, name), "1400,1000")
        self.driver.set_script_timeout(600)
        self.driver.get(self.url)
        ok = wait_until(lambda: self.driver.execute_script(
            "return document.getElementById('profile-state').textContent").startswith("state: ended"),
            600)
        if not ok:
            raise RuntimeError(name + ": the profile was not read")
        self.driver.execute_script(
            "document.querySelector('#tabs button[data-tab=\"alloc\"]').click()")
        if not wait_until(lambda: self.driver.execute_script(
                "return !!document.querySelector('#view tr.fg-hot')"), 600):
            raise RuntimeError(name + ": no allocation flame graph")

    def switch(self, measure):
        return self.driver.execute_async_script(SWITCH, measure)

    def stop(self):
        self.driver.quit()
        self.proc.terminate()
        self.proc.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jvmprof", action="append", required=True, help="NAME=PATH")
    ap.add_argument("--stacks", type=int, default=100000)
    ap.add_argument("--depth", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    for spec in a.jvmprof:
        name, _, path = spec.partition("=")
        if not name or not os.access(path, os.X_OK):
            ap.error("--jvmprof wants NAME=PATH of an executable jvmprof: " + spec)
    if a.stacks < 1 or a.rounds < 1 or a.depth < 6:
        ap.error("--stacks and --rounds must be at least 1, --depth at least 6")
    work = tempfile.mkdtemp(prefix="jvmprof-measure-bench-")
    runs = []
    try:
        profile = os.path.join(work, "profile.txt")
        write_profile(profile, a.stacks, a.depth)
        print("profile: %d stacks, depth %d, %.1f MiB" % (a.stacks, a.depth,
                                                          os.path.getsize(profile) / 2**20))
        for spec in a.jvmprof:
            name, path = spec.split("=", 1)
            runs.append(Run(name, path, profile, work))
        times = {r.name: [] for r in runs}
        for _ in range(a.rounds):
            for r in runs:  # interleaved: every binary once per round
                for m in MEASURES:
                    times[r.name].append(r.switch(m))
        first = runs[0].name
        print("| jvmprof | switches | median ms | max ms | median / %s |" % first)
        print("|---|---|---|---|---|")
        for r in runs:
            t = times[r.name]
            print("| %s | %d | %.0f | %.0f | %.3f |" % (
                r.name, len(t), statistics.median(t), max(t),
                statistics.median(t) / statistics.median(times[first])))
        # Every switch in the order made (round by round), to see where the slowest ones fall.
        for r in runs:
            print("%s: %s" % (r.name, " ".join("%.0f" % t for t in times[r.name])))
    finally:
        for r in runs:
            r.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
