// SPDX-License-Identifier: Apache-2.0
package hproftest;

import java.util.concurrent.CountDownLatch;

/**
 * Known answer for cpu=samples: thread "Burner" spins in burn() for a while, thread "Sleeper"
 * sleeps (in Thread.sleep) the whole time. burn() must be rank 1 and Sleeper must get no samples.
 */
public final class CpuHog {
  static volatile long sink;

  /** CPU-bound: no calls inside the loop, so burn() is the top frame of every sample. */
  static long burn(long millis) {
    final long end = System.nanoTime() + millis * 1_000_000L;
    long x = 1;
    long rounds = 0;
    while (true) {
      for (int i = 0; i < 1_000_000; i++) {
        x = x * 6364136223846793005L + 1442695040888963407L;
        x ^= (x >>> 17);
      }
      rounds++;
      if (System.nanoTime() >= end) return x + rounds;
    }
  }

  static void sleepUntilInterrupted(CountDownLatch asleep) {
    asleep.countDown();
    try {
      Thread.sleep(600_000);
    } catch (InterruptedException expected) {
      // woken by main when the burner is done
    }
  }

  public static void main(String[] args) throws Exception {
    final long millis = args.length > 0 ? Long.parseLong(args[0]) : 800;
    CountDownLatch asleep = new CountDownLatch(1);
    Thread sleeper = new Thread(() -> sleepUntilInterrupted(asleep), "Sleeper");
    sleeper.start();
    asleep.await();
    Thread burner = new Thread(() -> sink = burn(millis), "Burner");
    burner.start();
    burner.join();
    sleeper.interrupt();
    sleeper.join();
    System.out.println("CPUHOG DONE " + (sink != 0));
  }
}
