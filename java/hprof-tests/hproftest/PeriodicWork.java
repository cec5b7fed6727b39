// SPDX-License-Identifier: Apache-2.0
package hproftest;

import java.util.concurrent.CountDownLatch;

/**
 * Work that spans several of HPROF's period= periods: for args[0] milliseconds, rounds of CPU work,
 * allocations of a known class and one contended monitor enter each (a fresh thread blocks on a
 * lock main holds, as in Contention). With "-" instead of a time, it runs until a line (or the end)
 * of standard input; a line "threads N" instead starts and joins N threads named Outage-1 ..
 * Outage-N and prints "THREADS N" (events a test makes at a moment of its choosing). Prints the
 * rounds and allocations it made.
 */
public final class PeriodicWork {
  static final class Lock {}

  static final class Item {
    final long value;

    Item(long value) {
      this.value = value;
    }
  }

  static final Lock LOCK = new Lock();
  static long sink;

  static long spin(int n) {
    long x = 17;
    for (int i = 0; i < n; i++) {
      x = x * 6364136223846793005L + 1442695040888963407L;
    }
    return x;
  }

  // Kept where other code could read them, so that the JIT cannot scalar-replace the Items (an
  // allocation escape analysis removes is never made, and the printed count would be wrong).
  static final Item[] KEPT = new Item[64];

  static void allocate(int n) {
    for (int i = 0; i < n; i++) {
      Item item = new Item(i);
      KEPT[i & 63] = item;
      sink += item.value;
    }
  }

  static void contend() throws InterruptedException {
    CountDownLatch done = new CountDownLatch(1);
    Thread t =
        new Thread(
            () -> {
              synchronized (LOCK) {
                sink++;
              }
              done.countDown();
            },
            "Contender");
    synchronized (LOCK) {
      t.start();
      while (t.getState() != Thread.State.BLOCKED) {
        Thread.onSpinWait();
      }
    }
    done.await();
    t.join();
  }

  static volatile boolean stop;

  static void startThreads(int n) throws InterruptedException {
    for (int i = 1; i <= n; i++) {
      Thread t = new Thread(() -> sink++, "Outage-" + i);
      t.start();
      t.join();
    }
    System.out.println("THREADS " + n);
    System.out.flush();
  }

  public static void main(String[] args) throws Exception {
    final boolean untilInput = args[0].equals("-");
    final long end = untilInput ? 0 : System.nanoTime() + Long.parseLong(args[0]) * 1_000_000L;
    if (untilInput) {
      Thread reader =
          new Thread(
              () -> {
                try {
                  java.io.BufferedReader in =
                      new java.io.BufferedReader(new java.io.InputStreamReader(System.in));
                  String line;
                  while ((line = in.readLine()) != null && line.startsWith("threads ")) {
                    startThreads(Integer.parseInt(line.substring(8).trim()));
                  }
                } catch (java.io.IOException | InterruptedException e) {
                  // the end of input all the same
                }
                stop = true;
              },
              "StdinWatcher");
      reader.setDaemon(true);
      reader.start();
    }
    long rounds = 0;
    while (untilInput ? !stop : System.nanoTime() < end) {
      sink += spin(2_000_000);
      allocate(100);
      contend();
      rounds++;
    }
    System.out.println("PERIODIC rounds=" + rounds + " items=" + rounds * 100);
  }
}
