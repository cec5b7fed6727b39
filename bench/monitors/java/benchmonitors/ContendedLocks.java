// SPDX-License-Identifier: Apache-2.0
package benchmonitors;

/**
 * A contended multi-threaded workload for monitor=y: args[0] threads each take one of args[1]
 * locks args[2] times, doing a little work and one small allocation inside, a little more
 * outside. Prints the elapsed wall time of the threaded part: "elapsed_ms=<n> entries=<n>".
 */
public final class ContendedLocks {
  static final class Lock {
    long value;
  }

  static volatile Object sink;

  static long spin(long x, int rounds) {
    for (int i = 0; i < rounds; i++) x = x * 6364136223846793005L + 1442695040888963407L;
    return x;
  }

  public static void main(String[] args) throws Exception {
    final int threads = Integer.parseInt(args[0]);
    final Lock[] locks = new Lock[Integer.parseInt(args[1])];
    for (int i = 0; i < locks.length; i++) locks[i] = new Lock();
    final int iterations = Integer.parseInt(args[2]);
    final Thread[] workers = new Thread[threads];
    final long start = System.nanoTime();
    for (int t = 0; t < threads; t++) {
      final int id = t;
      workers[t] =
          new Thread(
              () -> {
                long x = id;
                for (int i = 0; i < iterations; i++) {
                  final Lock lock = locks[(i * 7 + id) % locks.length];
                  synchronized (lock) {
                    lock.value = spin(lock.value + x, 200);
                    sink = new long[4];
                  }
                  x = spin(x, 400);
                }
                sink = x;
              },
              "Contender-" + t);
      workers[t].start();
    }
    for (Thread w : workers) w.join();
    final long elapsed = (System.nanoTime() - start) / 1000000;
    long entries = 0;
    for (Lock l : locks) entries += l.value != 0 ? 1 : 0;
    System.out.println("elapsed_ms=" + elapsed + " locks_used=" + entries);
  }
}
