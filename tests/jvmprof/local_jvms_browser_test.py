#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""jvmprof serve's "Local JVMs" in headless Chromium (Debian chromium + chromium-driver,
python3-selenium), against jvmproftest.LiveHog started WITHOUT any agent:

- the JVM appears in the list, with its main class;
- "profile" attaches HPROF with net= to this serve: a live, connected profile appears, and its CPU
  samples rank LiveHog.hotLoop (what the Burner thread runs all the time) first;
- "stop" ends that profile (HPROF's final report, then it detaches): the profile is no longer
  connected, the list offers "profile" again, and the JVM runs on: it answers on stdin and exits 0;
- the list's API refuses requests without the token.
Screenshots go to --screenshots."""
import argparse
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from browser_support import (Serve, check, finish, shot, skip_reason, start_chromium, stop_all,
                             texts, wait_for, wait_until)

HOT = "jvmproftest.LiveHog.hotLoop"


def js(driver, script, *args):
    return driver.execute_script(script, *args)


def click(driver, selector):
    """Clicks through the DOM (the lists are redrawn; a found element may be replaced)."""
    return js(driver, "var e = document.querySelector(arguments[0]); if (!e) return false;"
                      "e.click(); return true;", selector)


def live_profiles(driver):
    return [t for t in texts(driver, "#profile-list li") if "live, connected" in t]


def select_connected(driver, seconds=60):
    """Clicks the live, connected profile until it is the one shown."""
    def pick():
        js(driver, "var l = Array.from(document.querySelectorAll('#profile-list li'))"
                   ".filter(li => li.textContent.includes('live, connected'));"
                   "if (l.length) l[0].click();")
        return "connected" in js(driver,
                                 "return document.getElementById('profile-state').textContent")
    return wait_until(pick, seconds)


def hot_method_first(driver, seconds=90):
    """Asks for CPU samples until the hot methods table ranks HOT first."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        click(driver, '#command-buttons button[data-command="cpu-samples"]')
        if wait_until(lambda: (texts(driver, "tr.fg-hot td.fg-name") or [None])[0] == HOT, 5):
            return True
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--jvmprof", required=True)
    ap.add_argument("--classes", required=True, help="the jvmproftest classes (LiveHog)")
    ap.add_argument("--jdk", required=True, help="JDK home")
    ap.add_argument("--screenshots", help="directory for the screenshots")
    a = ap.parse_args()
    reason = skip_reason(a.jdk)
    if reason:
        print("skipped: " + reason)
        return 77
    work = tempfile.mkdtemp(prefix="jvmprof-local-jvms-")
    serve = jvm = driver = None
    try:
        serve = Serve(a.jvmprof, work=work)
        try:
            urllib.request.urlopen(serve.base + "/api/local-jvms")
            check(False, "the local JVMs are listed without the token")
        except urllib.error.HTTPError as e:
            check(e.code == 401, "without the token the list is refused with 401: %d" % e.code)

        # JDK 21+ warns about agents loaded while the VM runs unless allowed up front (JDK 17
        # does not know the option).
        vm_args = ["-XX:+IgnoreUnrecognizedVMOptions", "-XX:+EnableDynamicAgentLoading"]
        # No agent, no JAVA_TOOL_OPTIONS: a JVM as any service runs.
        env = {k: v for k, v in os.environ.items()
               if k not in ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS")}
        jvm = subprocess.Popen([os.path.join(a.jdk, "bin", "java"), *vm_args, "-cp", a.classes,
                                "jvmproftest.LiveHog"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=env, cwd=work, text=True)
        check(jvm.stdout.readline().strip() == "READY", "LiveHog started")
        row = '#local-jvms li[data-pid="%d"]' % jvm.pid

        driver = start_chromium(work, "1400,1000")
        driver.get(serve.url)
        js(driver, "var s = document.getElementById('refresh-every'); s.value = '0';"
                   "s.dispatchEvent(new Event('change'));")
        check(wait_for(driver, row), "the JVM appears under Local JVMs")
        name = (texts(driver, row + " .local-jvm-name") or [""])[0]
        check("jvmproftest.LiveHog" in name, "it is shown with its main class: %r" % name)
        check(not live_profiles(driver), "no live profile before 'profile'")
        shot(driver, a.screenshots, "jvmprof-serve-local-jvms.png")

        check(wait_until(lambda: click(driver, row + ' button[data-action="profile"]')),
              "the JVM offers 'profile'")
        check(wait_for(driver, row + ' button[data-action="stop"]', 120),
              "after 'profile' the JVM offers 'stop': %r" % texts(driver, "#local-jvms"))
        check(wait_until(lambda: live_profiles(driver), 60),
              "a live, connected profile appears: %r" % texts(driver, "#profile-list li"))
        check(select_connected(driver), "the attached JVM's profile can be selected")
        check(hot_method_first(driver),
              "its CPU samples rank %s first: %r" % (HOT, texts(driver, "tr.fg-hot td.fg-name")[:3]))
        shot(driver, a.screenshots, "jvmprof-serve-local-jvms-profiled.png")

        check(click(driver, row + ' button[data-action="stop"]'), "'stop' can be clicked")
        check(wait_for(driver, row + ' button[data-action="profile"]', 120),
              "after 'stop' the JVM offers 'profile' again: %r" % texts(driver, "#local-jvms"))
        check(wait_until(lambda: not live_profiles(driver), 60),
              "the profile is no longer connected: %r" % texts(driver, "#profile-list li"))
        shot(driver, a.screenshots, "jvmprof-serve-local-jvms-stopped.png")

        # The JVM runs on: it reads stdin, ends its Burner and says so.
        out, err = jvm.communicate("\n", timeout=120)
        check(jvm.returncode == 0 and out.strip() == "DONE 5050",
              "the JVM ran on and ended normally: %r %r %r" % (jvm.returncode, out, err[-2000:]))
        check("hprof: error" not in err, "HPROF reported no error: %r" % err[-2000:])
    finally:
        stop_all(driver, jvm, serve, work)
    return finish("local_jvms_browser_test")


if __name__ == "__main__":
    sys.exit(main())
