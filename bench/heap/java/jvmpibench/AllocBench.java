// SPDX-License-Identifier: Apache-2.0
package jvmpibench;

/**
 * Allocation-heavy workload: small objects, arrays and strings, most short-lived, some kept a
 * while in a ring. Prints {@code WORKLOAD_MS <ms>} for the measured rounds (after one warm-up
 * round) and {@code ALLOCATIONS <n>}, the number of allocations the workload makes.
 */
public final class AllocBench {
  static final class Point {
    final int x;
    final int y;
    Object tag;

    Point(int x, int y) {
      this.x = x;
      this.y = y;
    }
  }

  static final Object[] ring = new Object[1 << 16];
  static long checksum;

  // 4 allocations per iteration (Point, int[], String + its byte[]).
  static void round(int iterations) {
    for (int i = 0; i < iterations; i++) {
      Point p = new Point(i, i >> 1);
      int[] a = new int[4 + (i & 7)];
      a[0] = i;
      p.tag = a;
      String s = Integer.toString(i & 0xffff);
      ring[i & (ring.length - 1)] = (i & 3) == 0 ? p : s;
      checksum += p.x + a.length + s.length();
    }
  }

  public static void main(String[] args) {
    final int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 500_000;
    final int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 4;
    round(iterations);
    long t0 = System.nanoTime();
    for (int r = 0; r < rounds; r++) round(iterations);
    long ms = (System.nanoTime() - t0) / 1_000_000;
    System.out.println("WORKLOAD_MS " + ms);
    System.out.println("ALLOCATIONS " + 4L * iterations * rounds);
    System.out.println("CHECKSUM " + checksum);
  }
}
