// SPDX-License-Identifier: Apache-2.0
package hproftest;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

/**
 * Two daemon threads take LockA and LockB in opposite orders and deadlock (a latch makes sure
 * each holds its first lock before it tries the second). Main waits until the JVM itself sees the
 * deadlock, then either exits (mode "exit", the dump at exit shows it) or sends itself SIGQUIT
 * (mode "quit"), waits until the profile file holds a MONITOR DUMP, and exits.
 */
public final class Deadlock {
  static final class LockA {}

  static final class LockB {}

  static final LockA A = new LockA();
  static final LockB B = new LockB();

  static void lockBoth(Object first, Object second, CountDownLatch bothHoldOne) {
    synchronized (first) {
      bothHoldOne.countDown();
      try {
        bothHoldOne.await();
      } catch (InterruptedException e) {
        return;
      }
      synchronized (second) {
        System.out.println("NOT DEADLOCKED");
      }
    }
  }

  public static void main(String[] args) throws Exception {
    final String mode = args.length > 0 ? args[0] : "exit";
    CountDownLatch bothHoldOne = new CountDownLatch(2);
    Thread t1 = new Thread(() -> lockBoth(A, B, bothHoldOne), "Deadlock-1");
    Thread t2 = new Thread(() -> lockBoth(B, A, bothHoldOne), "Deadlock-2");
    t1.setDaemon(true);
    t2.setDaemon(true);
    t1.start();
    t2.start();
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    long[] ids;
    while ((ids = mx.findDeadlockedThreads()) == null || ids.length < 2) {
      Thread.sleep(5); // polling the JVM's own deadlock detector, not a guess
    }
    System.out.println("DEADLOCKED " + ids.length);
    System.out.flush();
    if (mode.equals("quit")) {
      Path file = Path.of(args.length > 1 ? args[1] : "java.hprof.txt");
      long pid = ProcessHandle.current().pid();
      Process kill = new ProcessBuilder("kill", "-QUIT", Long.toString(pid)).inheritIO().start();
      if (kill.waitFor() != 0) throw new IllegalStateException("kill -QUIT failed");
      while (!Files.exists(file) || !Files.readString(file).contains("MONITOR DUMP END")) {
        Thread.sleep(5); // until the SIGQUIT dump is in the file
      }
      System.out.println("DUMPED");
    }
    System.exit(0);
  }
}
