// SPDX-License-Identifier: Apache-2.0
package hproftest;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Known answer for sampling virtual threads: 10,000 virtual threads each run spin(), a CPU-bound
 * method, for about 0.25 ms of CPU. Nearly every sample must have spin() on top. Built for JDK 17
 * (virtual threads are reached by reflection); on a JDK without them it prints "NO VIRTUAL
 * THREADS" and does nothing.
 */
public final class VirtualSpin {
  static volatile long sink;

  static long spin(long x) {
    for (int i = 0; i < 200_000; i++) {
      x = x * 6364136223846793005L + 1442695040888963407L;
      x ^= (x >>> 17);
    }
    return x;
  }

  public static void main(String[] args) throws Exception {
    final int count = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
    ExecutorService executor;
    try {
      executor = (ExecutorService)
          Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
    } catch (NoSuchMethodException e) {
      System.out.println("NO VIRTUAL THREADS");
      return;
    }
    for (int i = 0; i < count; i++) {
      final long seed = i;
      executor.submit(() -> sink += spin(seed));
    }
    executor.shutdown();
    executor.awaitTermination(1, java.util.concurrent.TimeUnit.HOURS);
    System.out.println("VIRTUALSPIN DONE " + count);
  }
}
