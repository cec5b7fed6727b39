// SPDX-License-Identifier: Apache-2.0
package hproftest;

import java.util.concurrent.CountDownLatch;

/**
 * Known answer for the WAIT/WAITED/SLEEP lines of monitor=y, all on thread "main", in this order:
 * wait(60000) on a Signal ended by notify (the notifier waits until main is TIMED_WAITING),
 * wait() on a Signal ended by notify, wait(13) that times out, and Thread.sleep(37).
 */
public final class WaitSleep {
  static final class Signal {
    boolean fired;
  }

  static Thread notifyWhenWaiting(Thread waiter, Signal signal, Thread.State state) {
    Thread t =
        new Thread(
            () -> {
              while (waiter.getState() != state) {
                Thread.onSpinWait();
              }
              synchronized (signal) {
                signal.fired = true;
                signal.notifyAll();
              }
            },
            "Notifier");
    t.start();
    return t;
  }

  public static void main(String[] args) throws Exception {
    Thread main = Thread.currentThread();
    Signal timed = new Signal();
    synchronized (timed) {
      Thread n = notifyWhenWaiting(main, timed, Thread.State.TIMED_WAITING);
      while (!timed.fired) timed.wait(60000);
      n.join();
    }
    Signal untimed = new Signal();
    synchronized (untimed) {
      Thread n = notifyWhenWaiting(main, untimed, Thread.State.WAITING);
      while (!untimed.fired) untimed.wait();
      n.join();
    }
    Signal never = new Signal();
    synchronized (never) {
      never.wait(13);
    }
    Thread.sleep(37);
    System.out.println("WAITSLEEP DONE");
  }
}
