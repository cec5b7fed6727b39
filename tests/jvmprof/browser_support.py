# SPDX-License-Identifier: Apache-2.0
"""What the browser tests share: known-answer checks, starting `jvmprof serve` (its agent port,
UI URL and token) and headless Chromium (Debian chromium + chromium-driver, python3-selenium),
waiting on conditions (never on time alone), screenshots, and stopping it all.

Not a test itself: the browser tests import it, and the serve tests without a browser import
stop_serve."""
import os
import re
import shutil
import subprocess
import sys
import time

failures = []


def check(cond, what):
    """Records a failed known answer (the test goes on, to report every failure at once)."""
    if not cond:
        failures.append(what)
        print("FAIL: " + what, flush=True)
    return cond


def finish(name):
    """The test's exit status from the checks made."""
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print(name + ": ok")
    return 0


def browser_missing():
    """Why headless Chromium cannot be driven here, or None."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "python3-selenium is not installed"
    if not shutil.which("chromedriver") or not shutil.which("chromium"):
        return "chromium / chromium-driver are not installed"
    return None


def skip_reason(jdk):
    """Why the test cannot run here (printed as "skipped: ..."), or None."""
    if not os.path.exists(os.path.join(jdk, "bin", "java")):
        return "no JDK at " + jdk
    return browser_missing()


class Serve:
    """`jvmprof serve` on free ports: `port` for agents (net=127.0.0.1:port), `url` with the
    token as printed, `base` without it, `token`."""

    def __init__(self, jvmprof, files=(), work=None):
        # serve's spool directory goes into `work` (TMPDIR), which stop_all removes even when
        # serve had to be killed and could not remove it itself.
        env = dict(os.environ, TMPDIR=work) if work else None
        self.proc = subprocess.Popen([jvmprof, "serve", "--port", "0", "--ui-port", "0", *files],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     env=env)
        # A note on spool directories removed at start (left by a serve that was killed) may
        # come before the agents' line.
        agent_line = self.proc.stdout.readline()
        while agent_line.startswith("jvmprof serve: removed "):
            agent_line = self.proc.stdout.readline()
        ui_line = self.proc.stdout.readline()
        agent = re.search(r"net=127\.0\.0\.1:(\d+)", agent_line)
        ui = re.search(r"(http://\S+)", ui_line)
        if not agent or not ui:
            self.stop()
            raise RuntimeError("jvmprof serve did not start: %r %r" % (agent_line, ui_line))
        self.port = agent.group(1)
        self.url = ui.group(1)
        self.base = self.url.split("/?")[0]
        self.token = self.url.split("token=")[1]

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def stop_serve(proc):
    """Ends a `jvmprof serve` process; returns what it printed (stdout, stderr)."""
    # serve blocks SIGTERM until its signal thread waits for it; repeat until it has gone.
    for _ in range(600):
        proc.terminate()
        try:
            return proc.communicate(timeout=0.5)
        except subprocess.TimeoutExpired:
            continue
    proc.kill()
    return proc.communicate()


def start_chromium(work, size):
    """Headless Chromium through chromedriver, its profile in `work`; size "W,H"."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions()
    for o in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=" + size,
              "--user-data-dir=" + os.path.join(work, "chrome")):
        opts.add_argument(o)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)


def stop_all(driver, jvm, serve, work):
    """Ends what a test started, whatever state it is in."""
    if driver:
        driver.quit()
    if jvm and jvm.poll() is None:
        jvm.kill()
        jvm.wait()
    if serve:
        serve.stop()
    shutil.rmtree(work, ignore_errors=True)


def wait_until(predicate, seconds=60):
    """True as soon as predicate() is (exceptions count as not yet: the UI redraws), polling."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if predicate():
                return True
        except Exception:
            pass
        time.sleep(0.1)
    return False


def wait_for(driver, selector, seconds=60):
    return wait_until(lambda: driver.find_elements("css selector", selector), seconds)


def texts(driver, selector):
    """The text of every element matching selector, read in one step (the UI redraws)."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0])).map(e => e.textContent)",
        selector)


def rows_of(driver, table):
    """Cell texts of a table's data rows, read in one step (the UI redraws)."""
    return driver.execute_script(
        "var t = document.querySelector(arguments[0]); if (!t) return [];"
        "return Array.from(t.querySelectorAll('tr')).slice(1).map("
        "  r => Array.from(r.cells).map(c => c.textContent));", table)


def shot(driver, directory, name, scroll_to=None):
    """Saves a screenshot of the page, first scrolling `scroll_to` (a selector) into view."""
    if not directory:
        return
    if scroll_to:
        driver.execute_script(
            "var e = document.querySelector(arguments[0]); if (e) e.scrollIntoView();", scroll_to)
    os.makedirs(directory, exist_ok=True)
    driver.save_screenshot(os.path.join(directory, name))


if __name__ == "__main__":
    print(__doc__)
    sys.exit(0 if len(sys.argv) == 1 or sys.argv[1] in ("-h", "--help") else 2)
