#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""jvmprof serve's object view, text heap dumps and dump comparison in real headless Chromium
(Debian chromium + chromium-driver, python3-selenium).

Known answers: hproftest.PlantedHeap holds a chain of 300 Node objects (the head's payload is
299, each node's `next` the one made before it) from the static field `chain`; LiveHog holds 5000
PlantedNode objects in an ArrayList. The test
  1. dumps PlantedHeap with HPROF (heap=dump,format=b) and opens the file in `jvmprof serve`;
     in the heap view it opens the chain's head from the histogram: the object view shows the
     payload 299, a `next` link to the node with payload 298, and the class as a referrer
     (static chain); following `next` shows the head among the new object's referrers;
  2. connects LiveHog with HPROF format=a (text) and net=, presses "dump heap": the text dump
     is indexed and its histogram shows the 5000 PlantedNode objects, one of which opens with
     the ArrayList's array as its referrer;
  3. compares the two dumps: +5000 PlantedNode and -300 Node, and sorting by a column orders
     the rows by it.
Screenshots go to --screenshots."""
import argparse
import os
import subprocess
import sys
import tempfile
import time

from browser_support import (Serve, check, finish, rows_of, shot, skip_reason, start_chromium,
                             stop_all, wait_for, wait_until)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jvmprof", required=True)
    ap.add_argument("--lib-dir", required=True, help="directory of libhprof.so")
    ap.add_argument("--classes", required=True, help="tests/jvmprof classes (LiveHog)")
    ap.add_argument("--hprof-classes", required=True, help="java/hprof-tests classes (PlantedHeap)")
    ap.add_argument("--jdk", required=True, help="JDK home")
    ap.add_argument("--screenshots", help="directory for the views' screenshots")
    a = ap.parse_args()
    java = os.path.join(a.jdk, "bin", "java")
    reason = skip_reason(a.jdk)
    if reason:
        print("skipped: " + reason)
        return 77
    for path in (a.jvmprof, os.path.join(a.lib_dir, "libhprof.so")):
        if not os.path.exists(path):
            print("error: %s does not exist" % path, file=sys.stderr)
            return 2

    work = tempfile.mkdtemp(prefix="jvmprof-heap-browser-")
    env = dict(os.environ, LD_LIBRARY_PATH=a.lib_dir)
    serve = jvm = driver = None
    try:
        # 1. PlantedHeap's binary dump, written by HPROF when the program ends.
        dump = os.path.join(work, "planted.hprof")
        planted = subprocess.Popen(
            [java, "-agentlib:hprof=heap=dump,format=b,file=" + dump, "-cp", a.hprof_classes,
             "hproftest.PlantedHeap"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=env, cwd=work, text=True)
        out, err = planted.communicate("\n", timeout=120)
        if not check(planted.returncode == 0 and os.path.exists(dump),
                     "PlantedHeap dumped its heap: " + err[-400:]):
            return 1

        serve = Serve(a.jvmprof, [dump], work=work)
        port, url = serve.port, serve.url
        driver = start_chromium(work, "1400,1400")
        driver.get(url)
        check(select_profile(driver, "planted.hprof"), "the dump file is listed and selected")
        open_tab(driver, "heap")
        head = open_first_instance(driver, "hproftest.PlantedHeap$Node")
        check(head is not None, "the chain's head opens from the histogram")
        if head is not None:
            fields = field_rows(driver)
            check(fields.get("payload") == ("long", "299"),
                  "the head's payload is 299: %r" % (fields,))
            check(fields.get("next", ("", ""))[1].startswith("hproftest.PlantedHeap$Node 0x"),
                  "next is a link to a Node: %r" % (fields.get("next"),))
            refs = wait_rows(driver, "table.referrer-list")
            check(any(r[0].startswith("class hproftest.PlantedHeap ") and r[1] == "static chain" for r in refs),
                  "the class refers to the head through static chain: %r" % (refs,))
            check(bool(driver.find_elements("css selector", ".heap-object pre.path a")),
                  "the path from a GC root links its objects")
            shot(driver, a.screenshots, "jvmprof-serve-heap-object.png")
            # Follow next: the node made before, whose referrer is the head.
            driver.execute_script(
                "var rows = document.querySelectorAll('table.object-fields tr');"
                "for (var r of rows) if (r.cells[0] && r.cells[0].textContent === 'next')"
                "  r.querySelector('a.object-link').click();")
            check(wait_until(lambda: field_rows(driver).get("payload") == ("long", "298")),
                  "following next opens the node with payload 298")
            refs = wait_rows(driver, "table.referrer-list")
            check(any(r[0] == head and r[1] == "next" for r in refs),
                  "the head is its referrer through next: %r" % (refs,))
            check(bool(driver.find_elements("css selector", ".heap-object button.page-back")),
                  "a back button returns to the head")

        # 2. LiveHog streaming HPROF's text format: "dump heap" brings a text heap dump.
        jvm = subprocess.Popen(
            [java, "-agentlib:hprof=heap=dump,format=a,net=127.0.0.1:" + port, "-cp", a.classes,
             "jvmproftest.LiveHog"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=env, cwd=work, text=True)
        check(jvm.stdout.readline().strip() == "READY", "LiveHog (format=a) started")
        check(select_profile(driver, "state: connected", live=True), "the text-format JVM is selected")
        driver.find_element("css selector", '#command-buttons button[data-command="dump-heap"]').click()
        open_tab(driver, "heap")
        row = None
        deadline = time.time() + 120
        while time.time() < deadline and row is None:
            row = histogram_row(driver, "jvmproftest.LiveHog$PlantedNode")
            if row is None:
                time.sleep(0.2)
        check(row is not None and row[1] == "5000",
              "the text heap dump's histogram counts the 5000 planted objects: %r" % (row,))
        driver.execute_script("document.getElementById('view').scrollIntoView()")
        shot(driver, a.screenshots, "jvmprof-serve-heap-text.png")
        node = open_first_instance(driver, "jvmproftest.LiveHog$PlantedNode")
        check(node is not None, "a planted object of the text dump opens")
        if node is not None:
            check(wait_for(driver, ".heap-object p.hint"), "the view says text dumps have no values")
            refs = wait_rows(driver, "table.referrer-list")
            check(any(r[0].startswith("java.lang.Object[]") and r[1].startswith("[") for r in refs),
                  "the ArrayList's array refers to it: %r" % (refs,))

        # 3. Compare the two dumps.
        ok = wait_for(driver, "#heap-diff-compare")
        check(ok, "the comparison offers both dumps")
        if ok:
            driver.execute_script(
                "var b = document.getElementById('heap-diff-before');"
                "for (var o of b.options) if (o.textContent.indexOf('planted.hprof') >= 0) b.value = o.value;"
                "var n = document.getElementById('heap-diff-after');"
                "for (var o of n.options) if (o.textContent.indexOf('planted.hprof') < 0) n.value = o.value;")
            driver.find_element("id", "heap-diff-compare").click()
            rows = wait_rows(driver, "table.heap-diff-table", seconds=120)
            by_class = {r[0]: r for r in rows}
            check(by_class.get("jvmproftest.LiveHog$PlantedNode", [None, None])[1] == "+5,000",
                  "+5000 PlantedNode: %r" % (by_class.get("jvmproftest.LiveHog$PlantedNode"),))
            check(by_class.get("hproftest.PlantedHeap$Node", [None, None])[1] == "-300",
                  "-300 Node: %r" % (by_class.get("hproftest.PlantedHeap$Node"),))
            driver.find_element("css selector", 'table.heap-diff-table th[data-sort="instances"]').click()
            growth = [number(r[1]) for r in wait_rows(driver, "table.heap-diff-table")]
            check(growth == sorted(growth, reverse=True) and growth[0] == 5000,
                  "sorted by +instances, biggest first: %r" % (growth[:5],))
            driver.execute_script("document.querySelector('.heap-diff').scrollIntoView()")
            shot(driver, a.screenshots, "jvmprof-serve-heap-diff.png")
            driver.find_element("css selector", 'table.heap-diff-table th[data-sort="instances"]').click()
            growth = [number(r[1]) for r in wait_rows(driver, "table.heap-diff-table")]
            check(growth == sorted(growth), "a second click reverses the order")
    finally:
        stop_all(driver, jvm, serve, work)
    return finish("heap browser")


def number(text):
    return int(text.replace(",", "").replace("+", ""))


def wait_rows(driver, table, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        rows = rows_of(driver, table)
        if rows:
            return rows
        time.sleep(0.1)
    return []


def field_rows(driver):
    """The object view's fields: name -> (type, value)."""
    return {r[0]: (r[1], r[3]) for r in rows_of(driver, "table.object-fields") if len(r) >= 4}


def histogram_row(driver, name):
    for r in rows_of(driver, "table.histogram"):
        if r and r[0] == name:
            return r
    return None


def open_first_instance(driver, class_name, seconds=120):
    """Histogram -> the class's instances -> the first (biggest retained); returns the object
    view's title ("class 0x..."), or None."""
    deadline = time.time() + seconds
    while time.time() < deadline and histogram_row(driver, class_name) is None:
        time.sleep(0.2)
    if histogram_row(driver, class_name) is None:
        return None
    driver.execute_script(
        "for (var a of document.querySelectorAll('table.histogram a.action'))"
        "  if (a.textContent === arguments[0]) { a.click(); break; }", class_name)
    if not wait_for(driver, "table.instances a.action"):
        return None
    driver.find_elements("css selector", "table.instances a.action")[0].click()
    if not wait_for(driver, ".heap-object h4.object-title"):
        return None
    return driver.find_element("css selector", ".heap-object h4.object-title").text


def open_tab(driver, tab):
    driver.find_element("css selector", '#tabs button[data-tab="%s"]' % tab).click()


def select_profile(driver, text, live=False, seconds=60):
    """Clicks profiles in the list until the one shown has `text` in its name or state."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            for li in driver.find_elements("css selector", "#profile-list li"):
                if live and "live," not in li.text:
                    continue
                li.click()
                time.sleep(0.3)
                shown = driver.find_element("id", "profile-name").text + " " + \
                    driver.find_element("id", "profile-state").text
                if text in shown:
                    return True
        except Exception:
            pass
        time.sleep(0.2)
    return False


if __name__ == "__main__":
    sys.exit(main())
