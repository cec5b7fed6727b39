// SPDX-License-Identifier: Apache-2.0
package hproftest;

import java.util.concurrent.CountDownLatch;

/**
 * Known answer for monitor=y: ROUNDS times, main holds a Lock while a fresh thread blocks on it
 * (main waits until that thread is BLOCKED), then releases it. Each round is one contended enter.
 */
public final class Contention {
  static final class Lock {}

  static final Lock LOCK = new Lock();
  static int entered;

  static void enterLock(CountDownLatch done) {
    synchronized (LOCK) {
      entered++;
    }
    done.countDown();
  }

  public static void main(String[] args) throws Exception {
    final int rounds = Integer.parseInt(args[0]);
    for (int r = 0; r < rounds; r++) {
      CountDownLatch done = new CountDownLatch(1);
      Thread t = new Thread(() -> enterLock(done), "Blocker-" + r);
      synchronized (LOCK) {
        t.start();
        // The thread cannot get LOCK while main holds it: wait until it is blocked on it.
        while (t.getState() != Thread.State.BLOCKED) {
          Thread.onSpinWait();
        }
      }
      done.await();
      t.join();
    }
    synchronized (LOCK) {
      System.out.println("CONTENTION rounds=" + rounds + " entered=" + entered);
    }
  }
}
