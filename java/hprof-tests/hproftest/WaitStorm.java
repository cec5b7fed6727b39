// SPDX-License-Identifier: Apache-2.0
package hproftest;

/**
 * Many monitor waits, fast: two threads hand a token back and forth with wait/notify, so under
 * monitor=y every hand-off is a WAIT and a WAITED line in the stream. Arguments: a number of
 * hand-offs ("WAITSTORM DONE n" when all are made), or "-t seconds [-c threads]" to run for that
 * long and print "WAITSTORM RATE handoffs seconds" (for benchmarks); with -c, that many threads
 * also compute beside the hand-offs and "WAITSTORM WORK units seconds" counts what they did: a
 * CPU-bound measure of the JVM's throughput that does not depend on how fast the kernel wakes a
 * waiting thread.
 */
public final class WaitStorm {
  private static final Object lock = new Object();
  private static long turn; // even: ping's turn, odd: pong's turn
  private static volatile boolean stop;
  private static volatile long sink;

  // One unit: a fixed amount of integer arithmetic the JIT cannot drop (the result is published).
  static long computeUnits() {
    long units = 0;
    long x = 0x9E3779B97F4A7C15L;
    while (!stop) {
      for (int i = 0; i < 100_000; i++) {
        x ^= x << 13;
        x ^= x >>> 7;
        x ^= x << 17;
      }
      sink = x;
      units++;
    }
    return units;
  }

  static long play(boolean ping, long handoffs) throws InterruptedException {
    long made = 0;
    synchronized (lock) {
      while (!stop && turn < handoffs) {
        while (!stop && (turn % 2 == 0) != ping && turn < handoffs) lock.wait();
        if (stop || turn >= handoffs) break;
        turn++;
        made++;
        lock.notifyAll();
      }
      lock.notifyAll();
    }
    return made;
  }

  public static void main(String[] args) throws Exception {
    final boolean timed = (args.length == 2 || args.length == 4) && args[0].equals("-t");
    final int computeThreads =
        timed && args.length == 4 && args[2].equals("-c") ? Integer.parseInt(args[3]) : 0;
    final long[] work = new long[computeThreads];
    final Thread[] computers = new Thread[computeThreads];
    for (int i = 0; i < computeThreads; i++) {
      final int slot = i;
      computers[i] = new Thread(() -> work[slot] = computeUnits(), "Compute-" + i);
    }
    final long handoffs = timed ? Long.MAX_VALUE : Long.parseLong(args[0]);
    Thread pong =
        new Thread(
            () -> {
              try {
                play(false, handoffs);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            },
            "Pong");
    pong.start();
    final long start = System.nanoTime();
    for (Thread t : computers) t.start();
    if (timed) {
      Thread timer =
          new Thread(
              () -> {
                try {
                  Thread.sleep((long) (Double.parseDouble(args[1]) * 1000));
                } catch (InterruptedException e) {
                  return;
                }
                stop = true;
                synchronized (lock) {
                  lock.notifyAll();
                }
              },
              "Timer");
      timer.start();
      play(true, handoffs);
      timer.join();
    } else {
      play(true, handoffs);
    }
    pong.join();
    long units = 0;
    for (int i = 0; i < computeThreads; i++) {
      computers[i].join();
      units += work[i];
    }
    final double seconds = (System.nanoTime() - start) / 1e9;
    synchronized (lock) {
      if (timed) {
        System.out.println("WAITSTORM RATE " + turn + " " + seconds);
        if (computeThreads > 0) System.out.println("WAITSTORM WORK " + units + " " + seconds);
      } else {
        System.out.println("WAITSTORM DONE " + turn);
      }
    }
  }
}
