// SPDX-License-Identifier: Apache-2.0
package hproftest;

/**
 * Many short threads, one after another: under format=b every thread is a START THREAD and an END
 * THREAD record, the events HPROF drops while a net= front end is not reading. Each thread has a
 * long name of its own (a UTF8 record each), so the stream outgrows socket buffers quickly.
 * Argument: the number of threads; prints "THREADSTORM DONE n true" when all have run.
 */
public final class ThreadStorm {
  public static void main(String[] args) throws Exception {
    final int n = Integer.parseInt(args[0]);
    final long[] sum = new long[1];
    final String padding = "-".repeat(400);
    for (int i = 0; i < n; i++) {
      final int k = i;
      Thread t = new Thread(() -> sum[0] += k, "storm-" + i + padding);
      t.start();
      t.join();
    }
    System.out.println("THREADSTORM DONE " + n + " " + (sum[0] == (long) n * (n - 1) / 2));
  }
}
