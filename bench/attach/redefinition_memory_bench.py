#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What the VM itself keeps after attach/stop cycles of HPROF, told from what the profiler leaves.

Two JVMs of hproftest.AttachTarget run side by side, with the same flags (-Xint, a fixed pre-touched
96 MiB heap, Native Memory Tracking, and a log of every class redefinition,
-Xlog:redefine+class+load=info):

  H  the attach test's cycles: odd cycles attach HPROF with
     cpu=samples,heap=sites,monitor=y,depth=4, even ones with cpu=times,depth=2 (every loaded
     class retransformed twice: the hooks in, then the original bytes back), each through
     `jcmd PID JVMTI.agent_load libhprof.so` and `... libhprof.so stop`, with the target's
     commands `calls 1000`, `alloc 100`, `round` in between and one more `round` after the stop.
  F  the floor, the VM's part alone: before cycle 1 a small JVMTI agent creates a jmethodID for
     every method of every loaded class (GetClassMethods, as a JVMPI agent's CLASS_LOAD events
     do); in each even cycle a java.lang.instrument agent (floor/RetransformFloor.java) retransforms
     the same classes with a NOP prepended to every method body before the cycle's commands, and
     back to the original bytes after them (so that code runs, as H's hooks do); odd cycles
     attach nothing. Both JVMs run the same commands in every cycle.

The two go in lock step: cycle C of H, then cycle C of F, whose class list is the names that H's
VM log gained during H's cycle C (its `redefined name=` lines): so F retransforms exactly what H
retransformed in that cycle, as far as F has the class loaded (F never loads HPROF's own classes;
the ClassFile API's classes are left out, since its transformer runs on them).

After cycle 2 and after the last (or every cycle, --every), for each JVM: wait until NMT's "Arena
Chunk" committed is below 1 MiB (HotSpot's chunk pool frees its unused chunks every 5 s; the wait
is bounded by --arena-wait and a measure taken after a timeout is marked), `jcmd PID
System.trim_native_heap`, then VmRSS, NMT's summary (total committed, the VM's malloc, Class
malloc, Metaspace committed), glibc's malloc in use (mallinfo2, through the agent
libattachbench_memprobe.so) and its arenas (malloc_info: per heap, its size and free bytes), and
the count of redefinitions in the JVM's log. The table gives per JVM the growth from cycle 2 to
the last cycle, and that growth per redefinition. "uncounted" is RSS growth - VM committed growth
- (glibc in use growth - VM malloc growth): resident memory that neither the VM nor any malloc
caller holds (free memory glibc keeps in its arenas).

The floor agent uses java.lang.classfile (final in JDK 24): the script compiles it with the chosen
JDK's javac into its scratch directory; with an older JDK, H runs alone.

  python3 bench/attach/redefinition_memory_bench.py --build build [--jdk HOME] [--cycles N]
      [--every] [--no-floor] [--arena-wait S] [--keep]
Needs the targets hprof, java_hprof_tests and attachbench_memprobe built."""
import argparse
import glob
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
JDK25 = "/usr/lib/jvm/temurin-25-jdk-amd64"
JDK17 = "/usr/lib/jvm/java-17-openjdk-amd64"
SAMPLES = "cpu=samples,heap=sites,monitor=y,depth=4"
TIMES = "cpu=times,depth=2"
VM_FLAGS = ["-Xint", "-Xms96m", "-Xmx96m",
            "-XX:+AlwaysPreTouch", "-XX:NativeMemoryTracking=summary"]
REPLY_SECONDS = 300  # a reply or jcmd slower than this on a loaded machine means a hung target
REDEFINED = re.compile(r"redefined name=([^,\s]+), count=")


def jdk_feature(home):
    """The JDK's feature release (17, 25, ...) from its release file, or None."""
    try:
        with open(os.path.join(home, "release")) as f:
            m = re.search(r'^JAVA_VERSION="(\d+)', f.read(), re.M)
    except OSError:
        return None
    return int(m.group(1)) if m else None


def kib(pattern, text, what):
    m = re.search(pattern, text, re.M)
    if not m:
        raise SystemExit("redefinition_memory_bench: no %s in NMT's summary:\n%s" % (what, text))
    return int(m.group(1))


def arenas(xml):
    """[(heap number, system bytes, free bytes)] of glibc's malloc_info XML."""
    out = []
    for m in re.finditer(r'<heap nr="(\d+)">(.*?)</heap>', xml, re.S):
        body = m.group(2)
        system = re.search(r'<system type="current" size="(\d+)"/>', body)
        free = sum(int(x) for x in
                   re.findall(r'<total type="(?:fast|rest)" count="\d+" size="(\d+)"/>', body))
        out.append((int(m.group(1)), int(system.group(1)) if system else 0, free))
    return out


THRESHOLDS = "(glibc thresholds)"  # arena_pages()'s key for (trim, mmap) threshold KiB


def arena_pages(pid):
    """{owners: (size, resident, sparse, empty, chunks) KiB} of the target's glibc arenas, read by
    gdb with arena_pages.py (see there)."""
    out = subprocess.run(["gdb", "-p", str(pid), "-batch", "-x",
                          os.path.join(HERE, "arena_pages.py")],
                         capture_output=True, text=True, timeout=REPLY_SECONDS).stdout
    walk = {}
    for m in re.finditer(r"^ARENA owners=(\S+) size=(\d+) resident=(\d+) sparse=(\d+) "
                         r"empty=(\d+) in_use_chunks=(\d+) top=(\d+) top_resident=(\d+)$", out,
                         re.M):
        walk[m.group(1)] = tuple(int(m.group(i)) for i in range(2, 9))
    thresholds = re.search(r"^MALLOC trim_threshold=(\d+) mmap_threshold=(\d+)", out, re.M)
    if thresholds:
        walk[THRESHOLDS] = (int(thresholds.group(1)) // 1024, int(thresholds.group(2)) // 1024)
    if not walk:
        raise SystemExit("redefinition_memory_bench: gdb read no arena (glibc's debug symbols, "
                         "Debian's libc6-dbg, are needed):\n" + out[-2000:])
    return walk


HEAPTRACK_SIZE = re.compile(r"^([\d.]+)([KMG]?)B? leaked over (\d+) calls from:$")
ALLOCATOR = ("libc.so", "libstdc++.so", "libheaptrack")


def heaptrack_leaks(data):
    """{library: [bytes, calls]}: what heaptrack_print lists as leaked (allocated after heaptrack
    attached, still allocated when the process ended), each backtrace counted for the library of
    its innermost frame outside the allocator (libc's malloc, libstdc++'s operator new)."""
    out = subprocess.run(["heaptrack_print", "-f", data, "-l", "1", "-p", "0", "-a", "0",
                          "-T", "0", "-n", "1000000", "-s", "1000000"],
                         capture_output=True, text=True, timeout=REPLY_SECONDS * 4).stdout
    scale = {"": 1, "K": 1000, "M": 1000 ** 2, "G": 1000 ** 3}
    totals = {}
    lines = out.split("\n")
    i = 0
    while i < len(lines):
        m = HEAPTRACK_SIZE.match(lines[i])
        i += 1
        if not m:
            continue
        owner = "?"
        while i < len(lines) and lines[i].startswith("    "):
            lib = re.match(r"^\s+in (\S+)$", lines[i])
            if lib and owner == "?" and not any(a in lib.group(1) for a in ALLOCATOR):
                owner = os.path.basename(lib.group(1))
            i += 1
        entry = totals.setdefault(owner, [0, 0])
        entry[0] += float(m.group(1)) * scale[m.group(2)]
        entry[1] += int(m.group(3))
    return totals


class Target:
    """One JVM of hproftest.AttachTarget, driven through its stdin and jcmd."""

    def __init__(self, name, jdk, feature, classes, work):
        self.name = name
        self.jdk = jdk
        self.work = os.path.join(work, name)
        os.makedirs(self.work)
        self.log = os.path.join(self.work, "redefine.log")
        self.stderr_path = os.path.join(self.work, "stderr.txt")
        self.log_offset = 0
        with open(self.stderr_path, "w") as err:
            self.p = subprocess.Popen(
                [os.path.join(jdk, "bin", "java")]
                # JDK 21 warns of an agent loaded into a running VM unless this allows it.
                + (["-XX:+EnableDynamicAgentLoading"] if feature >= 21 else []) + VM_FLAGS
                + ["-Xlog:redefine+class+load=info:file=%s" % self.log,
                   "-cp", classes, "hproftest.AttachTarget"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True, bufsize=1)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.wait_for("READY")

    def _read(self):
        for line in self.p.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def fail(self, what):
        with open(self.stderr_path) as f:
            tail = f.read()[-2000:]
        raise SystemExit("redefinition_memory_bench: %s: %s\n%s" % (self.name, what, tail))

    def wait_for(self, prefix):
        while True:
            try:
                line = self.lines.get(timeout=REPLY_SECONDS)
            except queue.Empty:
                self.fail("no %s within %d s" % (prefix, REPLY_SECONDS))
            if line is None:
                self.fail("the JVM ended while waiting for " + prefix)
            if line.startswith(prefix):
                return line.strip()

    def ask(self, command, prefix):
        self.p.stdin.write(command + "\n")
        self.p.stdin.flush()
        return self.wait_for(prefix)

    def jcmd(self, *args):
        r = subprocess.run([os.path.join(self.jdk, "bin", "jcmd"), str(self.p.pid)] + list(args),
                           capture_output=True, text=True, timeout=REPLY_SECONDS)
        return r.stdout + r.stderr

    def agent(self, library, options):
        # Quoted: jcmd would parse an unquoted a=b as a named argument of JVMTI.agent_load.
        out = self.jcmd("JVMTI.agent_load", library, '"%s"' % options)
        if "return code: 0" not in out:
            self.fail("JVMTI.agent_load %s %s: %s" % (library, options, out.strip()))

    def work_round(self):
        self.ask("calls 1000", "CALLS ")
        self.ask("alloc 100", "ALLOC ")
        self.ask("round", "ROUND ")

    def redefined_since_last(self):
        """The names the VM log gained since the last call, in order, and how many lines."""
        with open(self.log, "rb") as f:
            f.seek(self.log_offset)
            data = f.read()
        # Only whole lines: the VM may be writing the next one.
        data = data[:data.rfind(b"\n") + 1]
        self.log_offset += len(data)
        names = REDEFINED.findall(data.decode())
        return list(dict.fromkeys(names)), len(names)

    def redefinitions(self):
        with open(self.log) as f:
            return len(REDEFINED.findall(f.read()))

    def floor_line(self):
        with open(self.stderr_path) as f:
            lines = [l.strip() for l in f if l.startswith("FLOOR ")]
        return lines[-1] if lines else "(no FLOOR line)"

    def measure(self, probe, arena_wait, tag, pages=False):
        began = time.monotonic()
        while True:
            nmt = self.jcmd("VM.native_memory", "summary")
            m = re.search(r"Arena Chunk \(reserved=\d+KB, committed=(\d+)KB", nmt)
            chunk = int(m.group(1)) if m else 0
            if chunk < 1024 or time.monotonic() - began > arena_wait:
                break
            time.sleep(0.5)
        out = self.jcmd("System.trim_native_heap")
        if "Trim" not in out and "trim" not in out:
            self.fail("System.trim_native_heap: " + out.strip())
        with open("/proc/%d/status" % self.p.pid) as f:
            rss = int(re.search(r"^VmRSS:\s+(\d+) kB", f.read(), re.M).group(1))
        nmt = self.jcmd("VM.native_memory", "summary")
        in_use = os.path.join(self.work, "malloc-%s.txt" % tag)
        info = os.path.join(self.work, "arenas-%s.xml" % tag)
        self.agent(probe, "malloc=" + in_use)
        self.agent(probe, "arenas=" + info)
        with open(in_use) as f:
            glibc = int(f.read()) // 1024
        walk = arena_pages(self.p.pid) if pages else None
        with open(info) as f:
            heaps = arenas(f.read())
        return {
            "rss": rss,
            "committed": kib(r"^Total: reserved=\d+KB, committed=(\d+)KB", nmt, "total"),
            "vm_malloc": kib(r"^\s*malloc: (\d+)KB", nmt, "malloc total"),
            "class": kib(r"^-\s+Class \(reserved=\d+KB, committed=\d+KB\)\s*\n\s*\(classes #\d+\)"
                         r"[\s\S]*?\(\s*malloc=(\d+)KB", nmt, "Class malloc"),
            "metaspace": kib(r"^-\s+Metaspace \(reserved=\d+KB, committed=(\d+)KB", nmt,
                             "Metaspace"),
            "glibc": glibc,
            "redefinitions": self.redefinitions(),
            "arenas": heaps,
            "pages": walk,
            "waited": time.monotonic() - began,
            "timed_out": chunk >= 1024,
        }

    def quit(self):
        try:
            self.ask("quit", "BYE")
            self.p.wait(timeout=60)
        finally:
            self.kill()

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


COLUMNS = [("rss", "RSS"), ("committed", "VM committed"), ("class", "Class malloc"),
           ("metaspace", "Metaspace"), ("vm_malloc", "VM malloc"), ("glibc", "glibc in use"),
           ("uncounted", "uncounted")]


def growth(first, last):
    g = {k: last[k] - first[k] for k, _ in COLUMNS if k != "uncounted"}
    g["uncounted"] = g["rss"] - g["committed"] - (g["glibc"] - g["vm_malloc"])
    g["redefinitions"] = last["redefinitions"] - first["redefinitions"]
    return g


def print_table(first_cycle, last_cycle, rows):
    print()
    print("Growth from cycle %d to cycle %d (KiB), and per redefinition (KiB):"
          % (first_cycle, last_cycle))
    print()
    print("| JVM | redefinitions | " + " | ".join(title for _, title in COLUMNS) + " |")
    print("|---|---:|" + "---:|" * len(COLUMNS))
    for name, g in rows:
        print("| %s | %d | " % (name, g["redefinitions"])
              + " | ".join("%+d" % g[k] for k, _ in COLUMNS) + " |")
        if g["redefinitions"]:
            print("| %s per redefinition | | " % name
                  + " | ".join("%+.2f" % (g[k] / g["redefinitions"]) for k, _ in COLUMNS) + " |")


def print_arenas(name, cycle, m):
    heaps = m["arenas"]
    print("%s after cycle %d: glibc arenas (heap: size/free KiB) %s; total %d/%d KiB"
          % (name, cycle, " ".join("#%d:%d/%d" % (n, s // 1024, f // 1024) for n, s, f in heaps),
             sum(s for _, s, _ in heaps) // 1024, sum(f for _, _, f in heaps) // 1024))


def print_pages(name, first_cycle, last_cycle, first, last):
    print("%s: pages of glibc's arenas after cycle %d -> %d (KiB; sparse: resident, less than 1 KiB "
          "in use; empty: resident, nothing in use)" % (name, first_cycle, last_cycle))
    if THRESHOLDS in last:
        # malloc_trim gives back a free chunk's whole pages but never shrinks the top chunk of an
        # arena other than the main one: that only happens at a free, once it reaches this size.
        print("glibc's trim threshold %d KiB, mmap threshold %d KiB (after cycle %d)"
              % (last[THRESHOLDS] + (last_cycle,)))
    print("| threads | heap size | resident | sparse | empty | chunks in use | top chunk | "
          "top chunk resident |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for owners in sorted((set(first) | set(last)) - {THRESHOLDS}):
        a = first.get(owners, (0,) * 7)
        b = last.get(owners, (0,) * 7)
        if abs(b[1] - a[1]) < 64 and abs(b[0] - a[0]) < 64:
            continue
        print("| %s | %s |" % (owners.replace(";", ", "), " | ".join(
            "%d -> %d" % (x, y) for x, y in zip(a, b))))


def print_measure(name, cycle, m):
    print("%s after cycle %2d: RSS %d, VM committed %d, VM malloc %d, Class malloc %d, "
          "Metaspace %d, glibc in use %d KiB; %d redefinitions; arena chunks freed after %.1f s%s"
          % (name, cycle, m["rss"], m["committed"], m["vm_malloc"], m["class"], m["metaspace"],
             m["glibc"], m["redefinitions"], m["waited"],
             " (TIMED OUT: Arena Chunk still >= 1 MiB)" if m["timed_out"] else ""), flush=True)


def build_floor(jdk, work):
    out = os.path.join(work, "floor")
    classes = os.path.join(out, "classes")
    os.makedirs(classes)
    subprocess.run([os.path.join(jdk, "bin", "javac"), "-d", classes,
                    os.path.join(HERE, "floor", "RetransformFloor.java")], check=True)
    jar = os.path.join(out, "floor.jar")
    subprocess.run([os.path.join(jdk, "bin", "jar"), "cfm", jar,
                    os.path.join(HERE, "floor", "manifest.txt"), "-C", classes, "."], check=True)
    return jar


def start_heaptrack(out, pid):
    """heaptrack attached to `pid` (through gdb), once it reports that it records."""
    log = out + ".log"
    tracker = subprocess.Popen(["heaptrack", "-o", out, "-p", str(pid)],
                               stdout=open(log, "w"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + REPLY_SECONDS
    while True:
        with open(log) as f:
            if "injection finished" in f.read():
                return tracker
        if tracker.poll() is not None or time.monotonic() > deadline:
            tracker.kill()
            raise SystemExit("redefinition_memory_bench: heaptrack did not attach; see " + log)
        time.sleep(0.2)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="the build directory")
    ap.add_argument("--jdk", default=JDK25 if os.path.isdir(JDK25) else JDK17,
                    help="the JDK of both JVMs (default JDK 25 when present, else 17)")
    ap.add_argument("--cycles", type=int, default=20,
                    help="attach/stop cycles, an even number of at least 4 (default 20)")
    ap.add_argument("--every", action="store_true", help="measure after every cycle")
    ap.add_argument("--no-floor", action="store_true", help="run H alone")
    ap.add_argument("--arena-wait", type=float, default=20.0,
                    help="at most this many seconds to wait for the VM's arena chunks to be freed "
                    "before a measure (default 20)")
    ap.add_argument("--pages", action="store_true",
                    help="at each measure also read, with gdb, how each glibc arena's resident pages "
                    "are used (arena_pages.py; needs gdb and libc6-dbg)")
    ap.add_argument("--heaptrack", metavar="FILE",
                    help="record H's allocations from the cycle-2 measure to the end with "
                    "`heaptrack -p` into FILE.zst, and sum what is still allocated at the end by "
                    "library (its own memory then counts in H's RSS: read the table from a run without it)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the scratch directory (logs, malloc_info dumps) and print its path")
    a = ap.parse_args()
    if a.cycles < 4 or a.cycles % 2:
        ap.error("--cycles must be an even number of at least 4 (growth is counted from cycle 2)")
    if not a.arena_wait >= 0:
        ap.error("--arena-wait must be at least 0")
    hprof = os.path.abspath(os.path.join(a.build, "lib", "libhprof.so"))
    probe = os.path.abspath(os.path.join(a.build, "bench", "attach", "libattachbench_memprobe.so"))
    classes = os.path.abspath(os.path.join(a.build, "java", "hprof-test-classes"))
    for path in (hprof, probe, os.path.join(classes, "hproftest", "AttachTarget.class")):
        if not os.path.exists(path):
            ap.error("not found: %s (build the targets hprof, java_hprof_tests and "
                     "attachbench_memprobe)" % path)
    feature = jdk_feature(a.jdk)
    if feature is None or not os.path.exists(os.path.join(a.jdk, "bin", "jcmd")):
        ap.error("not a JDK (no release file or bin/jcmd): " + a.jdk)
    floor = not a.no_floor
    for tool, wanted in (("gdb", a.pages), ("heaptrack", a.heaptrack),
                         ("heaptrack_print", a.heaptrack)):
        if wanted and shutil.which(tool) is None:
            ap.error("%s is not installed" % tool)
    if a.heaptrack and not os.path.isdir(os.path.dirname(os.path.abspath(a.heaptrack))):
        ap.error("no directory for --heaptrack " + a.heaptrack)
    if floor and feature < 24:
        print("redefinition_memory_bench: the floor F needs JDK 24 or later (java.lang.classfile);"
              " JDK %d runs H alone" % feature)
        floor = False

    work = tempfile.mkdtemp(prefix="jvmprof-redefinition-memory-bench-")
    targets = []
    tracker = None
    try:
        jar = build_floor(a.jdk, work) if floor else None
        load = os.getloadavg()[0]
        began = time.time()
        print("JDK %d (%s), %d cycles, %s" % (feature, a.jdk, a.cycles,
                                              "H and F side by side" if floor else "H alone"))
        h = Target("H", a.jdk, feature, classes, work)
        targets.append(h)
        f = Target("F", a.jdk, feature, classes, work) if floor else None
        if f:
            targets.append(f)
        for t in targets:
            t.ask("calls 1000", "CALLS ")
        if f:
            f.agent(probe, "ids")
        first = {}
        last = {}
        for cycle in range(1, a.cycles + 1):
            options = TIMES if cycle % 2 == 0 else SAMPLES
            h.agent(hprof, "%s,file=%s" % (options, os.path.join(h.work, "cycle%d.txt" % cycle)))
            h.work_round()
            h.agent(hprof, "stop")
            h.ask("round", "ROUND ")
            names, count = h.redefined_since_last()
            note = "H %d redefinitions of %d classes" % (count, len(names))
            if f:
                if cycle % 2 == 0:
                    names_file = os.path.join(f.work, "names%d.txt" % cycle)
                    with open(names_file, "w") as out:
                        out.write("\n".join(names) + "\n")
                    f.agent(jar, "in=" + names_file)
                f.work_round()
                if cycle % 2 == 0:
                    f.agent(jar, "out")
                f.ask("round", "ROUND ")
                _, f_count = f.redefined_since_last()
                note += "; F %d%s" % (f_count, " (" + f.floor_line() + ")" if cycle % 2 == 0
                                      else "")
            print("cycle %2d %-40s %s" % (cycle, options, note), flush=True)
            if cycle == 2 or cycle == a.cycles or a.every:
                for t in targets:
                    m = t.measure(probe, a.arena_wait, "%d" % cycle, a.pages)
                    print_measure(t.name, cycle, m)
                    if cycle == 2:
                        first[t.name] = m
                        if t is h and a.heaptrack:
                            tracker = start_heaptrack(a.heaptrack, h.p.pid)
                    last[t.name] = m
        print_table(2, a.cycles, [(t.name, growth(first[t.name], last[t.name])) for t in targets])
        print()
        for t in targets:
            print_arenas(t.name, 2, first[t.name])
            print_arenas(t.name, a.cycles, last[t.name])
        if a.pages:
            for t in targets:
                print_pages(t.name, 2, a.cycles, first[t.name]["pages"], last[t.name]["pages"])
                print()
        for t in targets:
            t.quit()
        if tracker:
            tracker.wait(timeout=REPLY_SECONDS)
            tracker = None
            data = [p for p in glob.glob(a.heaptrack + ".*") if not p.endswith(".log")]
            if not data:
                raise SystemExit("redefinition_memory_bench: heaptrack wrote no " + a.heaptrack
                                 + ".*; see " + a.heaptrack + ".log")
            print("H's allocations made after the cycle-2 measure and still there at the end "
                  "(heaptrack_print -f %s -l 1), by the library that asked:" % data[0])
            for lib, (size, calls) in sorted(heaptrack_leaks(data[0]).items(),
                                             key=lambda e: -e[1][0]):
                print("  %-28s %10.1f kB from sites that allocated %d times" % (
                    lib, size / 1000, calls))
        print("1-minute load average %.2f at the start, %.2f at the end; %.0f s in all"
              % (load, os.getloadavg()[0], time.time() - began))
    finally:
        for t in targets:
            t.kill()
        if tracker and tracker.poll() is None:
            tracker.kill()
        if a.keep:
            print("scratch directory kept: " + work)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
