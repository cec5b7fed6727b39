// SPDX-License-Identifier: Apache-2.0
package jvmproftest;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * Known answer for the differential flame graph: the main thread spends PERCENT of its work in
 * hotA() and the rest in coldB() (both call work(), calls interleaved evenly), until it has used
 * BUDGET ms of CPU. Two runs with different PERCENTs shift hotA's share of the CPU samples by the
 * difference. Args: PERCENT (0-100) [BUDGET ms, default 3000].
 */
public final class ShiftHog {
  static final int WORK = 100_000;
  static volatile long sink;

  // The work itself is one method for both callers, so the JIT compiles it once for both: two
  // copies compiled at different times would skew their CPU shares away from their call shares.
  static long work(long x) {
    for (int i = 0; i < WORK; i++) x = x * 6364136223846793005L + 1442695040888963407L;
    return x;
  }

  static long hotA(long x) {
    return work(x);
  }

  static long coldB(long x) {
    return work(x);
  }

  public static void main(String[] args) {
    final int percent = Integer.parseInt(args[0]);
    final long budgetNs = (args.length > 1 ? Long.parseLong(args[1]) : 3000) * 1_000_000L;
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    final long start = mx.getCurrentThreadCpuTime();
    long x = 1, a = 0, b = 0, round = 0;
    while (mx.getCurrentThreadCpuTime() - start < budgetNs) {
      for (int i = 0; i < 20; i++, round++) {
        // Bresenham: after n calls, hotA has had percent * n / 100 of them.
        if ((round + 1) * percent / 100 > round * percent / 100) {
          x = hotA(x);
          a++;
        } else {
          x = coldB(x);
          b++;
        }
      }
    }
    sink = x;
    System.out.println("SHIFTHOG DONE hotA=" + a + " coldB=" + b);
  }
}
