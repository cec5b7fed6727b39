// SPDX-License-Identifier: Apache-2.0
package jvmpiheap;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.CountDownLatch;

/**
 * MONITOR_DUMP truth: threads "deadlock-a" and "deadlock-b" take two monitors in opposite order and
 * deadlock (confirmed with ThreadMXBean.findDeadlockedThreads), "notify-waiter" waits in
 * Object.wait on a third, and the dump agent's threads "raw-owner" and "raw-waiter" hold and wait
 * for a JVMPI raw monitor. Then the dump is requested.
 */
public final class MonitorProgram {
  static final class LockA {}

  static final class LockB {}

  static final class LockC {}

  static final Object lockA = new LockA(), lockB = new LockB(), lockC = new LockC();

  static void lockInOrder(Object first, Object second, CountDownLatch bothHoldFirst) {
    synchronized (first) {
      bothHoldFirst.countDown();
      try {
        bothHoldFirst.await();
      } catch (InterruptedException e) {
        return;
      }
      synchronized (second) {
        System.out.println("unreachable: no deadlock");
      }
    }
  }

  static void waitForNotify() {
    synchronized (lockC) {
      try {
        lockC.wait();
      } catch (InterruptedException e) {
        // end
      }
    }
  }

  static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    t.start();
    return t;
  }

  public static void main(String[] args) throws Exception {
    DumpAgent.load();
    final String out = System.getProperty("jvmpiheap.out");
    CountDownLatch bothHoldFirst = new CountDownLatch(2);
    daemon(() -> lockInOrder(lockA, lockB, bothHoldFirst), "deadlock-a");
    daemon(() -> lockInOrder(lockB, lockA, bothHoldFirst), "deadlock-b");

    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    long[] deadlocked = null;
    final long deadline = System.nanoTime() + 20_000_000_000L;
    while ((deadlocked == null || deadlocked.length < 2) && System.nanoTime() < deadline) {
      Thread.sleep(5);
      deadlocked = mx.findDeadlockedThreads();
    }
    Facts.fact("deadlocked_threads", deadlocked == null ? 0 : deadlocked.length);

    Thread waiter = daemon(MonitorProgram::waitForNotify, "notify-waiter");
    while (waiter.getState() != Thread.State.WAITING) Thread.onSpinWait();

    final long raw = DumpAgent.startRawScenario();
    Facts.fact("raw_monitor", Facts.hex(raw));
    Facts.fact("id_lock_a", Facts.hex(DumpAgent.idOf(lockA)));
    Facts.fact("id_lock_b", Facts.hex(DumpAgent.idOf(lockB)));
    Facts.fact("id_lock_c", Facts.hex(DumpAgent.idOf(lockC)));
    Facts.fact("rc_monitor_dump", DumpAgent.monitorDump(out + "/monitors"));
    Facts.fact("raw_released", DumpAgent.endRawScenario());
    System.out.flush();
    System.exit(0); // deadlock-a and deadlock-b never finish
  }
}
