#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`jvmprof serve` stopped by one SIGTERM sent as soon as it has printed its addresses must end.

The signal can come before serve's web server has started listening; a serve that treated it as
handled then listened on for ever, and a second SIGTERM was never waited for. Each of many serves
here gets exactly one SIGTERM the moment its UI line appears and must exit with "stopped"."""
import argparse
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--jvmprof", required=True)
    ap.add_argument("--starts", type=int, default=60)
    a = ap.parse_args()
    hung = 0
    for _ in range(a.starts):
        serve = subprocess.Popen([a.jvmprof, "serve", "--port", "0", "--ui-port", "0"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for line in serve.stdout:
            if "UI:" in line:
                break
        serve.terminate()
        try:
            out, _ = serve.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            hung += 1
            serve.kill()
            serve.communicate()
            continue
        if "jvmprof serve: stopped" not in out:
            print("FAILED: serve ended without stopping cleanly (exit %d)" % serve.returncode)
            return 1
    if hung:
        print("FAILED: %d of %d serves ignored the SIGTERM sent as they started" % (hung, a.starts))
        return 1
    print("all %d serves stopped on one SIGTERM" % a.starts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
