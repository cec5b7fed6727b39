# SPDX-License-Identifier: Apache-2.0
"""Runs one benchmark process and measures it: wall time, and CPU time (user + system of all its
threads), with a time limit. Shared by bench/hprof/bench.py and bench/methods/bench.py."""
import os
import signal
import subprocess
import threading
import time


def run_timed(cmd, cwd, timeout, env=None, read_stderr=None):
    """Runs cmd with stdout discarded; read_stderr(stream) consumes its stderr on a thread.
    Returns (wall s, CPU s, exit code), or None when the run was killed at the time limit."""
    got = run_timed_usage(cmd, cwd, timeout, env, read_stderr)
    if got is None:
        return None
    wall, user, system, rc = got
    return wall, user + system, rc


def run_timed_usage(cmd, cwd, timeout, env=None, read_stderr=None):
    """As run_timed, with user and system CPU time apart: (wall s, user s, system s, exit code),
    or None when the run was killed at the time limit."""
    start = time.monotonic()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    reader = threading.Thread(target=read_stderr or (lambda s: s.read()), args=(p.stderr,))
    reader.start()
    # The child is first waited for without being reaped (WNOWAIT), so the timer can never signal
    # a reaped (and possibly reused) pid; then reaped with wait4 for its resource usage.
    lock = threading.Lock()
    state = {"exited": False, "killed": False}

    def kill():
        with lock:
            if not state["exited"]:
                state["killed"] = True
                os.kill(p.pid, signal.SIGKILL)

    timer = threading.Timer(timeout, kill)
    timer.daemon = True
    timer.start()
    while True:
        try:
            os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
            break
        except InterruptedError:
            continue
    wall = time.monotonic() - start
    with lock:
        state["exited"] = True
    timer.cancel()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    reader.join()
    p.stderr.close()
    if state["killed"]:
        return None
    return wall, usage.ru_utime, usage.ru_stime, p.returncode
