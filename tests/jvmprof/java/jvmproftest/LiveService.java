// SPDX-License-Identifier: Apache-2.0
package jvmproftest;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.CountDownLatch;

/**
 * A small service for the live views: thread "Burner" computes in hotLoop(), thread "Allocator"
 * allocates Payload objects all the time (so each SITES report differs from the last), threads
 * "Contender-1" and "Contender-2" take turns on one Lock, holding it a few milliseconds (so
 * MONITOR TIME grows and a MONITOR DUMP finds an owner and a waiter), and thread "Holder" keeps
 * one Held object as an argument of 5 nested frames (5 Java frame roots for one object). Runs
 * until stdin closes; prints READY once every thread is in place.
 */
public final class LiveService {
  static volatile long sink;
  static volatile boolean stop;
  static final Object LOCK = new Lock();
  static final CountDownLatch HOLDING = new CountDownLatch(1);
  static final CountDownLatch RELEASE = new CountDownLatch(1);

  static final class Lock {}

  static final class Payload {
    final long[] data = new long[4];
  }

  static final class Held {
    final int id = 42;
  }

  static long hotLoop() {
    long x = 1;
    for (int i = 0; i < 2_000_000; i++) {
      x = x * 6364136223846793005L + 1442695040888963407L;
      x ^= (x >>> 17);
    }
    return x;
  }

  /** Each of the `depth` frames holds `held` in a local slot until RELEASE opens. */
  static int hold(Held held, int depth) throws InterruptedException {
    if (depth > 1) return hold(held, depth - 1) + held.id;
    HOLDING.countDown();
    RELEASE.await();
    return held.id;
  }

  static Thread daemon(String name, Runnable r) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    t.start();
    return t;
  }

  public static void main(String[] args) throws Exception {
    daemon("Burner", () -> {
      while (!stop) sink += hotLoop();
    });
    daemon("Allocator", () -> {
      Payload[] ring = new Payload[1000];
      for (int i = 0; !stop; i++) {
        ring[i % ring.length] = new Payload();
        if (i % 1000 == 0) {
          try {
            Thread.sleep(1);
          } catch (InterruptedException e) {
            return;
          }
        }
      }
    });
    for (int k = 1; k <= 2; k++) {
      daemon("Contender-" + k, () -> {
        while (!stop) {
          synchronized (LOCK) {
            try {
              Thread.sleep(3);
            } catch (InterruptedException e) {
              return;
            }
          }
        }
      });
    }
    daemon("Holder", () -> {
      try {
        sink += hold(new Held(), 5);
      } catch (InterruptedException e) {
        // ends with the program
      }
    });
    HOLDING.await();
    System.out.println("READY");
    System.out.flush();
    new BufferedReader(new InputStreamReader(System.in)).readLine();
    stop = true;
    RELEASE.countDown();
    System.out.println("DONE");
  }
}
