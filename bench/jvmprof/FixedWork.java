// SPDX-License-Identifier: Apache-2.0
// A fixed amount of CPU work for measuring an agent's cost: the same work every run (no budget or
// clock decides when it ends), so the process's CPU seconds differ between configurations only by
// what the agent adds, and by far less JIT and GC variance than javac's. Two threads each run
// ROUNDS rounds; a round walks recursive stacks of depth 1..8 ending in one of four leaf methods
// (32 distinct stacks per thread, so HPROF's periods carry rows for many traces) and allocates a
// little (a few short-lived arrays per round). Args: rounds per thread (default 4000).
public final class FixedWork {
  static volatile long sink;

  static long leafA(long x) {
    for (int i = 0; i < 20_000; i++) x = x * 6364136223846793005L + 1442695040888963407L;
    return x;
  }

  static long leafB(long x) {
    for (int i = 0; i < 20_000; i++) x ^= (x << 13) ^ (x >>> 7) ^ (x << 17);
    return x;
  }

  static long leafC(long x) {
    long[] a = new long[64];
    for (int i = 0; i < 20_000; i++) a[i & 63] += x + i;
    return a[7] ^ a[31];
  }

  static long leafD(long x) {
    double d = x;
    for (int i = 0; i < 10_000; i++) d = d * 1.0000001 + 0.5;
    return (long) d;
  }

  static long descend(int depth, int leaf, long x) {
    if (depth > 0) return descend(depth - 1, leaf, x + depth) + 1;
    switch (leaf) {
      case 0:
        return leafA(x);
      case 1:
        return leafB(x);
      case 2:
        return leafC(x);
      default:
        return leafD(x);
    }
  }

  static long work(int rounds, long seed) {
    long x = seed;
    for (int r = 0; r < rounds; r++) {
      for (int depth = 1; depth <= 8; depth++) x += descend(depth, (r + depth) & 3, x);
    }
    return x;
  }

  public static void main(String[] args) throws Exception {
    final int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 4000;
    Thread other = new Thread(() -> sink += work(rounds, 7), "FixedWork-2");
    other.start();
    sink += work(rounds, 3);
    other.join();
    System.out.println("FIXEDWORK rounds=" + rounds + " sink=" + sink);
  }
}
