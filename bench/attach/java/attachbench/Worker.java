// SPDX-License-Identifier: Apache-2.0
package attachbench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.Map;

// A JVM that works only when asked, so that several can be measured one at a time on one machine.
// Each line "run MS" on stdin runs units of work (small methods, allocation, a map: code that
// method-entry instrumentation and allocation tracking would slow down) for MS ms of wall time
// and prints "UNITS n CPU-NS", the units done and the CPU time the whole process (every thread:
// the JIT's and the collector's too) used meanwhile; "stats" prints "STATS committed-heap-bytes
// collections collection-ms" (the heap's capacity now, the collections so far); "burn" starts a thread that works until stdin closes (for a profiler to
// sample). Warms up (JIT) for 3 s, then prints "ready".
public class Worker {
  static volatile long sink;

  static int step(int x) {
    return x * 31 + 7;
  }

  static long unit(Map<Integer, Integer> map, int seed) {
    long sum = 0;
    for (int i = 0; i < 200; i++) {
      int k = step(seed + i) & 1023;
      Integer v = map.get(k);
      map.put(k, v == null ? 1 : v + 1);
      sum += new int[] {k, i}.length + (v == null ? 0 : v);
    }
    return sum;
  }

  static long runFor(long millis) {
    Map<Integer, Integer> map = new HashMap<>();
    long end = System.nanoTime() + millis * 1_000_000L;
    long units = 0;
    int seed = 0;
    while (System.nanoTime() < end) {
      for (int i = 0; i < 100; i++) sink += unit(map, seed++);
      units += 100;
    }
    return units;
  }

  static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  public static void main(String[] args) throws Exception {
    runFor(3000);
    System.out.println("ready");
    System.out.flush();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    for (String line; (line = in.readLine()) != null; ) {
      String[] w = line.trim().split("\\s+");
      if (w[0].equals("run")) {
        long cpu = processCpuNanos();
        long units = runFor(Long.parseLong(w[1]));
        System.out.println("UNITS " + units + " " + (processCpuNanos() - cpu));
      } else if (w[0].equals("stats")) {
        long collections = 0, collectionMs = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
          collections += Math.max(0, gc.getCollectionCount());
          collectionMs += Math.max(0, gc.getCollectionTime());
        }
        System.out.println("STATS " + Runtime.getRuntime().totalMemory() + " " + collections + " "
            + collectionMs);
      } else if (w[0].equals("burn")) {
        Thread t = new Thread(() -> {
          while (true) sink += runFor(1000);
        }, "burner");
        t.setDaemon(true);
        t.start();
        System.out.println("burning");
      } else {
        System.out.println("UNKNOWN " + line);
      }
      System.out.flush();
    }
  }
}
