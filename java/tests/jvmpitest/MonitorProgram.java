// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

/**
 * Java monitor scenarios, each on a thread of its own with a known name: contention on a lock
 * main holds, Object.wait(200), Object.wait() ended by notifyAll, and Thread.sleep(150). Tells
 * the agent the objects involved (hook 1) and prints the times it measured itself.
 */
public class MonitorProgram {
  static final class ContendedLock {
    int count;
  }

  static volatile boolean notified;

  static Thread named(String name, Runnable r) {
    return new Thread(r, name);
  }

  public static void main(String[] args) throws Exception {
    ContendedLock lock = new ContendedLock();
    Agent.hook(1, 1, lock);
    Thread contender =
        named(
            "jvmpitest-contender",
            () -> {
              synchronized (lock) {
                lock.count++;
              }
            });
    synchronized (lock) {
      contender.start();
      Facts.awaitState(contender, Thread.State.BLOCKED);
    }
    contender.join();
    Facts.fact("FACT", "contended", lock.count);

    Object timed = new Object();
    Agent.hook(1, 2, timed);
    Thread timedWaiter =
        named(
            "jvmpitest-timed-waiter",
            () -> {
              synchronized (timed) {
                long t0 = System.nanoTime();
                try {
                  timed.wait(200);
                } catch (InterruptedException e) {
                  throw new RuntimeException(e);
                }
                long t1 = System.nanoTime();
                Facts.fact("WAITED", "requested", 200, "actual_ms", (t1 - t0) / 1_000_000);
              }
            });
    timedWaiter.start();
    timedWaiter.join();

    Object untimed = new Object();
    Agent.hook(1, 3, untimed);
    Thread untimedWaiter =
        named(
            "jvmpitest-untimed-waiter",
            () -> {
              synchronized (untimed) {
                while (!notified) {
                  try {
                    untimed.wait();
                  } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                  }
                }
              }
            });
    untimedWaiter.start();
    Facts.awaitState(untimedWaiter, Thread.State.WAITING);
    synchronized (untimed) {
      notified = true;
      untimed.notifyAll();
    }
    untimedWaiter.join();

    Thread sleeper =
        named(
            "jvmpitest-sleeper",
            () -> {
              long t0 = System.nanoTime();
              try {
                Thread.sleep(150);
              } catch (InterruptedException e) {
                throw new RuntimeException(e);
              }
              long t1 = System.nanoTime();
              Facts.fact("SLEPT", "requested", 150, "actual_ms", (t1 - t0) / 1_000_000);
            });
    sleeper.start();
    sleeper.join();
    // A sleep cut short by an interrupt still ends with MONITOR_WAITED.
    Thread interrupted =
        named(
            "jvmpitest-interrupted-sleeper",
            () -> {
              long t0 = System.nanoTime();
              try {
                Thread.sleep(60_000);
              } catch (InterruptedException expected) {
                long t1 = System.nanoTime();
                Facts.fact("INTERRUPTED", "requested", 60_000, "actual_ms", (t1 - t0) / 1_000_000);
              }
            });
    interrupted.start();
    Facts.awaitState(interrupted, Thread.State.TIMED_WAITING);
    interrupted.interrupt();
    interrupted.join();
    Facts.fact("FACT", "done", 1);
  }
}
