#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""jvmprof serve in real headless Chromium (Debian chromium + chromium-driver, python3-selenium).

Starts `jvmprof serve`, a JVM running jvmproftest.LiveHog under HPROF with net= to it, opens the
UI with the printed token, and checks what a user would see: the JVM appears, "CPU samples"
brings a flame graph whose hottest method is LiveHog.hotLoop, the call tree opens down to it with
the hot methods table's total, search, zoom, bottom-up and per thread (hotLoop under Burner) work,
"sites" brings an allocation flame graph with the planted objects (5000 allocated and live), the
threads view shows start and end times and a thread whose name is markup as text (no element, no
script run), and "exit JVM" ends the JVM only after the confirmation dialog; a format=b JVM's
"dump heap" brings the heap views (an indexing bar until the summary is answered, histogram with
the 5000 planted objects, the dominator tree object retaining them and, expanded downwards, the
planted objects below it, 50 duplicate strings, their
path from a GC root); a planted deadlock is drawn as a cycle with each thread's trace and its
locks' owners and waiters; hproftest.Contention's 5 contended enters are in the contention table;
hproftest.CallTree under cpu=times shows its exact calls per method; two profiles of a program
whose hot method's share moves by a known amount give a differential flame graph that shows that
change. Requests without the token or with a foreign Host are refused.
Screenshots of each view go to --screenshots."""
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

from browser_support import (Serve, check, finish, rows_of, shot, skip_reason, start_chromium,
                             stop_all, texts, wait_for, wait_until)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--jvmprof", required=True)
    ap.add_argument("--lib-dir", required=True)
    ap.add_argument("--classes", required=True)
    ap.add_argument("--hprof-classes", required=True, help="java/hprof-tests classes (Deadlock)")
    ap.add_argument("--jdk", required=True, help="JDK home")
    ap.add_argument("--screenshots", help="directory for the views' screenshots")
    a = ap.parse_args()
    java = os.path.join(a.jdk, "bin", "java")
    reason = skip_reason(a.jdk)
    if reason:
        print("skipped: " + reason)
        return 77
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    work = tempfile.mkdtemp(prefix="jvmprof-browser-")
    serve = jvm = driver = None
    try:
        serve = Serve(a.jvmprof, work=work)
        port, url, base, token = serve.port, serve.url, serve.base, serve.token
        check_security(base, url)

        env = dict(os.environ, LD_LIBRARY_PATH=a.lib_dir)
        jvm = subprocess.Popen(
            [java, "-agentlib:hprof=cpu=samples,heap=sites,sample=0,monitor=y,thread=y,depth=8,net=127.0.0.1:"
             + port,
             "-cp", a.classes, "jvmproftest.LiveHog"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
            cwd=work, text=True)
        check(jvm.stdout.readline().strip() == "READY", "LiveHog started")
        time.sleep(0)  # the profile is driven by commands below, not by time

        driver = start_chromium(work, "1400,1000")
        driver.get(url)
        # These checks drive the JVM by commands; the views' automatic refresh (which would
        # redraw them meanwhile) is tested by live_browser_test.py.
        driver.execute_script("var s = document.getElementById('refresh-every'); s.value = '0';"
                              "s.dispatchEvent(new Event('change'));")
        check(select_profile(driver, "state: connected"), "the JVM appears and can be selected")
        check("token" not in driver.current_url, "the token is removed from the address bar")

        # CPU: ask for samples until hotLoop has a few (the Burner runs all the time).
        hot = "jvmproftest.LiveHog.hotLoop"
        frame_sel = '.fg-frame[data-name="%s"]' % hot
        deadline = time.time() + 60
        while time.time() < deadline:
            click_command(driver, "cpu-samples")
            try:
                WebDriverWait(driver, 5).until(
                    lambda d: d.find_elements(By.CSS_SELECTOR, frame_sel))
                top = texts(driver, "tr.fg-hot td.fg-name")
                if top and top[0] == hot:
                    break
            except Exception:
                pass
        check(bool(driver.find_elements(By.CSS_SELECTOR, frame_sel)),
              "the CPU flame graph draws a frame for " + hot)
        top = texts(driver, "tr.fg-hot td.fg-name")
        check(bool(top) and top[0] == hot, "hot methods table ranks hotLoop first: %r"
              % (top[0] if top else None))
        shot(driver, a.screenshots, "jvmprof-serve-cpu.png")
        check_hot_methods_and_call_tree(driver, hot, a.screenshots)
        # search highlights it; bottom-up puts it right under the root
        box = driver.find_element(By.CSS_SELECTOR, "#view .fg-search")
        box.send_keys("hotLoop")
        check(bool(driver.find_elements(By.CSS_SELECTOR, frame_sel + ".fg-match")),
              "search highlights hotLoop")
        check(driver.find_element(By.CSS_SELECTOR, "#view .fg-matches").text.startswith("matched"),
              "search reports the matched share")
        check_zoom(driver, hot, a.screenshots)
        driver.find_element(By.CSS_SELECTOR, "#view .fg-invert").click()
        frames = driver.find_elements(By.CSS_SELECTOR, frame_sel)
        check(any(f.get_attribute("style").find("top: 18px") >= 0 for f in frames),
              "bottom-up: hotLoop is a child of the root")
        shot(driver, a.screenshots, "jvmprof-serve-cpu-bottom-up.png")
        driver.find_element(By.CSS_SELECTOR, "#view .fg-invert").click()  # top-down again
        check_per_thread(driver, hot, a.screenshots)

        # Allocation: sites, weighted by bytes, with the planted objects.
        click_command(driver, "sites")
        driver.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="alloc"]').click()
        planted = '.fg-frame[data-name="jvmproftest.LiveHog$PlantedNode"]'
        check(wait_for(driver, planted), "the allocation flame graph shows the PlantedNode site")
        shot(driver, a.screenshots, "jvmprof-serve-alloc.png")
        check_alloc_measures(driver, a.screenshots)

        # Threads: the marked-up name is text.
        driver.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="threads"]').click()
        check(wait_for(driver, "table.threads"), "threads table")
        names = []
        deadline = time.time() + 30  # the view redraws as threads arrive
        while time.time() < deadline and "Burner" not in names:
            names = texts(driver, "table.threads td")
            time.sleep(0.2)
        check("Burner" in names, "Burner is listed")
        check("<img src=x onerror=window.__jvmprofXss=1>" in names,
              "a thread name with markup is shown as text")
        check(not driver.find_elements(By.CSS_SELECTOR, "#view img"), "no <img> was created")
        check(driver.execute_script("return window.__jvmprofXss === undefined"),
              "no script from a thread name ran")
        check_thread_times(driver, running=True)
        shot(driver, a.screenshots, "jvmprof-serve-threads.png")
        driver.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="monitors"]').click()
        wait_for(driver, "#view pre.dump")

        # Exit: dismissing the dialog sends nothing; accepting ends the JVM with status 0.
        driver.find_element(By.ID, "exit").click()
        WebDriverWait(driver, 10).until(lambda d: d.switch_to.alert).dismiss()
        time.sleep(0)
        check(jvm.poll() is None, "dismissing the exit dialog leaves the JVM running")
        driver.find_element(By.ID, "exit").click()
        WebDriverWait(driver, 10).until(lambda d: d.switch_to.alert).accept()
        try:
            code = jvm.wait(timeout=60)
        except subprocess.TimeoutExpired:
            code = None
        check(code == 0, "exit ends the JVM with status 0 (got %r)" % code)
        check(wait_for_text(driver, "profile-state", "ended"), "the UI shows the JVM ended")
        driver.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="threads"]').click()
        check_thread_times(driver, running=False)
        driver.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="cpu"]').click()
        check(wait_for(driver, frame_sel), "the profile stays viewable after the JVM ended")

        # Heap: a format=b JVM, "dump heap", the planted objects in the histogram, their paths.
        jvm_b = subprocess.Popen(
            [java, "-agentlib:hprof=cpu=samples,heap=sites,format=b,net=127.0.0.1:" + port,
             "-cp", a.classes, "jvmproftest.LiveHog"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
            cwd=work, text=True)
        try:
            check(jvm_b.stdout.readline().strip() == "READY", "LiveHog (format=b) started")
            check(select_profile(driver, "state: connected"), "the format=b JVM can be selected")
            hold_heap_summary(driver)
            click_command(driver, "dump-heap")
            driver.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="heap"]').click()
            check(wait_for(driver, "#view .heap-status progress.heap-indexing"),
                  "while the dump is indexed (the summary not answered yet) a progress bar shows")
            check("indexing the heap dump" in " ".join(texts(driver, "#view .heap-status")),
                  "and says the dump is being indexed")
            shot(driver, a.screenshots, "jvmprof-serve-heap-indexing.png")
            release_heap_summary(driver)
            planted_row = None
            deadline = time.time() + 120
            while time.time() < deadline and planted_row is None:
                cells = texts(driver, "table.histogram td")
                for i in range(0, len(cells) - 3, 4):
                    if cells[i] == "jvmproftest.LiveHog$PlantedNode":
                        planted_row = cells[i:i + 4]
                if planted_row is None:
                    time.sleep(0.2)
            check(planted_row is not None and planted_row[1] == "5000",
                  "the heap histogram counts the 5000 planted objects: %r" % (planted_row,))
            shot(driver, a.screenshots, "jvmprof-serve-heap.png")
            check_dominators_and_strings(driver, a.screenshots)
            check_dominator_tree(driver, a.screenshots)
            if planted_row is not None:
                check(click_when_there(
                    driver, lambda: driver.find_element(By.LINK_TEXT, "jvmproftest.LiveHog$PlantedNode")),
                    "the planted class's row links to its instances")
                check(wait_for(driver, "table.instances a.action"), "instances of a class listed")
                check(click_when_there(
                    driver, lambda: driver.find_elements(By.CSS_SELECTOR, "table.instances a.action")[0]),
                    "an instance can be opened")
                check(wait_for(driver, "pre.path"), "a path from a GC root is drawn")
                path = driver.find_element(By.CSS_SELECTOR, "pre.path").text
                check("java.util.ArrayList" in path and "PlantedNode" in path,
                      "the path runs through LiveHog's ArrayList: " + path)
                shot(driver, a.screenshots, "jvmprof-serve-heap-path.png")
        finally:
            jvm_b.kill()
            jvm_b.wait()

        # A planted deadlock (hproftest.Deadlock: two threads, LockA and LockB in opposite
        # orders) drawn as a cycle from the MONITOR DUMP HPROF sends when the JVM exits.
        # Which profile is the Deadlock JVM's is asked of the server (the newest one whose
        # MONITOR DUMP has been read), never guessed from the page: the page's list is refreshed
        # once a second and may not show the new JVM yet, and clicking "the last profile" then
        # selected the format=b JVM, which has no monitor dump (why this check used to fail).
        jvms = Jvms(java, env, work, port, base, token)
        dl_profile = jvms.run_to_profile("monitor=y,thread=y", a.hprof_classes,
                                         ["hproftest.Deadlock", "exit"], "MONITOR DUMP", "Deadlock")
        if dl_profile is not None:
            check(select_profile_id(driver, dl_profile["id"], dl_profile["name"]),
                  "the Deadlock JVM's profile can be selected")
            driver.execute_script(
                "document.querySelector('#tabs button[data-tab=\"monitors\"]').click()")
            check(wait_for(driver, "svg.cycle"), "the deadlock is drawn as a cycle")
            threads = texts(driver, "svg.cycle .cycle-thread")
            monitors = texts(driver, "svg.cycle .cycle-monitor")
            check(len(threads) == 2 and any(t.startswith("Deadlock-1") for t in threads)
                  and any(t.startswith("Deadlock-2") for t in threads),
                  "the cycle's threads are Deadlock-1 and Deadlock-2: %r" % threads)
            check(sorted(monitors) == ["Lhproftest/Deadlock$LockA;", "Lhproftest/Deadlock$LockB;"],
                  "the cycle's monitors are LockA and LockB: %r" % monitors)
            traces = texts(driver, ".deadlock pre.trace")
            check(len(traces) == 2 and all("hproftest.Deadlock.lockBoth" in t for t in traces),
                  "each thread's trace is shown, in lockBoth: %r" % traces)
            shot(driver, a.screenshots, "jvmprof-serve-deadlock.png")
            check_monitor_dump(driver, a.screenshots)

        # Contention: 5 rounds, each one contended enter of Contention$Lock in enterLock.
        contention = jvms.run_to_profile("monitor=y", a.hprof_classes,
                                         ["hproftest.Contention", "5"], "MONITOR TIME", "Contention")
        if contention is not None:
            check_contention(driver, contention, a.screenshots)

        # cpu=times: hproftest.CallTree's calls are known exactly (a 3, b 6, c 9, ...).
        times = jvms.run_to_profile("cpu=times,depth=8,cutoff=0", a.hprof_classes,
                                    ["hproftest.CallTree"], "CPU TIME", "CallTree")
        if times is not None:
            check_cpu_times(driver, times, a.screenshots)

        # Differential flame graph of two live sessions: ShiftHog puts 20 %, then 70 % of its
        # work in hotA; the Diff tab of the second, against the first, shows hotA up ~50 points.
        ids = []
        for percent in (20, 70):
            ids.append(jvms.run_to_profile("cpu=samples,depth=6", a.classes,
                                           ["jvmproftest.ShiftHog", str(percent), "2000"],
                                           "CPU SAMPLES", "ShiftHog %d" % percent))
        if all(ids):
            check(select_profile_id(driver, ids[1]["id"], ids[1]["name"]),
                  "the second ShiftHog profile can be selected")
            driver.execute_script("document.querySelector('#tabs button[data-tab=\"diff\"]').click()")
            check(wait_for(driver, "#diff-base"), "the Diff tab offers a base profile")
            driver.execute_script(
                "var s = document.getElementById('diff-base'); s.value = arguments[0];"
                "s.dispatchEvent(new Event('change'));", str(ids[0]["id"]))
            # The tab first draws against its default base (another profile): wait for the one
            # chosen here.
            row = ('.diff-box[data-base="%s"] tr.diff-row[data-name="jvmproftest.ShiftHog.hotA"]'
                   % ids[0]["name"])
            check(wait_for(driver, row), "the diff against the chosen base lists hotA")
            delta = driver.execute_script(
                "var r = document.querySelector(arguments[0]);"
                "return r ? parseFloat(r.getAttribute('data-total-delta')) : null;", row)
            check(delta is not None and 0.35 <= delta <= 0.6,
                  "hotA's total share grew by about 50 points: %r" % delta)
            check(wait_for(driver, '.diff-graph .fg-frame[data-name="jvmproftest.ShiftHog.hotA"]'),
                  "the differential flame graph draws hotA")
            shot(driver, a.screenshots, "jvmprof-serve-diff.png")

    finally:
        stop_all(driver, jvm, serve, work)
    return finish("browser")


def hot_methods(driver):
    """The hot methods table: name -> (self, total) as shown."""
    return {r[2]: (r[0], r[1]) for r in rows_of(driver, "#view table.fg-table") if len(r) == 3}


def check_hot_methods_and_call_tree(driver, hot, screenshots):
    """The call tree opens along the heaviest path down to the hot method, with the total the hot
    methods table gives it (hotLoop is reached by one path only: Burner's run -> lambda)."""
    # The table and the tree are read in one step, and again until they come from the same
    # drawing: a live profile may be drawn anew between two reads (more samples arrived).
    deadline = time.monotonic() + 15
    while True:
        rows, shown = driver.execute_script(
            "var t = document.querySelector('#view table.fg-table');"
            "var rows = t ? Array.from(t.querySelectorAll('tr')).slice(1).map("
            "  r => Array.from(r.cells).map(c => c.textContent)) : [];"
            "var shown = Array.from(document.querySelectorAll('#view .fg-tree summary'))"
            "  .filter(s => s.getClientRects().length > 0).map(s => s.textContent);"
            "return [rows, shown];")
        total = {r[2]: r[1] for r in rows if len(r) == 3}.get(hot)
        line = [t for t in shown if t.endswith("  " + hot)]
        if (len(line) == 1 and total is not None and line[0].startswith(total)) or \
                time.monotonic() > deadline:
            break
        time.sleep(0.2)
    check(total is not None and total.split(" ")[0] != "0",
          "the hot methods table gives hotLoop a total: %r" % (total,))
    shot(driver, screenshots, "jvmprof-serve-cpu-hot-methods.png", scroll_to="#view table.fg-table")
    check(len(line) == 1 and total is not None and line[0].startswith(total),
          "the call tree is open down to hotLoop with its total %r: %r" % (total, line))
    shot(driver, screenshots, "jvmprof-serve-cpu-call-tree.png", scroll_to="#view .fg-tree")
    driver.execute_script("window.scrollTo(0, 0)")


def frame_boxes(driver, name):
    """[left %, width %, top px] of every drawn frame with this name."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#view .fg-frame')).filter("
        "  f => f.getAttribute('data-name') === arguments[0]).map("
        "  f => [parseFloat(f.style.left), parseFloat(f.style.width), parseFloat(f.style.top)]);",
        name)


def check_zoom(driver, hot, screenshots):
    """Clicking hotLoop's caller zooms to it: the caller spans the width, hotLoop most of it,
    the root and the caller's ancestors are dimmed; "reset zoom" undoes it."""
    caller = driver.execute_script(
        "var f = Array.from(document.querySelectorAll('#view .fg-frame')).filter("
        "  f => f.getAttribute('data-name') === arguments[0])[0];"
        "if (!f) return null; var top = parseFloat(f.style.top);"
        "var x = parseFloat(f.style.left) + 0.01;"
        "var up = Array.from(document.querySelectorAll('#view .fg-frame')).filter(g =>"
        "  parseFloat(g.style.top) === top - 18 && parseFloat(g.style.left) <= x &&"
        "  x < parseFloat(g.style.left) + parseFloat(g.style.width))[0];"
        # The name is read before the click: the zoom redraws at once, reusing the frames' elements
        # in drawing order, so the clicked element may then hold another frame.
        "if (!up) return null; var name = up.getAttribute('data-name'); up.click(); return name;", hot)
    check(caller is not None, "hotLoop's caller frame can be clicked")
    if caller is None:
        return
    check(wait_until(lambda: any(w >= 99.99 for _, w, _ in frame_boxes(driver, caller))),
          "zoom: %s spans the whole width: %r" % (caller, frame_boxes(driver, caller)))
    boxes = frame_boxes(driver, hot)
    check(len(boxes) == 1 and boxes[0][1] > 50,
          "zoomed: hotLoop takes most of its caller's width: %r" % boxes)
    dimmed = texts(driver, "#view .fg-frame.fg-dim")
    check(len(dimmed) >= 1 and dimmed[0] == "all" and caller not in dimmed,
          "zoomed: the root and the caller's ancestors are dimmed: %r" % dimmed)
    shot(driver, screenshots, "jvmprof-serve-cpu-zoom-search.png")
    driver.find_element("css selector", "#view .fg-reset").click()
    check(wait_until(lambda: not driver.find_elements("css selector", "#view .fg-frame.fg-dim")),
          "reset zoom draws the whole profile again (no dimmed ancestors)")


def check_per_thread(driver, hot, screenshots):
    """Per thread: the threads are the root's children and all of hotLoop lies under Burner."""
    driver.execute_script("var c = document.getElementById('per-thread');"
                          "if (!c.checked) c.click();")
    check(wait_until(lambda: frame_boxes(driver, "thread Burner")),
          "per thread: a frame for the thread Burner")
    burner = frame_boxes(driver, "thread Burner")
    hot_boxes = frame_boxes(driver, hot)
    check(len(burner) == 1 and burner[0][2] == 18.0,
          "per thread: Burner is a child of the root: %r" % burner)
    check(bool(burner) and bool(hot_boxes) and all(
        burner[0][0] - 0.01 <= x and x + w <= burner[0][0] + burner[0][1] + 0.01
        for x, w, _ in hot_boxes),
          "per thread: every hotLoop frame lies under Burner: %r in %r" % (hot_boxes, burner))
    shot(driver, screenshots, "jvmprof-serve-cpu-per-thread.png")
    driver.execute_script("document.getElementById('per-thread').click()")
    check(wait_until(lambda: not frame_boxes(driver, "thread Burner")),
          "per thread off: one tree again")


def select_measure(driver, measure):
    driver.execute_script(
        "var s = document.getElementById('measure'); s.value = arguments[0];"
        "s.dispatchEvent(new Event('change'));", measure)
    return wait_for(driver, '#view .fg-graph[data-measure="%s"]' % measure)


def check_alloc_measures(driver, screenshots):
    """LiveHog allocates its 5000 PlantedNode objects at one site and keeps them all: weighted by
    objects, allocated and live, the site is 5000; live bytes equal allocated bytes there."""
    planted = "jvmproftest.LiveHog$PlantedNode"
    offered = texts(driver, "#measure option")
    check(offered == ["alloc-bytes", "alloc-objects", "live-bytes", "live-objects"],
          "the allocation view offers bytes and objects, allocated and live: %r" % offered)
    values = {}
    for measure in ("alloc-objects", "live-objects", "alloc-bytes", "live-bytes"):
        shown = select_measure(driver, measure) and wait_for(
            driver, '#view .fg-frame[data-name="%s"]' % planted)
        values[measure] = driver.execute_script(
            "return Array.from(document.querySelectorAll('#view .fg-frame')).filter("
            "  f => f.getAttribute('data-name') === arguments[0]).reduce("
            "  (s, f) => s + parseInt(f.getAttribute('data-value'), 10), 0);", planted) \
            if shown else None
        if measure == "alloc-objects":
            shot(driver, screenshots, "jvmprof-serve-alloc-objects.png")
        if measure == "live-bytes":
            shot(driver, screenshots, "jvmprof-serve-alloc-live.png")
    check(values["alloc-objects"] == 5000 and values["live-objects"] == 5000,
          "PlantedNode: 5000 objects allocated and live: %r" % values)
    check(bool(values["alloc-bytes"]) and values["alloc-bytes"] == values["live-bytes"]
          and values["alloc-bytes"] % 5000 == 0,
          "PlantedNode: live bytes = allocated bytes = 5000 x its size: %r" % values)
    select_measure(driver, "alloc-bytes")


CLOCK = r"^\d\d:\d\d:\d\d\.\d\d\d$"


def check_thread_times(driver, running):
    """Threads carry the time their START / END arrived: the marked-up thread started and ended
    before READY; Burner runs until the JVM exits (running=False: after it has)."""
    marked = "<img src=x onerror=window.__jvmprofXss=1>"

    def rows():
        return {r[1]: r for r in rows_of(driver, "table.threads") if len(r) == 7}

    def settled():
        r = rows()
        return marked in r and "Burner" in r and (r["Burner"][3] == "running") == running
    check(wait_until(settled), "the threads view lists Burner %s" % ("running" if running else "ended"))
    r = rows()
    m, b = r.get(marked, [""] * 7), r.get("Burner", [""] * 7)
    check(m[3] == "ended" and re.match(CLOCK, m[4]) and re.match(CLOCK, m[5])
          and m[6].endswith(" s") and float(m[6][:-2]) >= 0,
          "the marked thread shows its start, end and run time: %r" % (m,))
    if running:
        check(re.match(CLOCK, b[4]) and b[5] == "" and b[6] == "",
              "Burner shows a start time and no end while it runs: %r" % (b,))
    else:  # a daemon thread gets no THREAD END when the JVM exits; either way it is not running
        check(re.match(CLOCK, b[4]) and (b[3] == "no end seen" and b[5] == "" or
                                         b[3] == "ended" and re.match(CLOCK, b[5])),
              "once the JVM exited Burner is no longer shown running: %r" % (b,))


def hold_heap_summary(driver):
    """Holds the page's requests for the heap summary (what the heap view waits for while the
    server indexes the dump) until release_heap_summary(): the indexing state is then on screen
    for as long as the test looks, however fast this machine indexes."""
    driver.execute_script(
        "window.__jvmprofHeld = []; window.__jvmprofHold = true;"
        "var plain = window.fetch;"
        "window.fetch = function (url, options) {"
        "  if (!window.__jvmprofHold || String(url).indexOf('/heap/summary') < 0)"
        "    return plain(url, options);"
        "  return new Promise(function (done) {"
        "    window.__jvmprofHeld.push(function () { done(plain(url, options)); }); });"
        "};")


def release_heap_summary(driver):
    driver.execute_script(
        "window.__jvmprofHold = false; window.__jvmprofHeld.forEach(function (go) { go(); });"
        "window.__jvmprofHeld = [];")


def check_dominators_and_strings(driver, screenshots):
    """LiveHog's list holds all 5000 PlantedNode objects: an object of the dominator tree retains
    them; its 50 equal strings "jvmprof-duplicate" are listed as duplicates with 50 copies."""
    planted = "5000 jvmproftest.LiveHog$PlantedNode"

    def dominators():
        return [r for r in rows_of(driver, "#view table.dominators") if len(r) == 4]
    check(wait_until(dominators), "the dominator tree's biggest objects are listed")

    # The table may be drawn again while the view refreshes (a live profile), so the holder row is
    # waited for rather than read from the first rows seen.
    holders = []

    def holders_of_planted():
        holders[:] = [r for r in dominators() if planted in r[3].split(", ")]
        return holders
    wait_until(holders_of_planted)
    check(bool(holders) and any(r[0].startswith(("java.util.ArrayList 0x", "java.lang.Object[] 0x"))
                                for r in holders),
          "the ArrayList (or its array) retains the 5000 planted objects: %r" % (holders[:3],))
    shot(driver, screenshots, "jvmprof-serve-heap-dominators.png",
         scroll_to="#view table.dominators")

    def duplicate():
        return [r for r in rows_of(driver, "#view table.strings") if r and r[0] == "jvmprof-duplicate"]
    check(wait_until(duplicate), "the duplicate strings list jvmprof-duplicate")
    row = duplicate()
    check(bool(row) and row[0][1] == "50", "jvmprof-duplicate has 50 copies: %r" % (row,))
    shot(driver, screenshots, "jvmprof-serve-heap-strings.png", scroll_to="#view table.strings")
    driver.execute_script("window.scrollTo(0, 0)")


# One step down the dominator tree below the holder of LiveHog's planted objects (marked
# data-jvmprof-test=holder): expands the ArrayList's array, else pages on with "more…", until
# PlantedNode rows show; then returns [indent, "shallow S, retained R", has a toggle] of each.
DOMTREE_STEP = """
var planted = 'jvmproftest.LiveHog$PlantedNode 0x';
var cell = document.querySelector('[data-jvmprof-test=holder]');
if (!cell) {
  var rows = Array.from(document.querySelectorAll('#view table.dominators tr')).slice(1).filter(
    r => r.cells.length === 4 && r.cells[3].textContent.split(', ').indexOf('5000 ' + planted.slice(0, -3)) >= 0);
  var pick = p => rows.find(r => r.cells[0].querySelector('a').textContent.startsWith(p));
  var row = pick('java.util.ArrayList 0x') || pick('java.lang.Object[] 0x');
  if (!row) return 'no holder';
  cell = row.cells[0];
  cell.setAttribute('data-jvmprof-test', 'holder');
  cell.querySelector('button.domtree-toggle').click();
  return 'holder opened';
}
var found = Array.from(cell.querySelectorAll('.domtree-row')).filter(
  r => r.querySelector('a').textContent.startsWith(planted));
if (found.length) return found.map(r => [r.style.paddingLeft, r.querySelector('.domtree-size').textContent,
                                         !!r.querySelector('button.domtree-toggle')]);
var array = Array.from(cell.querySelectorAll('.domtree-row')).find(
  r => r.querySelector('a').textContent.startsWith('java.lang.Object[] 0x'));
var toggle = array && array.querySelector('button.domtree-toggle');
if (toggle && toggle.textContent === '+') { toggle.click(); return 'array opened'; }
var more = cell.querySelectorAll('.domtree-more a');
if (more.length) { more[more.length - 1].click(); return 'more'; }
return 'waiting';
"""


def check_dominator_tree(driver, screenshots):
    """Down the dominator tree: the holder of LiveHog's 5000 PlantedNode objects (the ArrayList,
    else its array) expands into its dominated children, the array into its elements: the
    planted objects, one level below the array, leaves (retained = shallow), paged by "more…"
    (the 50 bigger strings of the same list come first)."""
    check(wait_for(driver, "#view .domtree > .domtree-row"), "the dominator tree's top is listed")
    found = []

    def step():
        got = driver.execute_script(DOMTREE_STEP)
        if isinstance(got, list):
            found.extend(got)
            return True
        return False
    check(wait_until(step), "expanding the planted list's holder shows PlantedNode objects")
    holder = driver.execute_script(
        "return document.querySelector('[data-jvmprof-test=holder] a').textContent")
    # The ArrayList's child is the array (indent 1), whose children are the nodes (indent 2).
    indent = "36px" if holder.startswith("java.util.ArrayList") else "18px"
    check(0 < len(found) <= 50 and all(f[0] == indent for f in found),
          "a page of PlantedNode rows, indented below %s: %r" % (holder, found[:3]))
    sizes = [re.match(r"shallow (\d+), retained (\d+)$", f[1]) for f in found]
    check(all(m and m.group(1) == m.group(2) and int(m.group(1)) > 0 for m in sizes) and
          not any(f[2] for f in found),
          "each PlantedNode retains only itself and has no toggle: %r" % (found[:3],))
    check(bool(texts(driver, "[data-jvmprof-test=holder] .domtree-more a")),
          "more of the list's 5050 elements can be paged in")
    # The first planted row in the middle of the picture, the array's row and "more…" around it.
    driver.execute_script(
        "var r = Array.from(document.querySelectorAll('[data-jvmprof-test=holder] .domtree-row'))"
        "  .find(r => r.textContent.indexOf('PlantedNode') >= 0);"
        "if (r) r.scrollIntoView({block: 'center'});")
    shot(driver, screenshots, "jvmprof-serve-heap-dominator-tree.png")
    driver.execute_script("window.scrollTo(0, 0)")


def check_monitor_dump(driver, screenshots):
    """The Deadlock JVM's monitor table: each lock is owned by one Deadlock thread while the
    other waits to enter it, crosswise."""
    rows = {r[0]: r for r in rows_of(driver, "#view table.monitor-dump") if len(r) == 5}
    a = rows.get("Lhproftest/Deadlock$LockA;", [""] * 5)
    b = rows.get("Lhproftest/Deadlock$LockB;", [""] * 5)
    check(a[1].startswith("Deadlock-") and b[1].startswith("Deadlock-") and a[1] != b[1]
          and a[3] == b[1] and b[3] == a[1],
          "owners and waiters of LockA and LockB cross: %r %r" % (a, b))
    shot(driver, screenshots, "jvmprof-serve-monitor-dump.png", scroll_to="#view table.monitor-dump")
    driver.execute_script("window.scrollTo(0, 0)")


def check_contention(driver, profile, screenshots):
    """MONITOR TIME of hproftest.Contention 5: Contention$Lock was entered contended 5 times, from
    enterLock."""
    check(select_profile_id(driver, profile["id"], profile["name"]),
          "the Contention profile can be selected")
    driver.execute_script("document.querySelector('#tabs button[data-tab=\"monitors\"]').click()")
    lock = "hproftest.Contention$Lock"

    def rows():
        return [r for r in rows_of(driver, "#view table.monitors") if len(r) == 5 and r[0] == lock]
    check(wait_until(rows), "the contention table lists Contention$Lock")
    got = rows()
    check(sum(int(r[3]) for r in got) == 5, "5 contended entries of Contention$Lock: %r" % got)
    check(all(r[4].split("\n")[0].startswith("hproftest.Contention.enterLock") for r in got),
          "each from enterLock: %r" % [r[4].split("\n")[0] for r in got])
    shot(driver, screenshots, "jvmprof-serve-monitors.png")


def check_cpu_times(driver, profile, screenshots):
    """cpu=times: the CPU view offers time and calls; by calls, each CallTree method's self count
    is its exact number of calls; a search narrows the hot methods table to CallTree's."""
    check(select_profile_id(driver, profile["id"], profile["name"]),
          "the CallTree profile can be selected")
    driver.execute_script("document.querySelector('#tabs button[data-tab=\"cpu\"]').click()")
    check(wait_until(lambda: texts(driver, "#measure option") == ["cpu-time", "cpu-calls"]),
          "cpu=times offers CPU time and calls: %r" % texts(driver, "#measure option"))
    select_measure(driver, "cpu-calls")
    # JDK methods called thousands of times fill the table's 50 rows: search narrows it.
    driver.find_element("css selector", "#view .fg-search").send_keys("hproftest.CallTree.")
    expected = {"tree": "1", "a": "3", "b": "6", "c": "9", "e": "4", "thrower": "4", "deeper": "4"}

    def calls():
        hot = hot_methods(driver)
        return {m: hot.get("hproftest.CallTree." + m, ("",))[0].split(" ")[0] for m in expected}
    check(wait_until(lambda: calls() == expected),
          "exact calls per method (self, by calls): %r" % calls())
    names = [r for r in hot_methods(driver)]
    check(bool(names) and all(n.startswith("hproftest.CallTree.") for n in names),
          "the search leaves only CallTree's methods in the table: %r" % names[:5])
    shot(driver, screenshots, "jvmprof-serve-cpu-times.png", scroll_to="#view table.fg-table")
    driver.execute_script("window.scrollTo(0, 0)")


class Jvms:
    """Runs a program to its end under HPROF with net= to the server and finds its profile."""

    def __init__(self, java, env, work, port, base, token):
        self.java, self.env, self.work = java, env, work
        self.port, self.base, self.token = port, base, token

    def run_to_profile(self, agent, classes, args, section, what):
        """The new profile once it has ended with `section` read (asked of the server, never
        guessed from the page, which refreshes its list only once a second), or None."""
        last = max([p["id"] for p in api_json(self.base, self.token, "/api/profiles")] or [-1])
        run = subprocess.run(
            [self.java, "-agentlib:hprof=%s,net=127.0.0.1:%s" % (agent, self.port), "-cp",
             classes, *args],
            stdin=subprocess.DEVNULL, capture_output=True, env=self.env, cwd=self.work,
            timeout=120)
        check(run.returncode == 0, "%s ran: %r" % (what, run.stderr[-300:]))
        got = wait_for_profile(self.base, self.token,
                               lambda p: p["id"] > last and p["state"] == "ended"
                               and p["sectionCounts"].get(section, 0) > 0)
        check(got is not None, "%s's %s reached the server" % (what, section))
        return got


def api_json(base, token, path):
    req = urllib.request.Request(base + path, headers={"X-Jvmprof-Token": token})
    with urllib.request.urlopen(req) as r:
        return json.loads(r.read().decode())


def wait_for_profile(base, token, pred, seconds=60):
    """The first profile the server lists for which pred holds, polling until it does."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        for p in api_json(base, token, "/api/profiles"):
            if pred(p):
                return p
        time.sleep(0.2)
    return None


def select_profile_id(driver, profile_id, name, seconds=60):
    """Clicks the profile with this id (once the page lists it) until it is the one shown: the
    heading shows `name`, or for a JVM that sent its identity the name the list shows it by."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        driver.execute_script(
            "var li = document.querySelector('#profile-list li[data-id=\"' + arguments[0] + '\"]');"
            "if (li) li.click();", str(profile_id))
        if driver.execute_script(
                "var li = document.querySelector('#profile-list li.selected');"
                "var shown = document.getElementById('profile-name').textContent;"
                "return shown === arguments[1] || (!!li && li.getAttribute('data-id') === "
                "arguments[0] && shown === li.firstChild.textContent);",
                str(profile_id), name):
            return True
        time.sleep(0.2)
    return False


def select_profile(driver, state_text, seconds=60):
    """Clicks the live, connected profiles in turn until the shown state contains state_text.
    The list is redrawn every second, so an element found may be replaced before the click."""
    from selenium.webdriver.common.by import By
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            for li in driver.find_elements(By.CSS_SELECTOR, "#profile-list li"):
                if "live, connected" in li.text:
                    li.click()
                    time.sleep(0.3)
                    if state_text in driver.find_element(By.ID, "profile-state").text:
                        return True
        except Exception:
            pass
        time.sleep(0.2)
    return False


def select_last_profile(driver, seconds=60):
    """Clicks the newest profile until it is the one shown."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        name = driver.execute_script(
            "var li = document.querySelectorAll('#profile-list li');"
            "if (!li.length) return null; var last = li[li.length - 1]; last.click();"
            "return last.firstChild.textContent;")
        time.sleep(0.3)
        if name and driver.execute_script(
                "return document.getElementById('profile-name').textContent") == name:
            return True
    return False


def click_when_there(driver, find, seconds=60):
    """Clicks what find() returns, trying again while the live view redraws it away (a find or a
    click on a replaced element fails); False when it never could within `seconds`."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            find().click()
            return True
        except Exception:
            time.sleep(0.2)
    return False


def click_command(driver, name):
    from selenium.webdriver.common.by import By
    driver.find_element(By.CSS_SELECTOR, '#command-buttons button[data-command="%s"]' % name).click()


def wait_for_text(driver, element_id, text, seconds=60):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    try:
        WebDriverWait(driver, seconds).until(
            lambda d: text in d.find_element(By.ID, element_id).text)
        return True
    except Exception:
        return False


def status(url, headers=None):
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {})) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def check_security(base, url):
    token = url.split("token=")[1]
    check(status(base + "/api/profiles") == 401, "no token: 401")
    check(status(base + "/api/profiles", {"X-Jvmprof-Token": "0" * len(token)}) == 401,
          "wrong token: 401")
    check(status(base + "/api/profiles", {"X-Jvmprof-Token": token}) == 200, "token header: 200")
    port = base.rsplit(":", 1)[1]
    check(status(base + "/api/profiles", {"X-Jvmprof-Token": token,
                                          "Host": "attacker.example:" + port}) == 403,
          "foreign Host (DNS rebinding): 403")
    check(status(base + "/api/profiles", {"X-Jvmprof-Token": token,
                                          "Origin": "http://attacker.example"}) == 403,
          "foreign Origin: 403")


if __name__ == "__main__":
    sys.exit(main())
