#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""jvmprof jps|attach|stop|record|dump against JVMs started without any agent (attachtest.Spinner:
N Marker objects held live, its CPU in spin()), with a JVMTI agent of the tests' own that only
attaches (attach_test_agent.c: samples stacks, writes HPROF's text report on `stop` or at VM
death), so that the command line is proven apart from HPROF. One case per run:
  jps         the Spinner listed with its main class, Java version and "yes"; a JVM started with
              -XX:+DisableAttachMechanism listed as not attachable; a non-JVM not listed
  attach_stop attach, stop, attach again, stop again: two reports whose hottest frame is spin();
              a stop without a session and options the agent refuses each give one line
  record      each output format; Ctrl-C stops early and still writes; a JVM that exits during
              the recording still gives its profile
  errors      no such process, not a JVM, -XX:+DisableAttachMechanism, a stopped JVM (timeout),
              another user's JVM from a non-root user: one line each
  other_user  (as root) a JVM running as nobody: jps, attach/stop and dump work through the
              uid switch
  container   (as root) a JVM in mount and pid namespaces of its own with a private /tmp: jps,
              two attach/stop cycles (the agent copied into its /tmp), record, dump
  dump        HotSpot's dump (.hprof, .hprof.gz) read by jvmprof summary and VisualVM's heap
              library; the Marker count equals the program's and jcmd GC.class_histogram's
  hprof_record  `jvmprof record` and `dump --with-sites` with the project's libhprof.so
Exit 77 when the JDK is not installed."""
import argparse
import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

MARKERS = 1234
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what, flush=True)
    else:
        print("ok: " + what, flush=True)
    return cond


def wait_for(pred, what, limit=180):
    """Polls a condition the program under test makes true; `limit` only guards against a hang."""
    deadline = time.monotonic() + limit
    while not pred():
        if time.monotonic() > deadline:
            raise RuntimeError("gave up waiting for " + what)
        time.sleep(0.05)


def child_of(parent):
    """The pid of `parent`'s child process (unshare --fork's), once there is one."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/status" % entry) as f:
                if re.search(r"^PPid:\s+%d$" % parent, f.read(), re.M):
                    return int(entry)
        except OSError:
            pass
    return None


class Spinner:
    """attachtest.Spinner in a JVM of its own; `user`: run as that uid; `container`: in new mount
    and pid namespaces with a /tmp of their own (a tmpfs), as in a container."""

    def __init__(self, a, work, name, jvm_args=(), user=None, container=False):
        self.dir = os.path.join(work, name)
        os.makedirs(self.dir)
        os.chmod(self.dir, 0o777)
        self.out_path = os.path.join(self.dir, "stdout")
        java = [os.path.join(a.jdk, "bin", "java"), *jvm_args, "-cp", a.classes,
                "attachtest.Spinner"]
        if container:
            cmd = ["unshare", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc", "sh", "-c",
                   'mount -t tmpfs none /tmp && cd /tmp && exec "$@" /tmp/stop %d' % MARKERS,
                   "sh", *java]
        else:
            self.stop_file = os.path.join(self.dir, "stop")
            cmd = java + [self.stop_file, str(MARKERS)]
        if user is not None:
            cmd = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user, "--clear-groups"] + cmd
        self.out = open(self.out_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=self.out, stderr=subprocess.STDOUT, cwd=self.dir)
        wait_for(lambda: "ready" in self.output() or self.proc.poll() is not None,
                 name + " to start")
        if self.proc.poll() is not None:
            raise RuntimeError(name + " ended at start: " + self.output())
        # setpriv execs java, so the pid is the JVM's; unshare --fork runs it in a child.
        self.pid = child_of(self.proc.pid) if container else self.proc.pid
        if container:
            self.stop_file = "/proc/%d/root/tmp/stop" % self.pid

    def output(self):
        with open(self.out_path) as f:
            return f.read()

    def finish(self):
        open(self.stop_file, "w").close()
        rc = self.proc.wait(timeout=180)
        self.out.close()
        return rc

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.out.close()


def jvmprof(a, *args, user=None, timeout=300):
    cmd = [a.jvmprof, *args]
    if user is not None:
        cmd = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user, "--clear-groups"] + cmd
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    print("$ jvmprof %s -> %d\n%s%s" % (" ".join(args), r.returncode, r.stdout, r.stderr),
          flush=True)
    return r


def one_line_error(r, contains, what):
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    check(r.returncode != 0, what + ": non-zero exit")
    check(len(lines) == 1, what + ": one line on stderr (got %d)" % len(lines))
    check(bool(lines) and contains in lines[0], what + ": the line says '%s'" % contains)


def collapsed_rows(text):
    rows = {}
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        rows[stack] = rows.get(stack, 0) + int(count)
    return rows


def spin_share(a, report):
    """The share of the samples whose leaf is spin(), from the report through jvmprof convert."""
    r = subprocess.run([a.jvmprof, "convert", "--to", "collapsed", report, "-"],
                       capture_output=True, text=True, check=True)
    rows = collapsed_rows(r.stdout)
    total = sum(rows.values())
    spin = sum(n for s, n in rows.items() if s.endswith("attachtest.Spinner.spin"))
    return spin, total


# The Spinner's only runnable Java thread with frames is main, which is in spin() but for one
# Files.exists per 2M iterations (microseconds against milliseconds): each sample lands in spin()
# with probability above 0.99, so the share of a report with at least one sample is above 1/2
# except with a probability far below one in a million for any count of samples beyond 3, and the
# final sample the agent takes at `stop` makes at least one.
def check_spin_report(a, report, what):
    spin, total = spin_share(a, report)
    check(total > 0, what + ": the report has samples (%d)" % total)
    check(total > 0 and spin * 2 > total,
          what + ": spin() holds most samples (%d of %d)" % (spin, total))


def java_version(a):
    with open(os.path.join(a.jdk, "release")) as f:
        m = re.search(r'JAVA_VERSION="([^"]+)"', f.read())
    return m.group(1) if m else "?"


def jps_row(text, pid):
    for line in text.splitlines():
        f = line.split()
        if f and f[0] == str(pid):
            return f
    return None


def case_jps(a, work):
    s = Spinner(a, work, "plain")
    d = Spinner(a, work, "disabled", ["-XX:+DisableAttachMechanism"])
    sleeper = subprocess.Popen(["sleep", "600"])
    try:
        r = jvmprof(a, "jps")
        check(r.returncode == 0, "jps exits 0")
        check(r.stdout.splitlines()[0].split() == ["PID", "JAVA", "ATTACH", "MAIN"], "jps header")
        row = jps_row(r.stdout, s.pid)
        check(row is not None, "jps lists the Spinner")
        if row:
            check(row[1] == java_version(a), "jps: Java version %s" % java_version(a))
            check(row[2] == "yes", "jps: the Spinner is attachable")
            check(row[3] == "attachtest.Spinner", "jps: main class attachtest.Spinner")
        row = jps_row(r.stdout, d.pid)
        check(row is not None and row[2] == "no" and "DisableAttachMechanism" in " ".join(row),
              "jps: a -XX:+DisableAttachMechanism JVM is not attachable, and says why")
        check(jps_row(r.stdout, sleeper.pid) is None, "jps does not list a non-JVM")
        r = jvmprof(a, "jps", "--no-header")
        check(r.returncode == 0 and not r.stdout.startswith("PID"), "jps --no-header")
        check(s.finish() == 0 and "done %d" % MARKERS in s.output(), "the Spinner ran on")
    finally:
        sleeper.kill()
        s.kill()
        d.kill()


def attach_and_stop(a, s, report, cycle, via_root=False):
    """`report` is the JVM's path; with `via_root` it is read through /proc/PID/root."""
    before = s.output().count("attach-test-agent: first sample")
    r = jvmprof(a, "attach", str(s.pid), "file=" + report, "--agent", a.agent)
    check(r.returncode == 0 and "attached to JVM %d" % s.pid in r.stdout,
          "cycle %d: attach returns once the agent runs" % cycle)
    check("attach-test-agent: attached (file=%s)" % report in s.output(),
          "cycle %d: the agent got the option string" % cycle)
    wait_for(lambda: s.output().count("attach-test-agent: first sample") > before, "a sample")
    r = jvmprof(a, "stop", str(s.pid), "--agent", a.agent)
    check(r.returncode == 0 and "stopped profiling JVM %d" % s.pid in r.stdout,
          "cycle %d: stop" % cycle)
    check(s.output().count("attach-test-agent: detached") == cycle,
          "cycle %d: the agent detached" % cycle)
    check_spin_report(a, "/proc/%d/root%s" % (s.pid, report) if via_root else report,
                      "cycle %d" % cycle)


def case_attach_stop(a, work):
    s = Spinner(a, work, "spinner")
    try:
        for cycle in (1, 2):
            attach_and_stop(a, s, os.path.join(s.dir, "report%d.txt" % cycle), cycle)
        r = jvmprof(a, "stop", str(s.pid), "--agent", a.agent)
        one_line_error(r, "has no profiling session", "stop without a session")
        r = jvmprof(a, "attach", str(s.pid), "bogus=1", "--agent", a.agent)
        one_line_error(r, "refused the options 'bogus=1'", "options the agent refuses")
        check(s.finish() == 0 and "done %d" % MARKERS in s.output(),
              "the program ran on and ended normally")
    finally:
        s.kill()


def case_record(a, work):
    s = Spinner(a, work, "spinner")
    try:
        outs = {}
        for ext in ("collapsed", "txt", "html", "pb.gz", "json"):
            out = os.path.join(work, "profile." + ext)
            r = jvmprof(a, "record", str(s.pid), "-d", "2", "-o", out, "--agent", a.agent)
            check(r.returncode == 0 and "wrote " + out in r.stderr, "record -o ." + ext)
            outs[ext] = out
        check_spin_report(a, outs["txt"], "record .txt")
        with open(outs["txt"]) as f:
            txt = f.read()
        check(txt.startswith("JAVA PROFILE") and "CPU SAMPLES END" in txt, ".txt: HPROF's report")
        with open(outs["collapsed"]) as f:
            rows = collapsed_rows(f.read())
        spin = sum(n for k, n in rows.items() if k.endswith("attachtest.Spinner.spin"))
        check(spin * 2 > sum(rows.values()), ".collapsed: spin() holds most samples")
        with open(outs["html"]) as f:
            html = f.read()
        check("<html" in html.lower() and "attachtest.Spinner.spin" in html,
              ".html: a page with spin()")
        with open(outs["pb.gz"], "rb") as f:
            pb = gzip.decompress(f.read())
        check(b"attachtest.Spinner.spin" in pb, ".pb.gz: gzipped pprof with spin()")
        if shutil.which("protoc") and a.proto:
            d = subprocess.run(["protoc", "--decode=perftools.profiles.Profile",
                                "-I", os.path.dirname(a.proto), a.proto],
                               input=pb, capture_output=True)
            check(d.returncode == 0 and b"sample_type" in d.stdout, ".pb.gz: protoc decodes it")
        with open(outs["json"]) as f:
            ss = json.load(f)
        check("speedscope" in ss.get("$schema", "") and any(
            fr.get("name", "").endswith("attachtest.Spinner.spin")
            for fr in ss["shared"]["frames"]), ".json: speedscope with spin()")
        # A final report larger than the socket's buffers, written while the agent handles
        # `stop`: record reads it while it waits for the stop's reply.
        out = os.path.join(work, "big.collapsed")
        r = jvmprof(a, "record", str(s.pid), "-d", "1", "-o", out, "--agent", a.agent,
                    "cpu=samples,padding=16000000")
        check(r.returncode == 0 and "stop:" not in r.stderr and os.path.getsize(out) > 0,
              "record: a 16 MB final report read while the agent stops")
        r = jvmprof(a, "record", str(s.pid), "-d", "2", "-o", os.path.join(work, "x.bin"))
        check(r.returncode == 2 and len(r.stderr.splitlines()) == 1, "record: unknown extension")

        # Ctrl-C: the recording stops early, the file is written, the JVM runs on unprofiled.
        out = os.path.join(work, "interrupted.collapsed")
        before = s.output().count("first sample")
        p = subprocess.Popen([a.jvmprof, "record", str(s.pid), "-d", "600", "-o", out,
                              "--agent", a.agent], stderr=subprocess.PIPE, text=True)
        wait_for(lambda: s.output().count("first sample") > before, "a sample")
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=180)
        print(err)
        check(p.returncode == 0 and "stopped early" in err, "Ctrl-C: record stops early")
        check(os.path.exists(out) and os.path.getsize(out) > 0, "Ctrl-C: the file is written")
        check(s.proc.poll() is None and s.output().count("detached") == 7,
              "Ctrl-C: the agent was stopped and the JVM runs on")

        # The JVM exits during the recording: the agent's report at VM death is written.
        out = os.path.join(work, "exited.collapsed")
        before = s.output().count("first sample")
        p = subprocess.Popen([a.jvmprof, "record", str(s.pid), "-d", "600", "-o", out,
                              "--agent", a.agent], stderr=subprocess.PIPE, text=True)
        wait_for(lambda: s.output().count("first sample") > before, "a sample")
        open(s.stop_file, "w").close()
        _, err = p.communicate(timeout=180)
        print(err)
        lines = [l for l in err.splitlines() if "exited" in l]
        check(p.returncode == 0 and len(lines) == 1 and "exited during the recording" in lines[0],
              "JVM exit during record: one line says so")
        with open(out) as f:
            rows = collapsed_rows(f.read())
        check(any("attachtest.Spinner.main" in k for k in rows),
              "JVM exit during record: the partial profile has the program's stacks")
    finally:
        s.kill()


def case_errors(a, work):
    with open("/proc/sys/kernel/pid_max") as f:
        missing = int(f.read()) + 1
    r = jvmprof(a, "attach", str(missing), "cpu=samples")
    one_line_error(r, "no process %d" % missing, "no such process")
    sleeper = subprocess.Popen(["sleep", "600"])
    try:
        for cmd in (["attach", str(sleeper.pid), "cpu=samples"], ["stop", str(sleeper.pid)],
                    ["dump", str(sleeper.pid), "-o", os.path.join(work, "x.hprof")],
                    ["record", str(sleeper.pid), "-d", "1", "-o", os.path.join(work, "x.txt")]):
            one_line_error(jvmprof(a, *cmd), "is not a Java VM", cmd[0] + ": not a JVM")
    finally:
        sleeper.kill()
    d = Spinner(a, work, "disabled", ["-XX:+DisableAttachMechanism"])
    try:
        r = jvmprof(a, "attach", str(d.pid), "file=/dev/null", "--agent", a.agent)
        one_line_error(r, "-XX:+DisableAttachMechanism", "attach disabled")
        r = jvmprof(a, "dump", str(d.pid), "-o", os.path.join(work, "x.hprof"))
        one_line_error(r, "-XX:+DisableAttachMechanism", "dump: attach disabled")
    finally:
        d.kill()
    # A stopped JVM cannot answer SIGQUIT: the attach times out however long it waits.
    s = Spinner(a, work, "stopped")
    try:
        os.kill(s.pid, signal.SIGSTOP)
        r = jvmprof(a, "attach", str(s.pid), "file=/dev/null", "--agent", a.agent,
                    "--timeout", "1")
        one_line_error(r, "(timeout)", "a JVM that does not answer")
        os.kill(s.pid, signal.SIGCONT)
        if os.geteuid() == 0:
            r = jvmprof(a, "attach", str(s.pid), "file=/dev/null", "--agent", a.agent,
                        user=65534)
            one_line_error(r, "attach needs the JVM's user or root", "another user's JVM")
        check(s.finish() == 0, "the stopped JVM ran on after SIGCONT")
    finally:
        s.kill()
    r = jvmprof(a, "record", str(os.getpid()), "-d", "1", "-o", "/nonexistent-dir/p.txt")
    one_line_error(r, "cannot write into /nonexistent-dir/", "record: FILE not writable")
    r = jvmprof(a, "attach", "12x", "cpu=samples")
    one_line_error(r, "not a process id", "a pid that is not a number")


def case_other_user(a, work):
    if os.geteuid() != 0:
        print("not root: the uid switch is not exercised")
        return
    os.chmod(work, 0o755)
    s = Spinner(a, work, "nobody", user=65534)
    try:
        r = jvmprof(a, "jps")
        row = jps_row(r.stdout, s.pid)
        check(row is not None and row[2] == "yes", "jps: nobody's JVM is attachable by root")
        attach_and_stop(a, s, os.path.join(s.dir, "report1.txt"), 1)
        out = os.path.join(work, "nobody.hprof")
        r = jvmprof(a, "dump", str(s.pid), "-o", out)
        check(r.returncode == 0 and os.path.getsize(out) > 0, "dump of nobody's JVM")
        check(marker_count_summary(a, out) == MARKERS, "nobody's dump: %d Markers" % MARKERS)
        check(s.finish() == 0, "nobody's JVM ran on")
    finally:
        s.kill()


def case_container(a, work):
    if os.geteuid() != 0 or not shutil.which("unshare"):
        print("not root or no unshare: no namespaces to make")
        return
    s = Spinner(a, work, "container", container=True)
    try:
        with open("/proc/%d/status" % s.pid) as f:
            check(re.search(r"^NSpid:\s+%d\s+1$" % s.pid, f.read(), re.M) is not None,
                  "the JVM is pid 1 in a pid namespace of its own")
        row = jps_row(jvmprof(a, "jps").stdout, s.pid)
        check(row is not None and row[2] == "yes" and row[3] == "attachtest.Spinner",
              "jps finds the JVM in the container")
        # Twice: the second attach must not write into the library the JVM has mapped.
        for cycle in (1, 2):
            attach_and_stop(a, s, "/tmp/report%d.txt" % cycle, cycle, via_root=True)
        out = os.path.join(work, "container.collapsed")
        r = jvmprof(a, "record", str(s.pid), "-d", "1", "-o", out, "--agent", a.agent)
        check(r.returncode == 0 and os.path.getsize(out) > 0, "record from the container")
        out = os.path.join(work, "container.hprof.gz")
        r = jvmprof(a, "dump", str(s.pid), "-o", out)
        check(r.returncode == 0, "dump of the container's JVM (written in its /tmp, moved here)")
        check(marker_count_summary(a, out) == MARKERS, "container dump: %d Markers" % MARKERS)
        check(s.finish() == 0 and "done %d" % MARKERS in s.output(), "the JVM ran on")
    finally:
        s.kill()


def marker_count_summary(a, dump):
    r = subprocess.run([a.jvmprof, "summary", dump], capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if line.rstrip().endswith("attachtest.Spinner$Marker"):
            return int(line.split()[0].replace(",", ""))
    print(r.stdout[-3000:], r.stderr)
    return None


def marker_count_visualvm(a, dump):
    r = subprocess.run([os.path.join(a.jdk, "bin", "java"), "-cp",
                        a.visualvm_jar + ":" + a.visualvm_classes, "VisualVmCounts", dump],
                       capture_output=True, text=True)
    for line in r.stdout.splitlines():
        n, _, name = line.partition(" ")
        if name == "attachtest.Spinner$Marker":
            return int(n)
    print(r.stdout[-2000:], r.stderr[-2000:])
    return None


def marker_count_jcmd(a, pid):
    r = subprocess.run([os.path.join(a.jdk, "bin", "jcmd"), str(pid), "GC.class_histogram"],
                       capture_output=True, text=True)
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) >= 4 and f[3] == "attachtest.Spinner$Marker":
            return int(f[1])
    print(r.stdout[-2000:], r.stderr[-2000:])
    return None


def case_dump(a, work):
    s = Spinner(a, work, "spinner")
    try:
        histogram = marker_count_jcmd(a, s.pid)
        check(histogram == MARKERS, "jcmd GC.class_histogram: %s Markers" % histogram)
        for name in ("heap.hprof", "heap.hprof.gz"):
            out = os.path.join(work, name)
            for attempt in (1, 2):  # the second overwrites the first
                r = jvmprof(a, "dump", str(s.pid), "-o", out)
                check(r.returncode == 0 and "wrote " + out in r.stdout,
                      "dump %s (%d)" % (name, attempt))
            with open(out, "rb") as f:
                head = f.read(20)
            if name.endswith(".gz"):
                check(head[:2] == b"\x1f\x8b", name + " is gzip")
            else:
                check(head.startswith(b"JAVA PROFILE 1.0.2"), name + " is a binary HPROF dump")
            check(marker_count_summary(a, out) == histogram,
                  name + ": jvmprof summary counts the histogram's Markers")
            if a.visualvm_classes and name.endswith(".hprof"):
                check(marker_count_visualvm(a, out) == histogram,
                      name + ": VisualVM's heap library counts the histogram's Markers")
        check(not [f for f in os.listdir(work) if "partial" in f], "no partial file left")
        r = jvmprof(a, "dump", str(s.pid), "-o", os.path.join(work, "heap.bin"))
        check(r.returncode == 2 and len(r.stderr.splitlines()) == 1, "dump: unknown extension")
        check(s.finish() == 0, "the program ran on")
    finally:
        s.kill()


def case_hprof_record(a, work):
    s = Spinner(a, work, "spinner")
    try:
        out = os.path.join(work, "hprof.collapsed")
        r = jvmprof(a, "record", str(s.pid), "-d", "3", "-o", out, "cpu=samples,interval=10")
        check(r.returncode == 0 and "wrote " + out in r.stderr, "record with libhprof.so")
        txt = os.path.join(work, "hprof.txt")
        r = jvmprof(a, "record", str(s.pid), "-d", "3", "-o", txt)
        check(r.returncode == 0, "record .txt with libhprof.so")
        check_spin_report(a, txt, "libhprof.so record")
        out = os.path.join(work, "sites.hprof")
        r = jvmprof(a, "dump", str(s.pid), "-o", out, "--with-sites")
        check(r.returncode == 0 and os.path.getsize(out) > 0, "dump --with-sites")
        check(s.finish() == 0, "the program ran on after HPROF detached")
    finally:
        s.kill()


CASES = {"jps": case_jps, "attach_stop": case_attach_stop, "record": case_record,
         "errors": case_errors, "other_user": case_other_user, "dump": case_dump,
         "container": case_container,
         "hprof_record": case_hprof_record}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", required=True, choices=sorted(CASES))
    ap.add_argument("--jvmprof", required=True)
    ap.add_argument("--agent", required=True, help="the test agent (libattach_test_agent.so)")
    ap.add_argument("--classes", required=True)
    ap.add_argument("--jdk", required=True)
    ap.add_argument("--proto", default="")
    ap.add_argument("--visualvm-jar", default="")
    ap.add_argument("--visualvm-classes", default="")
    a = ap.parse_args()
    if not os.path.exists(os.path.join(a.jdk, "bin", "java")):
        print("no JDK at " + a.jdk)
        return 77
    work = tempfile.mkdtemp(prefix="jvmprof-attach-%s-" % a.case)
    try:
        CASES[a.case](a, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("attach %s: ok" % a.case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
