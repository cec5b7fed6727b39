#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs the transcripts of the project's Markdown documents and checks them against what the
commands print now (--check), or writes what they print into the documents (--write).

  transcripts.py --check [--build DIR] [FILE.md ...]     (default: README.md)
  transcripts.py --write [--build DIR] [FILE.md ...]

A transcript is a fenced code block right after a line `<!-- transcript -->`. In it, a line
starting with `$ ` is a command (a line ending in ` \\` continues it on the next line); the lines
after a command, up to the next command, are what it prints (stdout and stderr together). A line
`...` stands for any number of lines: what a command prints that differs from run to run (the
CPU samples' counts) is left out that way.

The commands of one block run one after the other with bash in a fresh scratch directory holding
`build` (a link to the build tree, DIR, default build/ of this checkout) and `scripts` (a link to
this checkout's scripts/), with JDK 17's bin/ first on PATH (--java-home), so that `build/...` and `bash scripts/...` mean what they mean in the
repository, and nothing is written into it. Before comparing, both sides are normalised where a
run legitimately differs: the scratch directory's path (written into the document as nothing, so
paths read build/... and demo-output/...), dates and times, a heap dump's size in bytes, the wall
time of a run, the UI's random token. Object ids (0x...) are matched as names: the heap dump
numbers objects in the order it meets them, which another thread's allocation at start-up can
shift, so an id the document shows stands for the id printed in the same place now, the same one
throughout a block (a later command given that id is given the new one). Nothing else: the object
counts and sizes of the heap analysis and every other word must match.
"""
import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile

MARKER = "<!-- transcript -->"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

VARYING = [
    (re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d( UTC)?"), "<date>"),
    (re.compile(r"\b[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\b"), "<date>"),
    (re.compile(r"\d+ bytes, taken"), "<size> bytes, taken"),
    (re.compile(r"\b\d+\.\d{3} s\b"), "<seconds> s"),
    (re.compile(r"token=[0-9a-f]+"), "token=<token>"),
]


OBJECT_ID = re.compile(r"\b0x[0-9a-f]{3,}\b")


def normalise(line, mask_ids=False):
    for pattern, replacement in VARYING:
        line = pattern.sub(replacement, line)
    if mask_ids:
        line = OBJECT_ID.sub("<id>", line)
    return line.rstrip()


def renamed(line, ids):
    """The line with the document's object ids replaced by the ones learnt for them."""
    return OBJECT_ID.sub(lambda m: ids.get(m.group(0), m.group(0)), line)


def learn_ids(expected, actual, ids):
    """Pairs the document's object ids with the ones printed in the same places now (where the
    lines match but for ids); False when that would give one id two meanings."""
    starts = align(expected, actual, mask_ids=True)
    if starts is None:
        return True
    for run, start in zip(segments(expected), starts):
        for want, got in zip(run, actual[start:start + len(run)]):
            for a, b in zip(OBJECT_ID.findall(want), OBJECT_ID.findall(got)):
                if ids.get(a, b) != b or any(v == b and k != a for k, v in ids.items()):
                    return False
                ids[a] = b
    return True


class Block:
    """One transcript: its line range in the document and its commands with expected output."""

    def __init__(self, start, end, lines):
        self.start, self.end = start, end  # the fenced block's content lines [start, end)
        self.steps = []  # (command lines, expected output lines)
        command = None
        for line in lines:
            if command is not None and command[-1].endswith("\\"):
                command.append(line)
            elif line.startswith("$ "):
                command = [line]
                self.steps.append((command, []))
            elif self.steps:
                self.steps[-1][1].append(line)
            else:
                raise ValueError("a transcript must start with a '$ ' command line: " + line)

    @staticmethod
    def command_text(command):
        text = "\n".join(command)
        return text[2:]


def find_blocks(lines, path):
    blocks = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == MARKER:
            if i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
                raise ValueError(f"{path}:{i + 1}: {MARKER} not followed by a fenced block")
            end = i + 2
            while end < len(lines) and not lines[end].startswith("```"):
                end += 1
            if end == len(lines):
                raise ValueError(f"{path}:{i + 2}: unterminated fenced block")
            try:
                blocks.append(Block(i + 2, end, lines[i + 2:end]))
            except ValueError as e:
                raise ValueError(f"{path}:{i + 3}: {e}") from None
            i = end
        i += 1
    return blocks


def run_block(block, build, java_home):
    """The block's commands in a scratch directory; per command, the command as run (object ids
    renamed), what it printed (lines, with the scratch directory's path taken out), its exit
    status and the object ids learnt so far ({} when they contradict each other)."""
    outputs = []
    # Always under /tmp, with a name of one length: the JVM keeps its working directory's path,
    # so a dump's byte counts follow the path's length.
    with tempfile.TemporaryDirectory(prefix="transcript-", dir="/tmp") as scratch:
        # The agents and the Java classes are copied, not linked: the JVM keeps their real paths
        # (the tracker jar found beside the runtime, the class path's canonical form), so a dump's
        # byte counts would follow the checkout's path.
        os.mkdir(os.path.join(scratch, "build"))
        for entry in os.listdir(build):
            target = os.path.join(scratch, "build", entry)
            if entry in ("lib", "java"):
                shutil.copytree(os.path.join(build, entry), target, symlinks=True)
            else:
                os.symlink(os.path.join(build, entry), target)
        os.symlink(os.path.join(ROOT, "scripts"), os.path.join(scratch, "scripts"))
        env = dict(os.environ, LC_ALL="C.UTF-8")
        env["PATH"] = os.path.join(java_home, "bin") + os.pathsep + env.get("PATH", "")
        env.pop("LD_LIBRARY_PATH", None)
        ids = {}  # the document's object ids -> the ones printed now
        for command, expected in block.steps:
            command = [renamed(line, ids) for line in command]
            p = subprocess.run(["bash", "-c", Block.command_text(command)], cwd=scratch, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
            text = p.stdout.decode("utf-8", "replace").replace(scratch + "/", "")
            text = text.replace(scratch, ".")
            actual = text.splitlines()
            consistent = learn_ids(expected, actual, ids)
            outputs.append((command, actual, p.returncode, dict(ids) if consistent else {}))
    return outputs


def segments(expected):
    """The runs of lines between `...` lines (k `...` lines make k + 1 runs)."""
    runs = [[]]
    for line in expected:
        if line.strip() == "...":
            runs.append([])
        else:
            runs[-1].append(line)
    return runs


def align(expected, actual, mask_ids=False):
    """Where each run of expected lines sits in `actual` (the start index of each), or None. The
    first run is anchored at the start, the last at the end, the others are found in order
    (first fit)."""
    runs = [[normalise(x, mask_ids) for x in run] for run in segments(expected)]
    got = [normalise(x, mask_ids) for x in actual]
    if len(runs) == 1:
        return [0] if runs[0] == got else None
    if got[:len(runs[0])] != runs[0]:
        return None
    starts, at = [0], len(runs[0])
    for run in runs[1:-1]:
        while at + len(run) <= len(got) and got[at:at + len(run)] != run:
            at += 1
        if at + len(run) > len(got):
            return None
        starts.append(at)
        at += len(run)
    last = len(got) - len(runs[-1])
    if last < at or got[last:] != runs[-1]:
        return None
    starts.append(last)
    return starts


def rewritten(expected, actual):
    """What the document should hold: the expected runs replaced by the lines they matched (or,
    when they no longer match, everything the command printed, for the author to trim)."""
    starts = align(expected, actual)
    if starts is None:
        return [line.rstrip() for line in actual]
    out = []
    for i, (run, start) in enumerate(zip(segments(expected), starts)):
        if i:
            out.append("...")
        out += [line.rstrip() for line in actual[start:start + len(run)]]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="compare; exit 1 on a difference")
    mode.add_argument("--write", action="store_true", help="write what the commands print")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="the build tree")
    ap.add_argument("--java-home", default="/usr/lib/jvm/java-17-openjdk-amd64",
                    help="the JDK whose bin/ comes first on PATH (`java` in the transcripts)")
    ap.add_argument("files", nargs="*", default=[os.path.join(ROOT, "README.md")])
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    if not os.path.isfile(os.path.join(build, "CMakeCache.txt")):
        print(f"transcripts.py: {build} is not a build tree (run scripts/build.sh)",
              file=sys.stderr)
        return 2
    failed = 0
    for path in a.files:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        try:
            blocks = find_blocks(lines, path)
        except ValueError as e:
            print(f"transcripts.py: {e}", file=sys.stderr)
            return 2
        if not blocks:
            print(f"{path}: no transcript")
            continue
        for block in reversed(blocks):  # from the end, so that line numbers stay valid
            outputs = run_block(block, build, a.java_home)
            new_lines = []
            for (_, expected), (command, actual, rc, ids) in zip(block.steps, outputs):
                where = f"{path}:{block.start + 1}: $ {Block.command_text(command)}"
                if rc != 0:
                    print(f"{where}\n  exited with status {rc}:\n  " + "\n  ".join(actual))
                    failed += 1
                expected = [renamed(line, ids) for line in expected]
                if a.check and align(expected, actual) is None:
                    failed += 1
                    print(f"{where}\n  prints something else than the document says "
                          "(normalised; - document, + now):")
                    want = [normalise(x) for x in expected]
                    got = [normalise(x) for x in actual]
                    for d in difflib.unified_diff(want, got, lineterm="", n=2):
                        print("  " + d)
                new_lines += command + rewritten(expected, actual)
            if a.write:
                lines[block.start:block.end] = new_lines
        if a.write:
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join(lines))
            print(f"{path}: {len(blocks)} transcript(s) written")
        elif not failed:
            print(f"{path}: {len(blocks)} transcript(s) match what the commands print")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
