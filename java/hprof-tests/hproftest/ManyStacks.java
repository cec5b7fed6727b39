// SPDX-License-Identifier: Apache-2.0
package hproftest;

import java.util.SplittableRandom;

/**
 * New call stacks all the time: two threads burn CPU at the end of random paths through four
 * mutually recursive methods, ten calls deep (about a million distinct stacks), so a sampler keeps
 * finding stacks it has not seen. Runs for the seconds given (default 60), prints "READY" first.
 */
public final class ManyStacks {
  static volatile long sink;

  static long leaf(SplittableRandom r) {
    long x = r.nextLong();
    for (int i = 0; i < 20_000; i++) x = x * 6364136223846793005L + 1442695040888963407L;
    return x;
  }

  static long step(int depth, SplittableRandom r) {
    if (depth == 0) return leaf(r);
    switch (r.nextInt(4)) {
      case 0:
        return m0(depth - 1, r);
      case 1:
        return m1(depth - 1, r);
      case 2:
        return m2(depth - 1, r);
      default:
        return m3(depth - 1, r);
    }
  }

  static long m0(int depth, SplittableRandom r) {
    return step(depth, r) + 1;
  }

  static long m1(int depth, SplittableRandom r) {
    return step(depth, r) + 2;
  }

  static long m2(int depth, SplittableRandom r) {
    return step(depth, r) + 3;
  }

  static long m3(int depth, SplittableRandom r) {
    return step(depth, r) + 4;
  }

  public static void main(String[] args) throws Exception {
    final long end =
        System.nanoTime() + (long) ((args.length > 0 ? Double.parseDouble(args[0]) : 60) * 1e9);
    Runnable burn =
        () -> {
          SplittableRandom r = new SplittableRandom(Thread.currentThread().getId());
          while (System.nanoTime() < end) sink += step(10, r);
        };
    Thread other = new Thread(burn, "Burner");
    other.start();
    System.out.println("READY");
    burn.run();
    other.join();
    System.out.println("MANYSTACKS DONE");
  }
}
