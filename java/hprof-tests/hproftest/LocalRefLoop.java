// SPDX-License-Identifier: Apache-2.0
package hproftest;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
import java.util.concurrent.CyclicBarrier;

/**
 * Threads that contend for a few locks, wait and are notified, sleep, and allocate, ITERATIONS
 * times, all inside one long-running frame (run() never returns until the end). Then, with every
 * thread still inside that frame (and inside a compiled one, step()), main writes a heap dump
 * (args[0]) through the VM's own dumper:
 * its ROOT JNI LOCAL records show the JNI local references each thread still holds. Every
 * reference a profiler's callbacks made on these threads and did not free would be among them.
 *
 * <p>args: dump file ("-": print READY and wait for a line on stdin instead, while another
 * dumper, e.g. HPROF on SIGQUIT, writes the dump), threads, iterations.
 */
public final class LocalRefLoop {
  static final Object[] LOCKS = {new Object(), new Object(), new Object()};
  static volatile Object sink;

  static void work(int id, int iterations, CyclicBarrier end) throws Exception {
    long sum = 0;
    for (int i = 0; i < iterations; i++) {
      sum += step(id, i, iterations, end);
      if (i % 200 == 0) Thread.sleep(1);
    }
    sink = sum;
  }

  // One iteration. Called on every iteration, so it runs compiled (with its small callees
  // inlined) long before the last one, from inside which the thread waits for the dump: the
  // workers' stacks then hold a compiled frame whose code embeds constants (the class, the locks,
  // the strings its callees name). JVMTI's FollowReferences reports such constants as JNI-local
  // roots, once per frame inlined there; the VM's own dumper does not list them.
  static long step(int id, int i, int iterations, CyclicBarrier end) throws Exception {
    long sum = 0;
    final Object lock = LOCKS[(id + i) % LOCKS.length];
    synchronized (lock) {
      // Held long enough that the others block on it (contended enter), and allocating.
      for (int k = 0; k < 50; k++) sum += new int[1 + (k & 7)].length;
      StringBuilder b = new StringBuilder();
      sum += alpha(b) + beta(b) + gamma(b) + delta(b) + epsilon(b) + zeta(b);
      // Constants of step()'s own code, whether or not the calls above were inlined.
      b.append("eta").append("theta").append("iota").append("kappa");
      b.append("lambda").append("mu").append("nu").append("xi");
      sink = b.append(id).append(i).toString();
      if (i % 50 == 0) {
        lock.notifyAll();
        lock.wait(1);
      }
    }
    if (i == iterations - 1) waitForTheDump(end);
    return sum;
  }

  // Small, so inlined into step()'s compiled code: one more frame of it on the stack.
  static void waitForTheDump(CyclicBarrier end) throws Exception {
    end.await();  // still inside this frame while the heap is dumped
    end.await();  // released after the dump
  }

  static int alpha(StringBuilder b) {
    return b.append("alpha").length();
  }

  static int beta(StringBuilder b) {
    return b.append("beta").length();
  }

  static int gamma(StringBuilder b) {
    return b.append("gamma").length();
  }

  static int delta(StringBuilder b) {
    return b.append("delta").length();
  }

  static int epsilon(StringBuilder b) {
    return b.append("epsilon").length();
  }

  static int zeta(StringBuilder b) {
    return b.append("zeta").length();
  }

  public static void main(String[] args) throws Exception {
    final String dump = args[0];
    final int threads = Integer.parseInt(args[1]);
    final int iterations = Integer.parseInt(args[2]);
    final CyclicBarrier end = new CyclicBarrier(threads + 1);
    Thread[] workers = new Thread[threads];
    for (int t = 0; t < threads; t++) {
      final int id = t;
      workers[t] =
          new Thread(
              () -> {
                try {
                  work(id, iterations, end);
                } catch (Exception e) {
                  throw new RuntimeException(e);
                }
              },
              "LocalRefWorker-" + t);
      workers[t].start();
    }
    end.await();
    if (dump.equals("-")) {
      // Someone else dumps the heap (a profiler, on SIGQUIT): wait for their word on stdin.
      System.out.println("READY");
      System.out.flush();
      new java.io.BufferedReader(new java.io.InputStreamReader(System.in)).readLine();
    } else {
      ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class).dumpHeap(dump, true);
    }
    end.await();
    for (Thread w : workers) w.join();
    System.out.println("LOCALREFS threads=" + threads + " iterations=" + iterations);
  }
}
