// SPDX-License-Identifier: Apache-2.0
package demo;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * The bundled demo application: a small multi-threaded program with CPU-bound work, allocation,
 * lock contention and waiting, so every kind of profile has something to show.
 */
public final class DemoApp {
  private static final Object LEDGER_LOCK = new Object();
  private static long ledger;

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 4;
    CountDownLatch done = new CountDownLatch(3);
    Thread primes = new Thread(() -> { countPrimes(rounds * 150_000); done.countDown(); }, "primes");
    Thread words = new Thread(() -> { buildIndex(rounds * 20_000); done.countDown(); }, "indexer");
    Thread bank = new Thread(() -> { postToLedger(rounds * 20_000); done.countDown(); }, "ledger");
    primes.start();
    words.start();
    bank.start();
    postToLedger(rounds * 20_000);
    done.await();
    synchronized (LEDGER_LOCK) {
      LEDGER_LOCK.wait(20);
    }
    Thread.sleep(20);
    System.out.println("demo: ledger=" + ledger + " done");
  }

  static int countPrimes(int limit) {
    int count = 0;
    for (int n = 2; n < limit; n++) {
      if (isPrime(n)) count++;
    }
    return count;
  }

  static boolean isPrime(int n) {
    for (int d = 2; (long) d * d <= n; d++) {
      if (n % d == 0) return false;
    }
    return true;
  }

  static Map<String, List<Integer>> buildIndex(int words) {
    Map<String, List<Integer>> index = new HashMap<>();
    for (int i = 0; i < words; i++) {
      String word = "w" + (i * 7919 % 5000);
      index.computeIfAbsent(word, k -> new ArrayList<>()).add(i);
    }
    return index;
  }

  static void postToLedger(int entries) {
    for (int i = 0; i < entries; i++) {
      synchronized (LEDGER_LOCK) {
        ledger += i % 10;
      }
    }
  }
}
