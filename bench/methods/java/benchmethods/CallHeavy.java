// SPDX-License-Identifier: Apache-2.0
package benchmethods;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** A call-heavy workload: small methods, collections, recursion, string building. */
public final class CallHeavy {
  static int fib(int n) {
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
  }

  static String word(int i) {
    return "w" + (i % 997);
  }

  public static void main(String[] args) {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 20;
    long start = System.nanoTime();
    long checksum = 0;
    for (int r = 0; r < rounds; r++) {
      checksum += fib(22);
      Map<String, List<Integer>> index = new HashMap<>();
      for (int i = 0; i < 20_000; i++) {
        index.computeIfAbsent(word(i), k -> new ArrayList<>()).add(i);
      }
      checksum += index.size();
    }
    System.out.println("checksum " + checksum + " ms " + (System.nanoTime() - start) / 1_000_000);
  }
}
