package hproftest;

/**
 * Many monitor waits, fast: two threads hand a token back and forth with wait/notify, so under
 * monitor=y every hand-off is a WAIT and a WAITED line in the stream. Arguments: a number of
 * hand-offs ("WAITSTORM DONE n" when all are made), or "-t seconds" to run for that long and print
 * "WAITSTORM RATE handoffs seconds" (for benchmarks).
 */
public final class WaitStorm {
  private static final Object lock = new Object();
  private static long turn; // even: ping's turn, odd: pong's turn
  private static volatile boolean stop;

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
    final boolean timed = args.length == 2 && args[0].equals("-t");
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
    final double seconds = (System.nanoTime() - start) / 1e9;
    synchronized (lock) {
      if (timed) {
        System.out.println("WAITSTORM RATE " + turn + " " + seconds);
      } else {
        System.out.println("WAITSTORM DONE " + turn);
      }
    }
  }
}
