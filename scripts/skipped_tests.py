#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Lists the tests a CTest run skipped, each with its reason, from CTest's JUnit file
(ctest --output-junit FILE).

  skipped_tests.py FILE

The reason is the test's own word for it: GoogleTest's message after "Skipped" (GTEST_SKIP() <<
...), or a line "skipped: ..." that a script test prints before exiting with its skip code."""
import re
import sys
import xml.etree.ElementTree as ET


def reason(output):
    lines = output.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"\s*skipped:\s*(.+)", line, re.IGNORECASE)
        if m:
            return m.group(1).strip()
        if re.search(r"(^|: )Skipped\s*$", line) and i + 1 < len(lines) and lines[i + 1].strip():
            return lines[i + 1].strip()
    return "no reason printed (see the test's output in build/Testing/Temporary/LastTest.log)"


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    try:
        root = ET.parse(argv[1]).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"skipped_tests.py: cannot read {argv[1]}: {e}", file=sys.stderr)
        return 1
    skipped = []
    for case in root.iter("testcase"):
        if case.get("status") == "skipped" or case.find("skipped") is not None:
            out = case.findtext("system-out") or ""
            skipped.append((case.get("name", "?"), reason(out)))
    if not skipped:
        print("skipped tests: none")
        return 0
    print(f"skipped tests: {len(skipped)}")
    for name, why in sorted(skipped):
        print(f"  {name}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
