#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""jvmprof convert on a real profile whose answer is known (hproftest.CpuHog: burn() is the hot
method), each export opened by a reader we did not write:
  collapsed  - the burn() stack carries exactly CPU SAMPLES' count for burn's trace
  pprof      - decoded by protobuf's own parser (protoc --decode, and `go tool pprof` when
               installed), sample values add up to the CPU SAMPLES total
  speedscope - valid against speedscope's file-format schema (python3-jsonschema)
  html       - rendered by headless Chromium: a flame-graph frame for burn() is drawn
Both HPROF formats (format=a and format=b) are converted."""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)
    return cond


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, timeout=180, **kw)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--jvmprof", required=True)
    ap.add_argument("--lib-dir", required=True)
    ap.add_argument("--classes", required=True)
    ap.add_argument("--java", required=True)
    ap.add_argument("--proto", required=True)
    ap.add_argument("--schema", required=True)
    ap.add_argument("--keep", help="copy the outputs here")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="jvmprof-exports-")
    env = dict(os.environ, LD_LIBRARY_PATH=a.lib_dir)
    try:
        for fmt in ("a", "b"):
            name = "java.hprof.txt" if fmt == "a" else "java.hprof"
            prof = os.path.join(work, name)
            opts = "cpu=samples,heap=sites,depth=8,format=%s,file=%s" % (fmt, prof)
            if fmt == "a":
                opts += ",thread=y"
            run([a.java, "-agentlib:hprof=" + opts, "-cp", a.classes, "hproftest.CpuHog", "800"],
                env=env, cwd=work)
            check_exports(a, work, prof, fmt)
        if a.keep:
            os.makedirs(a.keep, exist_ok=True)
            for f in os.listdir(work):
                shutil.copy(os.path.join(work, f), a.keep)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("exports: ok")
    return 0


def burn_rows(collapsed):
    rows = {}
    for line in collapsed.splitlines():
        stack, _, count = line.rpartition(" ")
        rows[stack] = int(count)
    return rows


def check_exports(a, work, prof, fmt):
    tag = "format=" + fmt
    # The answer from HPROF's own report: CPU SAMPLES total and burn's samples.
    if fmt == "a":
        text = open(prof, encoding="utf-8", errors="replace").read()
        section = text[text.index("CPU SAMPLES BEGIN"):]
        total = int(re.search(r"total = (\d+)", section).group(1))
        burn = sum(int(m.group(1)) for m in
                   re.finditer(r"^\s+\d+\s+\S+%\s+\S+%\s+(\d+)\s+\d+ hproftest\.CpuHog\.burn$",
                               section, re.M))
    # collapsed
    collapsed = run([a.jvmprof, "convert", "--to", "collapsed", "--measure", "cpu-samples",
                     prof, "-"]).stdout.decode()
    rows = burn_rows(collapsed)
    burn_stacks = {s: c for s, c in rows.items() if s.endswith(";hproftest.CpuHog.burn")}
    check(len(burn_stacks) == 1, tag + ": one collapsed stack ends in CpuHog.burn: %r" % burn_stacks)
    summed = sum(rows.values())
    hot = max(rows, key=rows.get)
    check(hot.endswith("hproftest.CpuHog.burn"), tag + ": hottest collapsed stack is burn(): " + hot)
    check(rows[hot] * 2 > summed, tag + ": burn() has most samples (%d of %d)" % (rows[hot], summed))
    if fmt == "a":
        check(summed == total, tag + ": collapsed counts add up to CPU SAMPLES total %d (got %d)"
              % (total, summed))
        check(rows[hot] == burn, tag + ": burn's collapsed count %d == CPU SAMPLES row %d"
              % (rows[hot], burn))
    else:
        total = summed
    # pprof: protobuf's own parser
    pb = os.path.join(work, "cpu-%s.pb" % fmt)
    run([a.jvmprof, "convert", "--to", "pprof", "--measure", "cpu-samples", "--measure",
         "alloc-bytes", prof, pb])
    decoded = run(["protoc", "--decode=perftools.profiles.Profile",
                   "-I", os.path.dirname(a.proto), os.path.basename(a.proto)],
                  stdin=open(pb, "rb")).stdout.decode()
    strings = re.findall(r'^string_table: "(.*)"$', decoded, re.M)
    check(strings and strings[0] == "", tag + ": pprof string_table[0] is empty")
    check("hproftest.CpuHog.burn" in strings, tag + ": pprof names CpuHog.burn")
    check("samples" in strings and "alloc_space" in strings, tag + ": pprof sample types")
    sample_values = re.findall(r"sample \{[^}]*?\}", decoded, re.S)
    cpu_sum = 0
    for s in sample_values:
        vals = [int(v) for v in re.findall(r"value: (-?\d+)", s)]
        check(len(vals) == 2, tag + ": each pprof sample has 2 values")
        cpu_sum += vals[0] if vals else 0
    check(cpu_sum == total, tag + ": pprof cpu values add up to %d (got %d)" % (total, cpu_sum))
    go = shutil.which("go")
    if go:
        top = run([go, "tool", "pprof", "-top", "-sample_index=samples", pb],
                  env=dict(os.environ, HOME=work, GOCACHE=os.path.join(work, "gocache"),
                           GOFLAGS="-mod=mod", GOTOOLCHAIN="local")).stdout.decode()
        flat_lines = [l for l in top.splitlines() if "hproftest.CpuHog.burn" in l]
        # Without -sample_index pprof opens on the default sample type: CPU, the first one.
        plain = run([go, "tool", "pprof", "-top", pb],
                    env=dict(os.environ, HOME=work, GOCACHE=os.path.join(work, "gocache"),
                             GOFLAGS="-mod=mod", GOTOOLCHAIN="local")).stdout.decode()
        plain_burn = [l for l in plain.splitlines() if "hproftest.CpuHog.burn" in l]
        check("Type: samples" in plain and plain_burn and plain_burn[0].split()[0] == str(rows[hot]),
              tag + ": go tool pprof -top without -sample_index opens on CPU samples\n" + plain[:800])
        check(bool(flat_lines), tag + ": go tool pprof -top lists burn()\n" + top[:800])
        if flat_lines:
            check(flat_lines[0].split()[0] == str(rows[hot]),
                  tag + ": go tool pprof's flat count of burn() is %d\n" % rows[hot] + top[:800])
    else:
        print("go tool pprof: skipped (golang-go not installed)")
    # speedscope: schema
    import jsonschema
    ss = os.path.join(work, "cpu-%s.speedscope.json" % fmt)
    run([a.jvmprof, "convert", "--to", "speedscope", prof, ss])
    doc = json.load(open(ss))
    try:
        jsonschema.validate(doc, json.load(open(a.schema)))
    except jsonschema.ValidationError as e:
        check(False, tag + ": speedscope schema: " + e.message)
    cpu = [p for p in doc["profiles"] if p["name"] == "cpu-samples"][0]
    check(sum(cpu["weights"]) == total, tag + ": speedscope weights add up to the total")
    check(len(cpu["samples"]) == len(cpu["weights"]), tag + ": one weight per sample")
    nframes = len(doc["shared"]["frames"])
    check(all(0 <= i < nframes for s in cpu["samples"] for i in s), tag + ": frame indices valid")
    # html: headless Chromium draws a frame for burn()
    html = os.path.join(work, "cpu-%s.html" % fmt)
    run([a.jvmprof, "convert", "--to", "html", prof, html])
    check("http://" not in open(html).read().replace("http://json-schema", "")
          and "https://" not in open(html).read(), tag + ": html loads nothing from the network")
    chromium = shutil.which("chromium")
    if chromium:
        dom = run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                   "--user-data-dir=" + os.path.join(work, "chromium-" + fmt),
                   "--dump-dom", "file://" + html]).stdout.decode()
        check(re.search(r'<div class="fg-frame[^"]*"[^>]*data-name="hproftest\.CpuHog\.burn"', dom)
              is not None, tag + ": Chromium drew a flame-graph frame for CpuHog.burn")
        check(re.search(r'<td class="fg-name">hproftest\.CpuHog\.burn</td>', dom) is not None,
              tag + ": hot-methods table lists CpuHog.burn")
    else:
        print("chromium: skipped (not installed)")


if __name__ == "__main__":
    sys.exit(main())
