#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The History view of `jvmprof serve --store` in headless Chromium, against a store filled with
known periods (no JVM): a checkout JVM whose hot method is app.Checkout.hot in minutes 0-4, and a
search JVM whose hot method is app.Search.index in minutes 0-4 and app.Search.scan (more samples)
in minutes 10-14; both allocate (checkout most in minutes 0-4 at app.Checkout.cart, search most
in minutes 10-14 at app.Search.scan) and checkout waits on a monitor. Every measure stored gets
its own timeline, whose bars add up to that measure's known total per service. The whole
window's hottest method is app.Search.scan; dragging minutes 0-5 on the second timeline
(alloc-bytes) shows that measure's graph, led by app.Checkout.cart's site, and selects the range
on every timeline; dragging minutes 0-5 on the first (cpu-samples) makes it app.Checkout.hot;
filtering by service=search then makes it app.Search.index. The page's address reopens the same
view; "compare" with minutes 10-15 gives a differential flame graph in which app.Search.scan
grew and app.Search.index shrank, and side by side the two ranges' graphs led by
app.Search.index (before) and app.Search.scan (after), each with its range and known total,
which the address reopens too, and after clicking the alloc-bytes timeline's name each side's
allocation site; the routes answer bad input with 400."""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "jvmprof"))
from browser_support import (Serve, check, failures, finish, shot,  # noqa: E402
                             start_chromium, stop_all, texts, wait_until)

MINUTE = 60_000
# Per period: CPU SAMPLES (method, count); SITES (method, class, alloc'ed bytes, objects; half of
# each still live); MONITOR TIME (method, monitor, ms).
CHECKOUT_EARLY = {"cpu": [("app.Checkout.hot", 60), ("app.Main.idle", 10)],
                  "sites": [("app.Checkout.cart", "byte[]", 8000, 8)],
                  "monitor": [("app.Checkout.pay", "app.Checkout$Lock", 30)]}
SEARCH_EARLY = {"cpu": [("app.Search.index", 40), ("app.Main.idle", 5)],
                "sites": [("app.Search.index", "char[]", 2000, 20)]}
SEARCH_LATE = {"cpu": [("app.Search.scan", 200)],
               "sites": [("app.Search.scan", "long[]", 50000, 50)]}
PERIODS = 5  # of each kind


def measure_totals(profile):
    """One period's total of every measure it has (as the store's measures name them)."""
    sites = profile.get("sites", [])
    totals = {"cpu-samples": sum(c for _, c in profile["cpu"]),
              "alloc-bytes": sum(s[2] for s in sites), "alloc-objects": sum(s[3] for s in sites),
              "live-bytes": sum(s[2] // 2 for s in sites),
              "live-objects": sum(s[3] // 2 for s in sites),
              "monitor-time": sum(m[2] for m in profile.get("monitor", []))}
    return {m: t for m, t in totals.items() if t}


def profile_text(profile):
    """A java.hprof.txt: one trace per row of each section, under app.Main.main."""
    rows, sites, monitors = profile["cpu"], profile.get("sites", []), profile.get("monitor", [])
    out = ["JAVA PROFILE 1.0.1, created Wed Nov 25 09:00:00 2026", "", "--------", ""]
    for i, (method, _) in enumerate(rows):
        out += ["TRACE %d: (thread=200001)" % (300001 + i), "\t%s(X.java:1)" % method,
                "\tapp.Main.main(Main.java:4)"]
    for i, site in enumerate(sites):
        out += ["TRACE %d: (thread=200001)" % (300101 + i), "\t%s(X.java:2)" % site[0],
                "\tapp.Main.main(Main.java:4)"]
    for i, monitor in enumerate(monitors):
        out += ["TRACE %d: (thread=200001)" % (300201 + i), "\t%s(X.java:3)" % monitor[0],
                "\tapp.Main.main(Main.java:4)"]
    if sites:
        out += ["SITES BEGIN (ordered by live bytes) Wed Nov 25 09:00:01 2026",
                "          percent          live          alloc'ed  stack class",
                " rank   self  accum     bytes objs     bytes  objs trace name"]
        for i, (_, cls, size, objs) in enumerate(sites):
            out.append("%5d %5.2f%% %5.2f%% %9d %4d %9d %5d %d %s" % (
                i + 1, 0.0, 0.0, size // 2, objs // 2, size, objs, 300101 + i, cls))
        out.append("SITES END")
    total = sum(c for _, c in rows)
    out.append("CPU SAMPLES BEGIN (total = %d) Wed Nov 25 09:00:02 2026" % total)
    out.append("rank   self  accum   count trace method")
    for i, (method, count) in enumerate(rows):
        out.append("%4d %5.2f%% %5.2f%% %7d %d %s" % (i + 1, 100.0 * count / total, 0.0, count,
                                                     300001 + i, method))
    out.append("CPU SAMPLES END")
    if monitors:
        # One monitor (100 % of the total), so that its ms are the total's exactly.
        assert len(monitors) == 1
        out += ["MONITOR TIME BEGIN (total = %d ms) Wed Nov 25 09:00:03 2026" % monitors[0][2],
                "rank   self  accum   count trace monitor",
                "   1 100.00%% 100.00%%       1 300201 %s (Java)" % monitors[0][1],
                "MONITOR TIME END"]
    return "\n".join(out) + "\n"


class StoreServe(Serve):
    """`jvmprof serve --store DB` on free ports (its first line names the store)."""

    def __init__(self, jvmprof, db, work):
        self.proc = subprocess.Popen(
            [jvmprof, "serve", "--port", "0", "--ui-port", "0", "--store", db],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env=dict(os.environ, TMPDIR=work))
        lines = [self.proc.stdout.readline() for _ in range(3)]
        ui = [re.search(r"(http://\S+)", line) for line in lines]
        ui = [m for m in ui if m]
        if not ui or "profile history" not in lines[0]:
            self.stop()
            raise RuntimeError("jvmprof serve --store did not start: %r" % lines)
        self.url = ui[0].group(1)
        self.base = self.url.split("/?")[0]
        self.token = self.url.split("token=")[1]


def hottest(driver):
    """The first row of the History graph's hot methods table (by self)."""
    top = texts(driver, "#history-graph tr.fg-hot td.fg-name")
    return top[0] if top else None


def wait_hottest(driver, method):
    wait_until(lambda: hottest(driver) == method, 60)
    return hottest(driver)


def side_hottest(driver, side):
    """The first hot-methods row of the side-by-side column `side` (before or after)."""
    top = texts(driver, "#history-side-%s tr.fg-hot td.fg-name" % side)
    return top[0] if top else None


def drag(driver, t_from, t_to, measure="cpu-samples"):
    """Drags on `measure`'s timeline from time t_from to t_to (ms), as a user would with the
    mouse."""
    from selenium.webdriver.common.action_chains import ActionChains
    svg = driver.find_element("css selector",
                              '#history-timeline svg.history-svg[data-measure="%s"]' % measure)
    lo, hi = float(svg.get_attribute("data-from-ms")), float(svg.get_attribute("data-to-ms"))
    width = svg.size["width"]
    x = lambda t: (t - lo) / (hi - lo) * width
    # Offsets from the element's centre (W3C actions).
    ActionChains(driver).move_to_element_with_offset(svg, int(x(t_from) - width / 2), 0) \
        .click_and_hold().move_by_offset(int(x(t_to) - x(t_from)), 0).release().perform()


def reopen(driver, url):
    """Loads `url` afresh (a hash change alone would not reload the page)."""
    driver.get("about:blank")
    driver.get(url)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--jvmprof", required=True)
    ap.add_argument("--fill", required=True, help="the store_fill test tool")
    ap.add_argument("--screenshots", help="directory for screenshots of each step")
    a = ap.parse_args()
    # Without a browser the routes are still checked; the test then reports itself skipped.
    no_browser = None
    try:
        import selenium  # noqa: F401
    except ImportError:
        no_browser = "python3-selenium is not installed"
    import shutil
    if not shutil.which("chromedriver") or not shutil.which("chromium"):
        no_browser = "chromium / chromium-driver are not installed"

    work = tempfile.mkdtemp(prefix="history_browser_test.")
    db = os.path.join(work, "p.db")
    # Minute 0 half an hour ago, on a whole minute (timeline buckets are whole multiples).
    t0 = (int(time.time() * 1000) - 30 * MINUTE) // MINUTE * MINUTE
    files = {}
    for name, rows in (("checkout", CHECKOUT_EARLY), ("search_early", SEARCH_EARLY),
                       ("search_late", SEARCH_LATE)):
        files[name] = os.path.join(work, name + ".txt")
        with open(files[name], "w") as f:
            f.write(profile_text(rows))
    fills = []
    for k in range(PERIODS):
        fills.append(("checkout", "h1", 11, "checkout", t0 + k * MINUTE))
        fills.append(("search_early", "h2", 22, "search", t0 + k * MINUTE + 10_000))
        fills.append(("search_late", "h2", 22, "search", t0 + (10 + k) * MINUTE))
    for name, host, pid, service, start in fills:
        r = subprocess.run([a.fill, "--store", db, "--host", host, "--pid", str(pid), "--start",
                            str(start), "--end", str(start + 10_000), "--label",
                            "service=" + service, "--label", "env=prod", files[name]],
                           capture_output=True, text=True, timeout=60)
        if not check(r.returncode == 0, "store_fill %s: %s" % (name, r.stderr)):
            return finish("history_browser")
    # Each measure's known total per service over the window.
    totals = {}
    for profile, service in ((CHECKOUT_EARLY, "checkout"), (SEARCH_EARLY, "search"),
                             (SEARCH_LATE, "search")):
        for measure, total in measure_totals(profile).items():
            by_service = totals.setdefault(measure, {})
            by_service[service] = by_service.get(service, 0) + PERIODS * total
    measure_order = ["cpu-samples", "alloc-bytes", "alloc-objects", "live-bytes",
                     "live-objects", "monitor-time"]  # the measures' order in the store's API

    serve = driver = None
    try:
        serve = StoreServe(a.jvmprof, db, work)

        def get(path):
            req = urllib.request.Request(serve.base + path,
                                         headers={"X-Jvmprof-Token": serve.token})
            try:
                with urllib.request.urlopen(req, timeout=60) as r:
                    return r.status, r.read().decode()
            except urllib.error.HTTPError as e:
                return e.code, e.read().decode()

        # The routes: known answers and one-line errors.
        status, body = get("/api/history/labels")
        check(status == 200 and json.loads(body) == {"env": ["prod"],
                                                    "service": ["checkout", "search"]},
              "labels: %s %s" % (status, body))
        status, body = get("/api/history/jvms")
        check(status == 200 and sorted(j["periods"] for j in json.loads(body)) == [5, 10],
              "jvms: %s %s" % (status, body))
        status, body = get("/api/history/flame?from=%d&to=%d&match=service%%3Dcheckout"
                           "&format=collapsed" % (t0, t0 + 20 * MINUTE))
        check(status == 200 and "app.Main.main;app.Checkout.hot 300" in body.splitlines(),
              "collapsed checkout: %s %s" % (status, body))
        for bad in ("/api/history/flame?from=yesterday", "/api/history/flame?measure=nope",
                    "/api/history/timeline?from=%d&to=%d&bucket=1" % (t0, t0 + 20 * MINUTE),
                    "/api/history/diff?from=-1h&to=now", "/api/history/flame?match=novalue"):
            status, body = get(bad)
            check(status == 400 and "error" in json.loads(body), "%s: %s %s" % (bad, status, body))

        if no_browser:
            if not failures:
                print("skipped: the routes answer as known; the page needs a browser: " +
                      no_browser)
                return 77
            return finish("history_browser")
        from selenium.webdriver.common.keys import Keys
        from selenium.webdriver.support.ui import Select
        driver = start_chromium(work, "1400,1100")
        driver.get(serve.url)
        wait_until(lambda: driver.find_element("id", "history-open").is_displayed(), 60)
        driver.find_element("id", "history-open").click()
        wait_until(lambda: driver.find_elements("id", "history-from"), 30)
        # A window from a minute before minute 0 to minute 20, typed into the form.
        for field, value in (("history-from", t0 - MINUTE), ("history-to", t0 + 20 * MINUTE)):
            box = driver.find_element("id", field)
            box.send_keys(Keys.CONTROL, "a")
            box.send_keys(str(value))
        group = driver.find_element("id", "history-group")
        wait_until(lambda: "service" in [o.text for o in group.find_elements("css selector",
                                                                             "option")], 30)
        Select(group).select_by_visible_text("service")
        driver.find_element("id", "history-apply").click()

        # A timeline per measure, stacked by service: each measure's bars add up to its known
        # total per service.
        def bar_totals():
            return driver.execute_script(
                "var all = {}, svgs = document.querySelectorAll('#history-timeline svg');"
                "for (var s of svgs) {"
                "  if (s.getAttribute('data-from-ms') != arguments[0]) return null;"
                "  var t = all[s.getAttribute('data-measure')] = {};"
                "  s.querySelectorAll('rect.history-bar').forEach(function (r) {"
                "    var v = r.getAttribute('data-value');"
                "    t[v] = (t[v] || 0) + Number(r.getAttribute('data-total')); }); }"
                "return svgs.length ? all : null;",
                str(t0 - MINUTE))
        wait_until(lambda: bar_totals() == totals, 60)
        check(bar_totals() == totals, "timeline totals per measure by service: %r, want %r"
              % (bar_totals(), totals))

        def timelines():
            return driver.execute_script(
                "return Array.from(document.querySelectorAll('#history-timeline svg'))"
                ".map(s => s.getAttribute('data-measure'))")
        check(timelines() == measure_order, "timelines %r, want %r" % (timelines(), measure_order))
        check(wait_hottest(driver, "app.Search.scan") == "app.Search.scan",
              "whole window: hottest %r, want app.Search.scan" % hottest(driver))
        shot(driver, a.screenshots, "jvmprof-history-window.png")

        # Drag minutes 0-5 on the second timeline (alloc-bytes): that measure's graph, led by the
        # checkout JVM's allocation site; the range is selected on every timeline.
        want = "app.Checkout.cart \u2192 byte[]"
        drag(driver, t0 + 10_000, t0 + 5 * MINUTE - 10_000, measure_order[1])
        check(wait_hottest(driver, want) == want,
              "minutes 0-5 on %s: hottest %r, want %r" % (measure_order[1], hottest(driver), want))
        check("measure=%s" % measure_order[1] in driver.current_url and
              "selFrom=%d" % t0 in driver.current_url,
              "the address carries the measure and selection: %s" % driver.current_url)
        check(Select(driver.find_element("id", "history-measure")).first_selected_option.text ==
              measure_order[1], "the measure picker shows the dragged timeline's measure")
        wait_until(lambda: len(driver.find_elements(
            "css selector", "#history-timeline svg rect.history-sel")) == len(measure_order), 30)
        sel = driver.execute_script(
            "return Array.from(document.querySelectorAll('#history-timeline svg'))"
            ".map(function (s) {"
            "  var r = s.querySelector('rect.history-sel'); return r && [r.getAttribute('x'),"
            "  r.getAttribute('width')].join(); })")
        check(len(sel) == len(measure_order) and None not in sel and len(set(sel)) == 1,
              "one selection on every timeline: %r" % sel)
        shot(driver, a.screenshots, "jvmprof-history-measure.png")

        # Drag minutes 0-5 on the first timeline (cpu-samples): the checkout JVM's hot method.
        drag(driver, t0 + 10_000, t0 + 5 * MINUTE - 10_000)
        check(wait_hottest(driver, "app.Checkout.hot") == "app.Checkout.hot",
              "minutes 0-5: hottest %r, want app.Checkout.hot" % hottest(driver))
        check("selFrom=%d" % t0 in driver.current_url and
              "selTo=%d" % (t0 + 5 * MINUTE) in driver.current_url,
              "the address carries the selection: %s" % driver.current_url)
        shot(driver, a.screenshots, "jvmprof-history-selected.png")

        # Filter by service=search: that group's hot method of minutes 0-5.
        label = driver.find_element("css selector",
                                    'button.history-label[data-label="service=search"]')
        label.click()
        check(wait_hottest(driver, "app.Search.index") == "app.Search.index",
              "minutes 0-5, service=search: hottest %r, want app.Search.index" % hottest(driver))
        check(driver.find_element("id", "history-filter").get_attribute("value") ==
              "service=search", "the filter box shows the label")
        shot(driver, a.screenshots, "jvmprof-history-filtered.png")

        # The address reopens the same view.
        url = driver.current_url
        check("match=service%3Dsearch" in url and "measure=cpu-samples" in url,
              "the address carries filter and measure: %s" % url)
        reopen(driver, url)
        check(wait_hottest(driver, "app.Search.index") == "app.Search.index",
              "reopened %s: hottest %r, want app.Search.index" % (url, hottest(driver)))
        wait_until(lambda: driver.find_element("id", "history-filter").get_attribute("value"), 30)
        check(driver.find_element("id", "history-filter").get_attribute("value") ==
              "service=search" and
              driver.find_element("id", "history-from").get_attribute("value") ==
              str(t0 - MINUTE) and
              Select(driver.find_element("id", "history-group")).first_selected_option.text ==
              "service", "reopened: the same filter, window and grouping")

        # Compare minutes 0-5 (before) with minutes 10-15 (after), service=search.
        wait_until(lambda: driver.find_elements("css selector", "#history-timeline svg"), 30)
        driver.find_element("id", "history-compare").click()
        wait_until(lambda: "now drag" in driver.find_element("id", "history-selected").text, 30)
        drag(driver, t0 + 10 * MINUTE + 10_000, t0 + 15 * MINUTE - 10_000)

        def delta(name):
            rows = driver.find_elements("css selector",
                                        '#history-graph tr.diff-row[data-name="%s"]' % name)
            return float(rows[0].get_attribute("data-delta")) if rows else None
        wait_until(lambda: delta("app.Search.scan") is not None, 60)
        check((delta("app.Search.scan") or 0) > 0.9 and (delta("app.Search.index") or 0) < -0.8,
              "diff: app.Search.scan grew (%r), app.Search.index shrank (%r)"
              % (delta("app.Search.scan"), delta("app.Search.index")))
        check("baseFrom=%d" % t0 in driver.current_url, "the address carries the base range")
        shot(driver, a.screenshots, "jvmprof-history-diff.png")
        reopen(driver, driver.current_url)
        wait_until(lambda: delta("app.Search.scan") is not None, 60)
        check((delta("app.Search.scan") or 0) > 0.9, "the diff's address reopens the diff")

        # Side by side: each range's graph, range and total (service=search, cpu-samples).
        side_totals = {"before": PERIODS * measure_totals(SEARCH_EARLY)["cpu-samples"],
                       "after": PERIODS * measure_totals(SEARCH_LATE)["cpu-samples"]}
        side_ranges = {"before": (t0, t0 + 5 * MINUTE),
                       "after": (t0 + 10 * MINUTE, t0 + 15 * MINUTE)}

        def side_view():
            heads = driver.execute_script(
                "return ['before', 'after'].map(function (s) {"
                "  var h = document.querySelector('#history-side-' + s + ' .history-side-head');"
                "  return h && [Number(h.getAttribute('data-from-ms')),"
                "    Number(h.getAttribute('data-to-ms')),"
                "    Number(h.getAttribute('data-total'))]; })")
            return {"before": (side_hottest(driver, "before"), heads[0]),
                    "after": (side_hottest(driver, "after"), heads[1])}
        want_side = {"before": ("app.Search.index", list(side_ranges["before"]) +
                                [side_totals["before"]]),
                     "after": ("app.Search.scan", list(side_ranges["after"]) +
                               [side_totals["after"]])}
        wait_until(lambda: driver.find_elements("id", "history-compare-mode"), 30)
        Select(driver.find_element("id", "history-compare-mode")).select_by_value("side")
        wait_until(lambda: side_view() == want_side, 60)
        check(side_view() == want_side, "side by side: %r, want %r" % (side_view(), want_side))
        check("compare=side" in driver.current_url, "the address carries side by side: %s"
              % driver.current_url)
        shot(driver, a.screenshots, "jvmprof-history-side.png")
        reopen(driver, driver.current_url)
        wait_until(lambda: side_view() == want_side, 60)
        check(side_view() == want_side, "reopened side by side: %r, want %r"
              % (side_view(), want_side))

        # The alloc-bytes timeline's name picks that measure for both sides (ranges kept).
        wait_until(lambda: driver.find_elements(
            "css selector", 'button.history-measure[data-measure="%s"]' % measure_order[1]), 30)
        driver.find_element("css selector", 'button.history-measure[data-measure="%s"]'
                            % measure_order[1]).click()
        want_sites = {"before": "app.Search.index \u2192 char[]",
                      "after": "app.Search.scan \u2192 long[]"}

        def side_sites():
            return {s: side_hottest(driver, s) for s in ("before", "after")}
        wait_until(lambda: side_sites() == want_sites, 60)
        check(side_sites() == want_sites, "side by side, %s: %r, want %r"
              % (measure_order[1], side_sites(), want_sites))
        check("measure=%s" % measure_order[1] in driver.current_url and
              "compare=side" in driver.current_url,
              "the address carries the picked measure: %s" % driver.current_url)
    finally:
        stop_all(driver, None, serve, work)
    return finish("history_browser")


if __name__ == "__main__":
    sys.exit(main())
