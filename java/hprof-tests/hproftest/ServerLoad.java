// SPDX-License-Identifier: Apache-2.0
package hproftest;

/**
 * A small server's shape in one program: THREADS workers share ITERATIONS requests equally (so
 * each count of threads does the same work), and each request burns CPU in cpuWork(), allocates
 * RECORDS Records at the one allocation site in allocateRecords(), and updates a shared counter
 * under SharedLock.
 *
 * <p>Known answers: cpuWork is the hot method (with SPIN large enough); the Record site allocates
 * exactly ITERATIONS * RECORDS objects of 32 bytes (12-byte header + two longs, aligned to 8) and
 * keeps the last KEEP of each worker live to the end; and every worker's first entry of SharedLock is
 * contended: main holds the lock until all workers are blocked on it.
 *
 * <p>Arguments: THREADS [ITERATIONS [SPIN [RECORDS [KEEP]]]], defaults 8, 9600, 20000, 4, 16.
 * ITERATIONS must be a multiple of THREADS.
 */
public final class ServerLoad {
  static final class SharedLock {}

  /** 12-byte header + two longs = 28, aligned to 32 bytes (compressed class pointers). */
  static final class Record {
    long key;
    long value;
  }

  static final SharedLock LOCK = new SharedLock();
  static long shared;
  static volatile long sink;
  static Record[][] kept_;

  /** The hot method: a loop no JIT can drop (its result is published). */
  static long cpuWork(long seed, int spin) {
    long x = seed | 1;
    for (int i = 0; i < spin; i++) {
      x ^= x << 13;
      x ^= x >>> 7;
      x ^= x << 17;
    }
    return x;
  }

  /** The one allocation site of Record; the last kept.length stay reachable from `kept`. */
  static void allocateRecords(Record[] kept, long request, int records) {
    final int keep = kept.length;
    for (int r = 0; r < records; r++) {
      Record record = new Record(); // the allocation site
      record.key = request;
      record.value = r;
      kept[(int) ((request * records + r) % keep)] = record;
    }
  }

  static void lockedUpdate(long value) {
    synchronized (LOCK) {
      shared += value;
    }
  }

  static void worker(Record[] kept, int first, int count, int spin, int records) {
    lockedUpdate(first); // contended: main holds LOCK until every worker waits here
    long acc = 0;
    for (int request = first; request < first + count; request++) {
      acc += cpuWork(request, spin);
      allocateRecords(kept, request, records);
      lockedUpdate(1);
    }
    sink = acc;
  }

  public static void main(String[] args) throws Exception {
    final int threads = Integer.parseInt(args[0]);
    final int iterations = args.length > 1 ? Integer.parseInt(args[1]) : 9600;
    final int spin = args.length > 2 ? Integer.parseInt(args[2]) : 20000;
    final int records = args.length > 3 ? Integer.parseInt(args[3]) : 4;
    final int keep = args.length > 4 ? Integer.parseInt(args[4]) : 16;
    if (threads < 1 || iterations % threads != 0 || keep < 1) {
      throw new IllegalArgumentException("ITERATIONS must be a multiple of THREADS, KEEP >= 1");
    }
    final int each = iterations / threads;
    final Record[][] kept = new Record[threads][keep];
    kept_ = kept; // reachable to the end, for a heap dump at exit
    final Thread[] workers = new Thread[threads];
    final long start = System.nanoTime();
    synchronized (LOCK) {
      for (int t = 0; t < threads; t++) {
        final int index = t;
        workers[t] =
            new Thread(
                () -> worker(kept[index], index * each, each, spin, records), "Worker-" + t);
        workers[t].start();
      }
      // Every worker's first lockedUpdate blocks on LOCK while main holds it.
      for (Thread w : workers) {
        while (w.getState() != Thread.State.BLOCKED) {
          Thread.onSpinWait();
        }
      }
    }
    for (Thread w : workers) {
      w.join();
    }
    final long nanos = System.nanoTime() - start;
    // The dropped Records are garbage now: collect them so live counts show only the kept ones.
    System.gc();
    System.gc();
    long live = 0;
    for (Record[] k : kept) {
      for (Record r : k) {
        if (r != null) {
          live++;
        }
      }
    }
    System.out.println(
        "SERVERLOAD threads="
            + threads
            + " records="
            + ((long) iterations * records)
            + " kept="
            + live
            + " shared="
            + shared
            + " ms="
            + nanos / 1_000_000);
  }
}
