package hproftest;

/**
 * Many short threads, one after another: under format=b every thread is a START THREAD and an END
 * THREAD record, the events HPROF drops while a net= front end is not reading. Argument: the number
 * of threads; prints "THREADSTORM DONE n" when all have run.
 */
public final class ThreadStorm {
  public static void main(String[] args) throws Exception {
    final int n = Integer.parseInt(args[0]);
    final long[] sum = new long[1];
    for (int i = 0; i < n; i++) {
      final int k = i;
      Thread t = new Thread(() -> sum[0] += k, "storm-" + i);
      t.start();
      t.join();
    }
    System.out.println("THREADSTORM DONE " + n + " " + (sum[0] == (long) n * (n - 1) / 2));
  }
}
