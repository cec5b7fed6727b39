#!/usr/bin/env python3
"""jvmprof serve in real headless Chromium (Debian chromium + chromium-driver, python3-selenium).

Starts `jvmprof serve`, a JVM running jvmproftest.LiveHog under HPROF with net= to it, opens the
UI with the printed token, and checks what a user would see: the JVM appears, "CPU samples"
brings a flame graph whose hottest method is LiveHog.hotLoop, search and bottom-up work, "sites"
brings an allocation flame graph with the planted objects, the threads view shows a thread whose
name is markup as text (no element, no script run), and "exit JVM" ends the JVM only after the
confirmation dialog; a format=b JVM's "dump heap" brings the heap views (histogram with the 5000
planted objects, their path from a GC root); a planted deadlock is drawn as a cycle with each
thread's trace; two saved profiles of a program whose hot method's share moves by a known amount
give a differential flame graph that shows that change. Requests without the token or with a
foreign Host are refused.
Screenshots of each view go to --screenshots."""
import argparse
import json
import os
import re
import shutil
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
    if not os.path.exists(java):
        print("skipped: no JDK at " + a.jdk)
        return 77
    try:
        from selenium import webdriver
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        print("skipped: python3-selenium is not installed")
        return 77
    if not shutil.which("chromedriver") or not shutil.which("chromium"):
        print("skipped: chromium / chromium-driver are not installed")
        return 77
    work = tempfile.mkdtemp(prefix="jvmprof-browser-")
    serve = subprocess.Popen([a.jvmprof, "serve", "--port", "0", "--ui-port", "0"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    jvm = driver = None
    try:
        agent_line = serve.stdout.readline()
        ui_line = serve.stdout.readline()
        port = re.search(r"net=127\.0\.0\.1:(\d+)", agent_line).group(1)
        url = re.search(r"(http://\S+)", ui_line).group(1)
        base = url.split("/?")[0]
        check_security(base, url)

        env = dict(os.environ, LD_LIBRARY_PATH=a.lib_dir)
        jvm = subprocess.Popen(
            [java, "-agentlib:hprof=cpu=samples,heap=sites,monitor=y,depth=8,net=127.0.0.1:" + port,
             "-cp", a.classes, "jvmproftest.LiveHog"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
            cwd=work, text=True)
        check(jvm.stdout.readline().strip() == "READY", "LiveHog started")
        time.sleep(0)  # the profile is driven by commands below, not by time

        opts = webdriver.ChromeOptions()
        for o in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000",
                  "--user-data-dir=" + os.path.join(work, "chrome")):
            opts.add_argument(o)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
        wait = WebDriverWait(driver, 60)
        driver.get(url)
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
        # search highlights it; bottom-up puts it right under the root
        box = driver.find_element(By.CSS_SELECTOR, "#view .fg-search")
        box.send_keys("hotLoop")
        check(bool(driver.find_elements(By.CSS_SELECTOR, frame_sel + ".fg-match")),
              "search highlights hotLoop")
        check(driver.find_element(By.CSS_SELECTOR, "#view .fg-matches").text.startswith("matched"),
              "search reports the matched share")
        driver.find_element(By.CSS_SELECTOR, "#view .fg-invert").click()
        frames = driver.find_elements(By.CSS_SELECTOR, frame_sel)
        check(any(f.get_attribute("style").find("top: 18px") >= 0 for f in frames),
              "bottom-up: hotLoop is a child of the root")
        shot(driver, a.screenshots, "jvmprof-serve-cpu-bottom-up.png")

        # Allocation: sites, weighted by bytes, with the planted objects.
        click_command(driver, "sites")
        driver.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="alloc"]').click()
        planted = '.fg-frame[data-name="jvmproftest.LiveHog$PlantedNode"]'
        check(wait_for(driver, planted), "the allocation flame graph shows the PlantedNode site")
        shot(driver, a.screenshots, "jvmprof-serve-alloc.png")

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
        shot(driver, a.screenshots, "jvmprof-serve-threads.png")
        driver.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="monitors"]').click()
        wait_for(driver, "#view pre.dump")
        shot(driver, a.screenshots, "jvmprof-serve-monitors.png")

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
            click_command(driver, "dump-heap")
            driver.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="heap"]').click()
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
        token = url.split("token=")[1]
        before = max(p["id"] for p in api_json(base, token, "/api/profiles"))
        dl = subprocess.run(
            [java, "-agentlib:hprof=monitor=y,thread=y,net=127.0.0.1:" + port,
             "-cp", a.hprof_classes, "hproftest.Deadlock", "exit"],
            stdin=subprocess.DEVNULL, capture_output=True, env=env, cwd=work, timeout=120)
        check(dl.returncode == 0, "Deadlock ran: %r" % dl.stderr[-300:])
        dl_profile = wait_for_profile(base, token, lambda p: p["id"] > before and p["state"] == "ended"
                                      and p["sectionCounts"].get("MONITOR DUMP", 0) > 0)
        check(dl_profile is not None, "the Deadlock JVM's MONITOR DUMP reached the server")
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

        # Differential flame graph of two live sessions: ShiftHog puts 20 %, then 70 % of its
        # work in hotA; the Diff tab of the second, against the first, shows hotA up ~50 points.
        ids = []
        for percent in (20, 70):
            last = max(p["id"] for p in api_json(base, token, "/api/profiles"))
            run = subprocess.run(
                [java, "-agentlib:hprof=cpu=samples,depth=6,net=127.0.0.1:" + port, "-cp",
                 a.classes, "jvmproftest.ShiftHog", str(percent), "2000"],
                stdin=subprocess.DEVNULL, capture_output=True, env=env, cwd=work, timeout=120)
            check(run.returncode == 0, "ShiftHog %d ran: %r" % (percent, run.stderr[-300:]))
            got = wait_for_profile(base, token, lambda p: p["id"] > last and p["state"] == "ended"
                                   and p["sectionCounts"].get("CPU SAMPLES", 0) > 0)
            check(got is not None, "ShiftHog %d's CPU SAMPLES reached the server" % percent)
            ids.append(got)
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
        if driver:
            driver.quit()
        if jvm and jvm.poll() is None:
            jvm.kill()
            jvm.wait()
        serve.terminate()
        try:
            serve.wait(timeout=20)
        except subprocess.TimeoutExpired:
            serve.kill()
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("browser: ok")
    return 0


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
    """Clicks the profile with this id (once the page lists it) until it is the one shown."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        driver.execute_script(
            "var li = document.querySelector('#profile-list li[data-id=\"' + arguments[0] + '\"]');"
            "if (li) li.click();", str(profile_id))
        if driver.execute_script(
                "return document.getElementById('profile-name').textContent") == name:
            return True
        time.sleep(0.2)
    return False


def texts(driver, selector):
    """The text of every element matching selector, read in one step (the UI redraws)."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0])).map(e => e.textContent)",
        selector)


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


def wait_for(driver, selector, seconds=60):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    try:
        WebDriverWait(driver, seconds).until(lambda d: d.find_elements(By.CSS_SELECTOR, selector))
        return True
    except Exception:
        return False


def wait_for_text(driver, element_id, text, seconds=60):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    try:
        WebDriverWait(driver, seconds).until(
            lambda d: text in d.find_element(By.ID, element_id).text)
        return True
    except Exception:
        return False


def shot(driver, directory, name):
    if directory:
        os.makedirs(directory, exist_ok=True)
        driver.save_screenshot(os.path.join(directory, name))


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
