#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Switching the measure redraws what it must: `jvmprof serve` opens a text profile written here
(CPU SAMPLES, CPU TIME and SITES over a few known stacks) and headless Chromium switches the
Allocation view through alloc-bytes, alloc-objects, live-bytes and live-objects and the CPU view
through cpu-samples, cpu-time and cpu-calls, back and forth. After each switch the flame graph
must carry the new measure and draw each stack with that measure's value (stacks of no weight in
it, such as a class with nothing live, not at all), the sites / allocated-classes tables and the
hot-methods table must give that measure's rows in its order, and in the bottom-up direction the
graph must put each method under the root with its self value while the hot-methods table stays
the same. Every expected value is worked out here from the rows written into the profile.

    measure_switch_browser_test.py --jvmprof build/src/jvmprof/jvmprof

Exit status 77 (skipped) without python3-selenium or Chromium and chromedriver."""
import argparse
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_support import (Serve, check, finish, rows_of, start_chromium,  # noqa: E402
                             wait_for, wait_until)

HEADER = "JAVA PROFILE 1.0.1, created Wed Nov 25 09:00:00 2026\n\nmeasure switch\n--------\n\n"
MAIN = "app.Main.main"
# trace serial -> frames, top (leaf) first, as HPROF writes them.
TRACES = {
    300001: ["app.Hot.spin", "app.Hot.run", MAIN],
    300002: ["app.Cold.idle", MAIN],
    300003: ["app.Io.read", MAIN],
    300004: ["app.Store.put", MAIN],
    300005: ["app.Cache.fill", MAIN],
    300006: ["app.Log.write", MAIN],
}
# CPU SAMPLES (total 10): trace -> count.   CPU TIME (total 100 ms): trace -> (percent, calls).
SAMPLES = {300001: 7, 300002: 2, 300003: 1}
TIME_TOTAL = 100
TIMES = {300003: (60, 3), 300002: (30, 40), 300001: (10, 1)}
# SITES: trace -> (class, live bytes, live objects, allocated bytes, allocated objects). Each
# measure orders them differently, and char[] has nothing live (so is absent from live-*); each
# is wide enough in every measure to be drawn (the graph leaves out what is under a pixel).
SITES = {
    300004: ("app.Entry", 40000, 2500, 48000, 3000),
    300005: ("byte[]", 32000, 100, 64000, 200),
    300006: ("char[]", 0, 0, 50000, 5000),
}
ALLOC_COLUMN = {"live-bytes": 1, "live-objects": 2, "alloc-bytes": 3, "alloc-objects": 4}


def write_profile(path):
    with open(path, "w") as f:
        f.write(HEADER)
        for serial, frames in TRACES.items():
            f.write("TRACE %d:\n" % serial)
            for i, fr in enumerate(frames):
                f.write("\t%s(%s.java:%d)\n" % (fr, fr.split(".")[1], 10 + i))
        live_total = sum(s[1] for s in SITES.values())
        f.write("SITES BEGIN (ordered by live bytes) Wed Nov 25 09:00:01 2026\n")
        f.write("          percent          live          alloc'ed  stack class\n")
        f.write(" rank   self  accum     bytes objs     bytes  objs trace name\n")
        accum = 0.0
        for rank, (serial, s) in enumerate(sorted(SITES.items(), key=lambda x: -x[1][1])):
            self_pct = 100.0 * s[1] / live_total
            accum += self_pct
            f.write("%5d %5.2f%% %5.2f%% %9d %4d %9d %5d %d %s\n"
                    % (rank + 1, self_pct, accum, s[1], s[2], s[3], s[4], serial, s[0]))
        f.write("SITES END\n")
        total = sum(SAMPLES.values())
        f.write("CPU SAMPLES BEGIN (total = %d) Wed Nov 25 09:00:02 2026\n" % total)
        f.write("rank   self  accum   count trace method\n")
        accum = 0.0
        for rank, (serial, n) in enumerate(sorted(SAMPLES.items(), key=lambda x: -x[1])):
            accum += 100.0 * n / total
            f.write("%4d %5.2f%% %5.2f%% %7d %5d %s\n"
                    % (rank + 1, 100.0 * n / total, accum, n, serial, TRACES[serial][0]))
        f.write("CPU SAMPLES END\n")
        f.write("CPU TIME (ms) BEGIN (total = %d) Wed Nov 25 09:00:03 2026\n" % TIME_TOTAL)
        f.write("rank   self  accum   count trace method\n")
        accum = 0.0
        for rank, (serial, (pct, calls)) in enumerate(sorted(TIMES.items(), key=lambda x: -x[1][0])):
            accum += pct
            f.write("%4d %5.2f%% %5.2f%% %7d %5d %s\n"
                    % (rank + 1, pct, accum, calls, serial, TRACES[serial][0]))
        f.write("CPU TIME (ms) END\n")


def alloc_answer(measure):
    """class -> value, site name -> value, for the stacks of weight in `measure`."""
    col = ALLOC_COLUMN[measure]
    classes, sites = {}, {}
    for serial, s in SITES.items():
        if s[col] > 0:
            classes[s[0]] = s[col]
            sites[TRACES[serial][0] + " \u2192 " + s[0]] = s[col]
    return classes, sites


def cpu_answer(measure):
    """method -> self value in `measure` (each method is the leaf of one stack)."""
    if measure == "cpu-samples":
        return {TRACES[t][0]: n for t, n in SAMPLES.items()}
    if measure == "cpu-time":
        return {TRACES[t][0]: TIME_TOTAL * pct // 100 for t, (pct, _) in TIMES.items()}
    return {TRACES[t][0]: calls for t, (_, calls) in TIMES.items()}


def number(cell):
    """The leading integer of a cell such as "40,000 bytes (38.10%)"."""
    return int(cell.split(" ")[0].replace(",", ""))


def ordered(values):
    """Names largest value first (no ties in the answers above)."""
    return [k for k, _ in sorted(values.items(), key=lambda x: -x[1])]


def switch(driver, measure):
    """Picks `measure` in the select as a user does and waits until the graph carries it."""
    driver.execute_script(
        "var s = document.getElementById('measure'); s.value = arguments[0];"
        "s.dispatchEvent(new Event('change'));", measure)
    return wait_for(driver, '#view .fg-graph[data-measure="%s"]' % measure)


def frame_values(driver):
    """name -> summed data-value of the drawn frames, and the frames' tops by name."""
    return driver.execute_script(
        "var v = {}; document.querySelectorAll('#view .fg-frame').forEach(function (f) {"
        "  var n = f.getAttribute('data-name');"
        "  v[n] = (v[n] || 0) + parseInt(f.getAttribute('data-value'), 10); }); return v;")


def check_alloc(driver, measure):
    classes, sites = alloc_answer(measure)
    ok = switch(driver, measure)
    check(ok, "%s: the graph carries the new measure" % measure)
    if not ok:
        return
    drawn = frame_values(driver)
    check(drawn.get(MAIN) == sum(classes.values()),
          "%s: the root method's frame has the measure's total %d: %r"
          % (measure, sum(classes.values()), drawn.get(MAIN)))
    for name in ("app.Entry", "byte[]", "char[]"):
        check(drawn.get(name) == classes.get(name),
              "%s: %s is drawn with %r: %r" % (measure, name, classes.get(name), drawn.get(name)))
    shown = [(r[1], number(r[0])) for r in rows_of(driver, "#view table.fg-table:not(.fg-leaves)")]
    check(shown == [(s, sites[s]) for s in ordered(sites)],
          "%s: the sites table lists %r: %r" % (measure, sites, shown))
    leaves = [(r[1], number(r[0])) for r in rows_of(driver, "#view table.fg-leaves")]
    check(leaves == [(c, classes[c]) for c in ordered(classes)],
          "%s: the allocated classes table lists %r: %r" % (measure, classes, leaves))


def check_cpu(driver, measure, bottom_up):
    selfs = cpu_answer(measure)
    total = sum(selfs.values())
    ok = switch(driver, measure)
    check(ok, "%s: the graph carries the new measure" % measure)
    if not ok:
        return
    rows = {r[2]: (number(r[0]), number(r[1])) for r in rows_of(driver, "#view table.fg-table")}
    order = [r[2] for r in rows_of(driver, "#view table.fg-table")]
    want = dict((m, (v, v)) for m, v in selfs.items())
    want[MAIN] = (0, total)
    want["app.Hot.run"] = (0, selfs["app.Hot.spin"])
    check(rows == want, "%s%s: the hot methods (self, total) are %r: %r"
          % (measure, " bottom-up" if bottom_up else "", want, rows))
    check(order[:len(selfs)] == ordered(selfs),
          "%s: the hot methods table ranks %r first: %r" % (measure, ordered(selfs), order))
    drawn = frame_values(driver)
    if not bottom_up:
        check(drawn.get(MAIN) == total and all(drawn.get(m) == v for m, v in selfs.items()),
              "%s: the graph draws main with %d and each method with %r: %r"
              % (measure, total, selfs, drawn))
        return
    # Bottom-up: each method right under the root with its self value, main under each of them.
    under_root = driver.execute_script(
        "var v = {}; document.querySelectorAll('#view .fg-frame').forEach(function (f) {"
        "  if (f.style.top === '18px') v[f.getAttribute('data-name')] ="
        "    parseInt(f.getAttribute('data-value'), 10); }); return v;")
    check(under_root == selfs, "%s bottom-up: the methods under the root are %r: %r"
          % (measure, selfs, under_root))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jvmprof", required=True, help="the jvmprof binary")
    a = ap.parse_args()
    if not os.access(a.jvmprof, os.X_OK):
        ap.error("not an executable: " + a.jvmprof)
    try:
        import selenium  # noqa: F401
    except ImportError:
        print("skipped: python3-selenium is not installed")
        return 77
    if not shutil.which("chromedriver") or not shutil.which("chromium"):
        print("skipped: chromium / chromium-driver are not installed")
        return 77
    work = tempfile.mkdtemp(prefix="jvmprof-measure-switch-")
    serve = driver = None
    try:
        profile = os.path.join(work, "profile.txt")
        write_profile(profile)
        serve = Serve(a.jvmprof, [profile], work)
        driver = start_chromium(work, "1400,1000")
        driver.get(serve.url)
        check(wait_until(lambda: driver.execute_script(
            "return document.getElementById('profile-state').textContent").startswith(
                "state: ended")), "the profile is read")

        driver.execute_script("document.querySelector('#tabs button[data-tab=\"alloc\"]').click()")
        check(bool(wait_for(driver, "#view tr.fg-hot")), "the allocation view is drawn")
        # Every measure after every other (and back), so no switch can pass on a stale drawing.
        for measure in ("alloc-objects", "live-bytes", "alloc-bytes", "live-objects",
                        "alloc-objects", "alloc-bytes", "live-bytes", "live-objects"):
            check_alloc(driver, measure)

        driver.execute_script("document.querySelector('#tabs button[data-tab=\"cpu\"]').click()")
        check(bool(wait_for(driver, '#view .fg-graph[data-measure="cpu-samples"]')),
              "the CPU view is drawn")
        for measure in ("cpu-time", "cpu-calls", "cpu-samples", "cpu-calls", "cpu-time"):
            check_cpu(driver, measure, False)
        driver.execute_script("document.querySelector('#view .fg-invert').click()")
        for measure in ("cpu-samples", "cpu-calls", "cpu-time"):
            check_cpu(driver, measure, True)
    finally:
        if driver:
            driver.quit()
        if serve:
            serve.stop()
        shutil.rmtree(work, ignore_errors=True)
    return finish("measure_switch_browser")


if __name__ == "__main__":
    sys.exit(main())
