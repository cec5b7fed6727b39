#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Reopen time of two jvmprof builds side by side, interleaved, with an A/A row.

Each build reads its own dump path (the index format may differ between builds; hard links of
one dump give each build its own DUMP.jvmprof-index without copying the dump). The indexes must
exist already (run each build once on its dump). Every round runs, in rotating order, build A on
dump A twice (A and A') and build B on dump B, for each command; reports wall and CPU seconds
(user + system, from wait4) as medians, and B/A and A'/A ratios.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

COMMANDS = {"summary": ["summary"], "dominators": ["dominators", "--top", "10"]}


def run(binary, args, dump):
    start = time.monotonic()
    proc = subprocess.Popen([binary] + args + [dump], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if status != 0:
        sys.exit(f"{binary} {' '.join(args)} {dump} failed ({status}): {err.strip()}")
    return wall, usage.ru_utime + usage.ru_stime


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--a", required=True, help="baseline jvmprof binary")
    p.add_argument("--a-dump", required=True, help="dump the baseline reads (its index exists)")
    p.add_argument("--b", required=True, help="candidate jvmprof binary")
    p.add_argument("--b-dump", required=True, help="dump the candidate reads (its index exists)")
    p.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    p.add_argument("--commands", default="summary,dominators",
                   help="comma-separated: summary, dominators (default both)")
    a = p.parse_args()
    commands = a.commands.split(",")
    for c in commands:
        if c not in COMMANDS:
            p.error(f"unknown command {c!r}")
    if a.rounds < 1:
        p.error("--rounds must be >= 1")
    for f in (a.a, a.b, a.a_dump, a.b_dump):
        if not os.path.exists(f):
            p.error(f"{f}: no such file")
    for d in (a.a_dump, a.b_dump):
        if not os.path.exists(d + ".jvmprof-index"):
            p.error(f"{d}.jvmprof-index missing: run that build on it once first")
    runs = {(c, who): [] for c in commands for who in ("A", "A'", "B")}
    order = [("A", a.a, a.a_dump), ("B", a.b, a.b_dump), ("A'", a.a, a.a_dump)]
    for r in range(a.rounds):
        for c in commands:
            rotated = order[r % 3:] + order[:r % 3]
            for who, binary, dump in rotated:
                runs[(c, who)].append(run(binary, COMMANDS[c], dump))
        load = os.getloadavg()[0]
        print(f"round {r + 1}/{a.rounds} done, load {load:.1f}", file=sys.stderr)
    print("| reopen | A wall | A CPU | B wall | B CPU | B/A wall | B/A CPU | A'/A wall | A'/A CPU |")
    print("|---|---|---|---|---|---|---|---|---|")
    for c in commands:
        med = {who: (statistics.median(w for w, _ in runs[(c, who)]),
                     statistics.median(u for _, u in runs[(c, who)])) for who in ("A", "A'", "B")}
        (aw, ac), (bw, bc), (pw, pc) = med["A"], med["B"], med["A'"]
        print(f"| {' '.join(COMMANDS[c])} | {aw:.2f} s | {ac:.2f} s | {bw:.2f} s | {bc:.2f} s | "
              f"{bw / aw:.3f} | {bc / ac:.3f} | {pw / aw:.3f} | {pc / ac:.3f} |")
        for who in ("A", "A'", "B"):
            print(f"  {c} {who}: " + ", ".join(f"{w:.2f}/{u:.2f}" for w, u in runs[(c, who)]),
                  file=sys.stderr)


if __name__ == "__main__":
    main()
