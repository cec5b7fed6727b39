#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Real programs under HPROF (scripts/real-programs.sh): Debian's H2, Lucene 4.10, Xalan and Jython
run a workload whose answer is known in advance, once without an agent and once under each HPROF
mode, on each JDK. Each run must exit 0, print the known answer, and leave a well-formed report
(text reports: tests/hprof/hprof_check; format=b heap dumps: `jvmprof summary`). Prints one line
per run and a Markdown table of wall and CPU seconds with the slowdown against no agent.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

JAVA = "/usr/share/java"
JDKS = {"17": "/usr/lib/jvm/java-17-openjdk-amd64", "25": "/usr/lib/jvm/temurin-25-jdk-amd64"}
MODES = {
    "cpu=samples": "cpu=samples",
    "cpu=times": "cpu=times",
    "cpu=old": "cpu=old",
    "heap=sites": "heap=sites",
    "heap=dump": "heap=dump",
    "monitor=y": "monitor=y",
    "heap=dump,format=b": "heap=dump,format=b",
}
# Sizes: (CI subset, full). H2: rows inserted by separate INSERT statements; Lucene: files
# indexed; Xalan: records transformed; Jython: loop iterations.
SIZES = {"h2": (3000, 100000), "lucene": (200, 2500), "xalan": (5000, 100000),
         "jython": (20000, 300000)}


def classpath(*jars):
    return ":".join(os.path.join(JAVA, j) for j in jars)


# ---- The workloads: each writes its input into `work` and returns (java arguments, check of the
# program's stdout and its output files, a description). ----

def h2(work, n):
    rows = [(i, (i * 7919) % 1000) for i in range(1, n + 1)]
    with open(os.path.join(work, "load.sql"), "w") as f:
        f.write("CREATE TABLE T(ID INT PRIMARY KEY, V INT, S VARCHAR(40));\n")
        for i, v in rows:
            f.write(f"INSERT INTO T VALUES({i}, {v}, 'row{i}');\n")
        f.write("CREATE INDEX IV ON T(V);\n")
        f.write("SELECT COUNT(*) AS C, SUM(V) AS S FROM T WHERE V < 500;\n")
    count = sum(1 for _, v in rows if v < 500)
    total = sum(v for _, v in rows if v < 500)
    args = ["-cp", classpath("h2.jar"), "org.h2.tools.RunScript", "-url", "jdbc:h2:mem:rp",
            "-user", "sa", "-script", "load.sql", "-showResults"]

    def check(out):
        # RunScript -showResults prints each result row after "-->".
        return f"--> {count} {total}" in out, f"--> {count} {total}"
    return args, check, f"H2 RunScript: {n} INSERTs, CREATE INDEX, SELECT COUNT/SUM"


WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november "
         "oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu").split()


def lucene(work, n):
    docs = os.path.join(work, "docs")
    os.makedirs(docs)
    planted = 0
    for i in range(n):
        words = [WORDS[(i * 7 + k * 13) % len(WORDS)] + str((i + k) % 97) for k in range(400)]
        if i % 7 == 0:
            words.append("zebrafish")
            planted += 1
        with open(os.path.join(docs, f"doc{i:05d}.txt"), "w") as f:
            f.write(" ".join(words) + "\n")
    cp = classpath("lucene-core-4.10.4.jar", "lucene-demo-4.10.4.jar",
                   "lucene-analyzers-common-4.10.4.jar", "lucene-queryparser-4.10.4.jar")
    args = ["-cp", cp, "org.apache.lucene.demo.IndexFiles", "-index", "index", "-docs", "docs"]

    def check(out):
        added = out.count("adding ")
        if added != n:
            return False, f"{n} files added (saw {added})"
        # The index the profiled run wrote answers a query (searched without an agent).
        java = os.environ["RP_JAVA"]
        s = subprocess.run([java, "-cp", cp, "org.apache.lucene.demo.SearchFiles", "-index",
                            "index", "-query", "zebrafish"], cwd=work, capture_output=True,
                           text=True, timeout=300)
        return f"{planted} total matching documents" in s.stdout, \
            f"{n} files added, {planted} matching documents"
    return args, check, f"Lucene IndexFiles: {n} files, then a query"


def xalan(work, n):
    with open(os.path.join(work, "in.xml"), "w") as f:
        f.write("<rs>\n")
        for i in range(n):
            f.write(f'<r id="{i}" v="{(i * 31) % 1000}" name="n{i}"/>\n')
        f.write("</rs>\n")
    with open(os.path.join(work, "t.xsl"), "w") as f:
        f.write("""<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
<xsl:output method="html"/>
<xsl:template match="/rs">
<html><body><p>TOTAL <xsl:value-of select="count(r)"/> <xsl:text> </xsl:text>
<xsl:value-of select="sum(r/@v)"/></p><table>
<xsl:for-each select="r"><xsl:sort select="@v" data-type="number"/>
<tr><td><xsl:value-of select="@name"/></td><td><xsl:value-of select="@v * 2"/></td></tr>
</xsl:for-each></table></body></html>
</xsl:template></xsl:stylesheet>
""")
    total = sum((i * 31) % 1000 for i in range(n))
    args = ["-cp", classpath("xalan2.jar", "serializer.jar"), "org.apache.xalan.xslt.Process",
            "-IN", "in.xml", "-XSL", "t.xsl", "-OUT", "out.html"]

    def check(out):
        try:
            html = open(os.path.join(work, "out.html")).read()
        except OSError:
            return False, "out.html written"
        return f"TOTAL {n} {total}" in html and html.count("<tr>") == n, \
            f"TOTAL {n} {total} and {n} rows"
    return args, check, f"Xalan Process: {n} records sorted into HTML"


def jython(work, n):
    with open(os.path.join(work, "work.py"), "w") as f:
        f.write(f"""class Acc(object):
    def __init__(self):
        self.d = {{}}
    def add(self, i):
        self.d[str(i)] = (i * i) % 1009
    def total(self):
        return sum(self.d.values())
a = Acc()
for i in range({n}):
    a.add(i)
words = ' '.join(str(i) for i in range(1000)).split()
print('JYTHON %d %d' % (a.total(), len(words)))
""")
    total = sum((i * i) % 1009 for i in range(n))
    args = ["-Dpython.home=/usr/share/jython", "-Dpython.cachedir.skip=true", "-jar",
            os.path.join(JAVA, "jython.jar"), "work.py"]

    def check(out):
        return f"JYTHON {total} 1000" in out, f"JYTHON {total} 1000"
    return args, check, f"Jython: {n} method calls and dict updates"


PROGRAMS = {"h2": h2, "lucene": lucene, "xalan": xalan, "jython": jython}
PACKAGES = {"h2": "libh2-java", "lucene": "liblucene4.10-java", "xalan": "libxalan2-java",
            "jython": "jython"}
NEEDS = {"h2": ["h2.jar"], "lucene": ["lucene-demo-4.10.4.jar"],
         "xalan": ["xalan2.jar", "serializer.jar"], "jython": ["jython.jar"]}


def run(cmd, cwd, timeout):
    """(wall s, CPU s, exit code or None when killed at the timeout, stdout, stderr)."""
    start = time.monotonic()
    out_path, err_path = os.path.join(cwd, "stdout.txt"), os.path.join(cwd, "stderr.txt")
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        p = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        killed = False
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid != 0:
                break
            if time.monotonic() > deadline and not killed:
                p.kill()
                killed = True
            time.sleep(0.05)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - start
    cpu = usage.ru_utime + usage.ru_stime
    read = lambda path: open(path, encoding="utf-8", errors="replace").read()
    return wall, cpu, (None if killed else p.returncode), read(out_path), read(err_path)


def check_report(args, mode, work):
    if "format=b" in mode:
        path = os.path.join(work, "java.hprof")
        if not os.path.isfile(path):
            return False, "no java.hprof"
        r = subprocess.run([args.jvmprof, "summary", path], capture_output=True, text=True)
        return r.returncode == 0, "jvmprof summary: " + (r.stderr.strip() or "read")
    path = os.path.join(work, "java.hprof.txt")
    if not os.path.isfile(path):
        return False, "no java.hprof.txt"
    if mode == "cpu=old":
        # JDK 1.1's prof format: a header, then "count callee caller time" rows.
        lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
        rows = [l for l in lines if l.strip() and l.strip() != "count callee caller time"]
        row = re.compile(r"\d+ (\S+|<unknown callee>) (\S+|<unknown caller>) \d+")
        bad = [l for l in rows if not row.fullmatch(l)]
        ok = bool(lines) and lines[0] == "count callee caller time" and rows and not bad
        return ok, (f"old prof format, {len(rows)} rows" if ok else
                    f"not the old prof format: {(bad or ['no rows'])[0][:120]}")
    r = subprocess.run([args.checker, path], capture_output=True, text=True)
    return r.returncode == 0, r.stdout.strip().splitlines()[0] if r.stdout else r.stderr.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--jdks", default="17,25")
    ap.add_argument("--programs", default="h2,lucene,xalan,jython")
    ap.add_argument("--modes", default=";".join(MODES),
                    help="separated by semicolons: " + "; ".join(MODES))
    ap.add_argument("--quick", action="store_true", help="the CI sizes")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--keep", help="keep every run's directory under this directory")
    args = ap.parse_args()

    build = os.path.abspath(args.build)
    agent = os.path.join(build, "lib", "libhprof.so")
    args.checker = os.path.join(build, "tests", "hprof", "hprof_check")
    args.jvmprof = os.path.join(build, "src", "jvmprof", "jvmprof")
    for f in (agent, args.checker):
        if not os.path.isfile(f):
            sys.exit(f"real-programs: {f} is missing: build first (cmake --build {args.build})")
    programs = [p for p in args.programs.split(",") if p]
    modes = [m.strip() for m in args.modes.split(";") if m.strip()]
    for m in modes:
        if m not in MODES:
            sys.exit(f"real-programs: unknown mode {m!r} ({'; '.join(MODES)})")
    for p in programs:
        if p not in PROGRAMS:
            sys.exit(f"real-programs: unknown program {p!r} ({', '.join(PROGRAMS)})")
    if not modes:
        sys.exit("real-programs: no mode given")
    if any("format=b" in m for m in modes) and not os.path.isfile(args.jvmprof):
        sys.exit(f"real-programs: {args.jvmprof} is missing (needed for format=b)")
    for p in programs:
        for jar in NEEDS[p]:
            if not os.path.isfile(os.path.join(JAVA, jar)):
                sys.exit(f"real-programs: {JAVA}/{jar} is missing: install {PACKAGES[p]} "
                         "(scripts/deps.sh)")

    failures, rows = [], []
    root = args.keep or tempfile.mkdtemp(prefix="real-programs-")
    try:
        for jdk_name in [j for j in args.jdks.split(",") if j]:
            jdk = JDKS.get(jdk_name)
            java = os.path.join(jdk, "bin", "java") if jdk else ""
            if not os.path.isfile(java):
                print(f"JDK {jdk_name}: skipped (not installed)", flush=True)
                continue
            os.environ["RP_JAVA"] = java
            for prog in programs:
                n = SIZES[prog][0 if args.quick else 1]
                base = None
                for mode in ["no agent"] + modes:
                    work = os.path.join(root, f"jdk{jdk_name}-{prog}-{mode.replace(',', '_')}")
                    shutil.rmtree(work, ignore_errors=True)
                    os.makedirs(work)
                    jargs, check, desc = PROGRAMS[prog](work, n)
                    cmd = [java] + ([] if mode == "no agent" else
                                    [f"-agentpath:{agent}={MODES[mode]}"]) + jargs
                    wall, cpu, rc, out, err = run(cmd, work, args.timeout)
                    problems = []
                    if rc is None:
                        problems.append(f"killed after {args.timeout:.0f} s")
                    elif rc != 0:
                        tail = " | ".join(err.strip().splitlines()[-3:])
                        problems.append(f"exit code {rc}: {tail}")
                    ok, what = check(out) if rc == 0 else (False, "")
                    if rc == 0 and not ok:
                        problems.append(f"output lacks the known answer ({what})")
                    report = "-"
                    if mode != "no agent" and rc == 0:
                        rok, report = check_report(args, mode, work)
                        if not rok:
                            problems.append(f"report: {report}")
                    if mode == "no agent":
                        base = (wall, cpu)
                    slow = f"{wall / base[0]:.1f}x / {cpu / base[1]:.1f}x" if base else "-"
                    status = "ok" if not problems else "FAILED: " + "; ".join(problems)
                    print(f"JDK {jdk_name} {prog} [{mode}]: {wall:.1f} s wall, {cpu:.1f} s CPU "
                          f"({slow}): {status}", flush=True)
                    rows.append((jdk_name, prog, desc, mode, wall, cpu, slow, status))
                    if problems:
                        failures.append(f"JDK {jdk_name} {prog} [{mode}]: {status}")
                    if not args.keep:
                        shutil.rmtree(work, ignore_errors=True)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)

    print(f"\n{os.cpu_count()} CPUs; load average {open('/proc/loadavg').read().split()[0]} at "
          "the end. Slowdown = wall / CPU time of the run over the same program's run without an "
          "agent (CPU = user + system of the java process, all threads).\n")
    print("| JDK | program | workload | mode | wall s | CPU s | slowdown wall / CPU | result |")
    print("|---|---|---|---|---:|---:|---:|---|")
    for jdk, prog, desc, mode, wall, cpu, slow, status in rows:
        print(f"| {jdk} | {prog} | {desc} | {mode} | {wall:.1f} | {cpu:.1f} | {slow} | {status} |")
    if failures:
        print(f"\n{len(failures)} run(s) failed:\n" + "\n".join(failures))
        return 1
    print(f"\nall {len(rows)} runs passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
